import CResample

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Owns one malloc'd pixel buffer (from the C codecs or from Swift) and frees it once.
final class PixelStorage {
    let base: UnsafeMutablePointer<UInt8>
    let count: Int

    /// Takes ownership of a buffer allocated with malloc.
    init(adopting base: UnsafeMutablePointer<UInt8>, count: Int) {
        self.base = base
        self.count = count
    }

    /// Allocates `count` uninitialised bytes, or nil when memory cannot be had.
    init?(count: Int) {
        guard count > 0, let pointer = malloc(count) else { return nil }
        self.base = pointer.assumingMemoryBound(to: UInt8.self)
        self.count = count
    }

    deinit { free(base) }
}

/// An 8-bit RGB raster, rows packed (3 bytes a pixel, no padding).
struct Raster {
    let width: Int
    let height: Int
    let storage: PixelStorage

    var pixels: UnsafeMutablePointer<UInt8> { storage.base }
    var rowBytes: Int { width * 3 }

    /// A raster over `storage`, which must hold at least width × height × 3 bytes.
    init(width: Int, height: Int, storage: PixelStorage) {
        self.width = width
        self.height = height
        self.storage = storage
    }

    /// A new uninitialised raster, or `ImagingError.outOfMemory`.
    init(width: Int, height: Int) throws {
        guard width > 0, height > 0, let storage = PixelStorage(count: width * height * 3) else {
            throw ImagingError.outOfMemory(width: width, height: height)
        }
        self.init(width: width, height: height, storage: storage)
    }

    /// The raster as displayed under EXIF orientation 1...8 (other values: unchanged).
    /// One pass, source read through per-orientation strides; rows of the result are written in order.
    func oriented(_ orientation: Int) throws -> Raster {
        guard (2...8).contains(orientation) else { return self }
        let w = width, h = height
        let transposed = orientation >= 5
        let outWidth = transposed ? h : w, outHeight = transposed ? w : h
        // For display pixel (dx, dy) the stored pixel index is origin + dx * stepX + dy * stepY.
        let (origin, stepX, stepY): (Int, Int, Int) = switch orientation {
        case 2: (w - 1, -1, w)
        case 3: ((h - 1) * w + w - 1, -1, -w)
        case 4: ((h - 1) * w, 1, -w)
        case 5: (0, w, 1)
        case 6: ((h - 1) * w, -w, 1)
        case 7: ((h - 1) * w + w - 1, -w, -1)
        default: (w - 1, w, -1)
        }
        let out = try Raster(width: outWidth, height: outHeight)
        let source = pixels, target = out.pixels
        var dy = 0
        while dy < outHeight {
            var sourceIndex = origin + dy * stepY
            var targetOffset = dy * outWidth * 3
            var dx = 0
            while dx < outWidth {
                let s = sourceIndex * 3
                target[targetOffset] = source[s]
                target[targetOffset + 1] = source[s + 1]
                target[targetOffset + 2] = source[s + 2]
                sourceIndex += stepX
                targetOffset += 3
                dx += 1
            }
            dy += 1
        }
        return out
    }

    /// A copy reduced by an integer factor, each output pixel the mean of a factor × factor block
    /// (partial blocks at the right and bottom edges are dropped), in the CResample layer: the
    /// rows of a block summed column by column (vectorised), then each group of `factor` columns.
    func boxReduced(by factor: Int) throws -> Raster {
        guard factor > 1 else { return self }
        let outWidth = max(1, width / factor), outHeight = max(1, height / factor)
        let out = try Raster(width: outWidth, height: outHeight)
        let sums = UnsafeMutablePointer<UInt32>.allocate(capacity: outWidth * min(factor, width) * 3)
        defer { sums.deallocate() }
        dr_box_reduce(pixels, Int32(width), Int32(height), Int32(factor), out.pixels, sums)
        return out
    }
}

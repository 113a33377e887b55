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

    /// The raster transposed (pixel (x, y) becomes (y, x)): the one copy an orientation of 5 to
    /// 8 needs, the flips that complete it being folded into the readers (`orientationSteps`).
    func transposed() throws -> Raster {
        let out = try Raster(width: height, height: width)
        dr_transpose_rgb(pixels, Int32(width), Int32(height), out.pixels)
        return out
    }

    /// EXIF orientation 1...8 as a transpose (5 to 8) followed by flips of the transposed
    /// picture: `oriented(o)` is `transposed()` (when `transpose`), then mirrored left to right
    /// (`mirrorX`) and top to bottom (`mirrorY`).
    static func orientationSteps(_ orientation: Int) -> (transpose: Bool, mirrorX: Bool, mirrorY: Bool) {
        guard (2...8).contains(orientation) else { return (false, false, false) }
        return (orientation >= 5, [2, 3, 6, 7].contains(orientation), [3, 4, 7, 8].contains(orientation))
    }

    /// The orientation that is only the flips `mirrorX` and `mirrorY` (1 to 4).
    static func flipOrientation(mirrorX: Bool, mirrorY: Bool) -> Int {
        switch (mirrorX, mirrorY) {
        case (false, false): 1
        case (true, false): 2
        case (true, true): 3
        case (false, true): 4
        }
    }

    /// `oriented(flipOrientation(mirrorX:mirrorY:)).boxReduced(by: factor)`, without flipping the
    /// whole raster: the blocks that flipped picture keeps (its partial ones dropped at its right
    /// and bottom, here the left and top) are reduced in place, and only the small result flipped.
    func boxReduced(by factor: Int, mirrorX: Bool, mirrorY: Bool) throws -> Raster {
        let flips = Self.flipOrientation(mirrorX: mirrorX, mirrorY: mirrorY)
        guard factor > 1 else { return try oriented(flips) }
        // (An axis shorter than the factor is one block whole, the same either way.)
        let skipX = mirrorX && width >= factor ? width % factor : 0, skipY = mirrorY && height >= factor ? height % factor : 0
        guard skipX + skipY > 0 else { return try boxReduced(by: factor).oriented(flips) }
        let outWidth = max(1, width / factor), outHeight = max(1, height / factor)
        let out = try Raster(width: outWidth, height: outHeight)
        let sums = UnsafeMutablePointer<UInt32>.allocate(capacity: outWidth * min(factor, width) * 3)
        defer { sums.deallocate() }
        // Rows keep their stride (width): the reduction reads out_width × factor columns from the offset.
        dr_box_reduce(pixels + (skipY * width + skipX) * 3, Int32(width), Int32(height - skipY), Int32(factor), out.pixels, sums)
        return try out.oriented(flips)
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

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The filter taps of one axis: for each output pixel, the first source pixel and the
/// normalised Lanczos-3 weights of the `taps` source pixels from there (zero-padded, so every
/// output reads the same number of taps and the inner loops have a fixed trip count).
struct ResampleAxis {
    /// Lanczos lobes: 3 (the filter is zero beyond 3 source pixels, times the scale when shrinking).
    static let lobes = 3.0

    let outputSize: Int
    /// Weights per output pixel (the stride of `weights`), even.
    let taps: Int
    let starts: [Int]
    let weights: [Float]

    /// Taps for mapping the source span [windowStart, windowStart + windowLength) (in pixels of a
    /// source `sourceSize` long) onto `outputSize` pixels. Taps outside the window but inside the
    /// source are used, so a crop's edges are filtered like its middle.
    init(sourceSize: Int, windowStart: Double, windowLength: Double, outputSize: Int) {
        let scale = windowLength / Double(outputSize)
        // Shrinking widens the filter by the scale factor, so every source pixel contributes (no aliasing).
        let filterScale = max(scale, 1)
        let support = Self.lobes * filterScale
        // At most ceil(2 × support) pixel centres lie strictly inside the support; rounded up to even.
        var taps = Int((support * 2).rounded(.up))
        taps += taps % 2
        taps = max(2, min(taps, sourceSize + sourceSize % 2))
        var starts = [Int](repeating: 0, count: outputSize)
        var weights = [Float](repeating: 0, count: outputSize * taps)
        var scratch = [Double](repeating: 0, count: taps)
        for i in 0..<outputSize {
            let centre = windowStart + (Double(i) + 0.5) * scale
            // Pixel j (centre j + 0.5) contributes when |j + 0.5 - centre| < support.
            var first = max(Int((centre - support - 0.5).rounded(.down)) + 1, 0)
            var last = min(Int((centre + support - 0.5).rounded(.up)) - 1, sourceSize - 1)
            if last - first + 1 > taps { last = first + taps - 1 }
            var total = 0.0
            var count = 0
            if last >= first {
                for j in first...last {
                    let weight = Self.lanczos((Double(j) + 0.5 - centre) / filterScale)
                    scratch[j - first] = weight
                    total += weight
                    count += 1
                }
            }
            if count == 0 || abs(total) < 1e-9 {
                // Degenerate (a window outside the source): take the nearest source pixel.
                first = min(max(Int(centre), 0), sourceSize - 1)
                scratch[0] = 1
                total = 1
                count = 1
            }
            // Shift the start left near the far edge so that all `taps` reads stay inside the source.
            let start = max(0, min(first, sourceSize - taps))
            starts[i] = start
            for k in 0..<count where first - start + k < taps {
                weights[i * taps + first - start + k] = Float(scratch[k] / total)
            }
        }
        self.outputSize = outputSize
        self.taps = taps
        self.starts = starts
        self.weights = weights
    }

    /// The Lanczos-3 kernel, sinc(x) · sinc(x / 3) for |x| < 3, else 0.
    static func lanczos(_ x: Double) -> Double {
        let ax = abs(x)
        if ax < 1e-12 { return 1 }
        if ax >= lobes { return 0 }
        let px = Double.pi * ax
        return lobes * sin(px) * sin(px / lobes) / (px * px)
    }
}

/// A separable Lanczos-3 resampler over 8-bit RGB rasters.
///
/// Source rows are filtered horizontally four at a time into a ring of packed-RGB `Float` rows,
/// and each output row is the weighted sum of the ring rows it needs: only the rows one output
/// row reads are held, never a whole intermediate. Four rows are interleaved pixel by pixel
/// (12 floats: 4 rows × RGB) so that one horizontal tap is three full 4-wide vector operations;
/// the loops run over raw pointers with independent accumulators, written so that the
/// optimiser vectorises them and no add waits for the one before.
enum Resampler {
    /// Source rows filtered together by the horizontal pass.
    static let rowsPerGroup = 4

    /// A window of `source` (in its pixel coordinates, fractional allowed) resized to width × height.
    static func resample(
        _ source: Raster, windowX: Double, windowY: Double, windowWidth: Double, windowHeight: Double,
        width: Int, height: Int
    ) throws -> Raster {
        let horizontal = ResampleAxis(sourceSize: source.width, windowStart: windowX, windowLength: windowWidth, outputSize: width)
        let vertical = ResampleAxis(sourceSize: source.height, windowStart: windowY, windowLength: windowHeight, outputSize: height)
        let out = try Raster(width: width, height: height)
        let rowFloats = width * 3
        // Room for the taps of one output row plus a group computed ahead of it.
        let ringRows = vertical.taps + rowsPerGroup
        let ring = UnsafeMutablePointer<Float>.allocate(capacity: ringRows * rowFloats)
        defer { ring.deallocate() }
        let accumulator = UnsafeMutablePointer<Float>.allocate(capacity: rowFloats)
        defer { accumulator.deallocate() }
        let rowPointers = UnsafeMutablePointer<UnsafePointer<Float>>.allocate(capacity: vertical.taps)
        defer { rowPointers.deallocate() }
        let sourceRows = UnsafeMutablePointer<UnsafePointer<UInt8>>.allocate(capacity: rowsPerGroup)
        defer { sourceRows.deallocate() }
        let targetRows = UnsafeMutablePointer<UnsafeMutablePointer<Float>>.allocate(capacity: rowsPerGroup)
        defer { targetRows.deallocate() }
        // The source columns any output column reads, widened to floats once per group of rows.
        let firstColumn = horizontal.starts.first ?? 0
        let lastColumn = (horizontal.starts.max() ?? 0) + horizontal.taps
        let spanColumns = max(lastColumn - firstColumn, 1)
        let realColumns = min(spanColumns, source.width - firstColumn)
        let widened = UnsafeMutablePointer<Float>.allocate(capacity: spanColumns * 3 * rowsPerGroup)
        defer { widened.deallocate() }

        // The taps as raw buffers, read in the inner loops without bounds checks.
        let hStarts = UnsafeMutablePointer<Int>.allocate(capacity: horizontal.starts.count)
        defer { hStarts.deallocate() }
        hStarts.initialize(from: horizontal.starts, count: horizontal.starts.count)
        let hWeights = UnsafeMutablePointer<Float>.allocate(capacity: horizontal.weights.count)
        defer { hWeights.deallocate() }
        hWeights.initialize(from: horizontal.weights, count: horizontal.weights.count)
        let vWeights = UnsafeMutablePointer<Float>.allocate(capacity: vertical.weights.count)
        defer { vWeights.deallocate() }
        vWeights.initialize(from: vertical.weights, count: vertical.weights.count)

        let taps = vertical.taps
        var nextRow = 0
        for oy in 0..<height {
            let first = vertical.starts[oy]
            if nextRow < first { nextRow = first }
            while nextRow < first + taps {
                for r in 0..<rowsPerGroup {
                    // Rows past the end (zero-weight taps, or the group's overhang) repeat the last row.
                    let sourceRow = min(nextRow + r, source.height - 1)
                    sourceRows[r] = UnsafePointer(source.pixels + sourceRow * source.rowBytes + firstColumn * 3)
                    targetRows[r] = ring + ((nextRow + r) % ringRows) * rowFloats
                }
                widen(sourceRows, into: widened, count: realColumns, paddedTo: spanColumns)
                filterRows(
                    widened, columnOffset: firstColumn, into: targetRows, width: width,
                    starts: hStarts, weights: hWeights, taps: horizontal.taps)
                nextRow += rowsPerGroup
            }
            for k in 0..<taps { rowPointers[k] = UnsafePointer(ring + ((first + k) % ringRows) * rowFloats) }
            accumulate(rowPointers, weights: vWeights + oy * taps, taps: taps, count: rowFloats, into: accumulator)
            store(accumulator, into: out.pixels + oy * out.rowBytes, count: rowFloats)
        }
        return out
    }

    /// Four rows of 8-bit RGB to floats interleaved per pixel: [row 0 RGB, row 1 RGB, row 2 RGB,
    /// row 3 RGB], 12 floats a pixel; zero pixels from `count` to `paddedTo`.
    @inline(__always)
    static func widen(
        _ rows: UnsafeMutablePointer<UnsafePointer<UInt8>>, into target: UnsafeMutablePointer<Float>, count: Int, paddedTo: Int
    ) {
        for r in 0..<rowsPerGroup {
            let source = rows[r]
            var t = target + r &* 3
            var i = 0
            let end = count &* 3
            while i < end {
                // Through Int: the only integer-to-Float conversion that is not generic in a debug build.
                t[0] = Float(Int(source[i]))
                t[1] = Float(Int(source[i &+ 1]))
                t[2] = Float(Int(source[i &+ 2]))
                t += 12
                i &+= 3
            }
        }
        if paddedTo > count { memset(target + count * 12, 0, (paddedTo - count) * 12 * MemoryLayout<Float>.stride) }
    }

    /// Four interleaved rows through the horizontal taps. Each output pixel sums 12 lanes (three
    /// 4-wide vectors), even and odd taps apart so that two chains of adds run side by side.
    @inline(__always)
    static func filterRows(
        _ widened: UnsafePointer<Float>, columnOffset: Int, into targets: UnsafeMutablePointer<UnsafeMutablePointer<Float>>,
        width: Int, starts: UnsafePointer<Int>, weights: UnsafePointer<Float>, taps: Int
    ) {
        let t0 = targets[0], t1 = targets[1], t2 = targets[2], t3 = targets[3]
        var ox = 0
        while ox < width {
            var p = widened + (starts[ox] &- columnOffset) &* 12
            var v = weights + ox &* taps
            var a0: Float = 0, a1: Float = 0, a2: Float = 0, a3: Float = 0, a4: Float = 0, a5: Float = 0
            var a6: Float = 0, a7: Float = 0, a8: Float = 0, a9: Float = 0, a10: Float = 0, a11: Float = 0
            var b0: Float = 0, b1: Float = 0, b2: Float = 0, b3: Float = 0, b4: Float = 0, b5: Float = 0
            var b6: Float = 0, b7: Float = 0, b8: Float = 0, b9: Float = 0, b10: Float = 0, b11: Float = 0
            var k = 0
            while k < taps {
                let w = v[0], x = v[1]
                a0 += p[0] * w; a1 += p[1] * w; a2 += p[2] * w; a3 += p[3] * w
                a4 += p[4] * w; a5 += p[5] * w; a6 += p[6] * w; a7 += p[7] * w
                a8 += p[8] * w; a9 += p[9] * w; a10 += p[10] * w; a11 += p[11] * w
                b0 += p[12] * x; b1 += p[13] * x; b2 += p[14] * x; b3 += p[15] * x
                b4 += p[16] * x; b5 += p[17] * x; b6 += p[18] * x; b7 += p[19] * x
                b8 += p[20] * x; b9 += p[21] * x; b10 += p[22] * x; b11 += p[23] * x
                p += 24
                v += 2
                k &+= 2
            }
            let o = ox &* 3
            t0[o] = a0 + b0; t0[o &+ 1] = a1 + b1; t0[o &+ 2] = a2 + b2
            t1[o] = a3 + b3; t1[o &+ 1] = a4 + b4; t1[o &+ 2] = a5 + b5
            t2[o] = a6 + b6; t2[o &+ 1] = a7 + b7; t2[o &+ 2] = a8 + b8
            t3[o] = a9 + b9; t3[o &+ 1] = a10 + b10; t3[o &+ 2] = a11 + b11
            ox &+= 1
        }
    }

    /// The weighted sum of `taps` rows, up to eight rows per pass over the accumulator (most
    /// vertical filters have at most eight taps, so usually a single pass).
    @inline(__always)
    static func accumulate(
        _ rows: UnsafeMutablePointer<UnsafePointer<Float>>, weights: UnsafePointer<Float>, taps: Int, count: Int,
        into accumulator: UnsafeMutablePointer<Float>
    ) {
        memset(accumulator, 0, count * MemoryLayout<Float>.stride)
        var k = 0
        while k &+ 7 < taps {
            let s0 = rows[k], s1 = rows[k &+ 1], s2 = rows[k &+ 2], s3 = rows[k &+ 3]
            let s4 = rows[k &+ 4], s5 = rows[k &+ 5], s6 = rows[k &+ 6], s7 = rows[k &+ 7]
            let w0 = weights[k], w1 = weights[k &+ 1], w2 = weights[k &+ 2], w3 = weights[k &+ 3]
            let w4 = weights[k &+ 4], w5 = weights[k &+ 5], w6 = weights[k &+ 6], w7 = weights[k &+ 7]
            var i = 0
            while i < count {
                accumulator[i] += ((s0[i] * w0 + s1[i] * w1) + (s2[i] * w2 + s3[i] * w3))
                    + ((s4[i] * w4 + s5[i] * w5) + (s6[i] * w6 + s7[i] * w7))
                i &+= 1
            }
            k &+= 8
        }
        while k &+ 1 < taps {
            let s0 = rows[k], s1 = rows[k &+ 1]
            let w0 = weights[k], w1 = weights[k &+ 1]
            var i = 0
            while i < count {
                accumulator[i] += s0[i] * w0 + s1[i] * w1
                i &+= 1
            }
            k &+= 2
        }
    }

    /// Floats to bytes, clamped to 0...255 (Lanczos overshoots) and rounded to nearest. Adding
    /// 1.5 × 2^23 leaves the rounded integer in the low mantissa bits: a conversion without the
    /// range check of `UInt8(_: Float)`, so the loop vectorises.
    @inline(__always)
    static func store(_ accumulator: UnsafePointer<Float>, into target: UnsafeMutablePointer<UInt8>, count: Int) {
        let magic: Float = 12_582_912
        var i = 0
        while i < count {
            let value = accumulator[i]
            // Comparisons rather than min/max: those are generic calls in a debug build.
            let clamped = value < 0 ? 0 : (value > 255 ? 255 : value)
            target[i] = UInt8(truncatingIfNeeded: (clamped + magic).bitPattern)
            i &+= 1
        }
    }
}

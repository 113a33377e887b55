import CResample
import Synchronization

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
    /// Each output pixel's first source pixel, as CResample reads it.
    private(set) var starts: [Int32]
    private(set) var weights: [Float]
    /// The weights as the fixed-point passes hold them, and their fractional bits (0: they
    /// cannot, the float passes run): made once with the axis, which `cached` keeps.
    private(set) var fixedWeights: [Int16] = []
    private(set) var fixedBits: Int32 = 0

    /// Taps for mapping the source span [windowStart, windowStart + windowLength) (in pixels of a
    /// source `sourceSize` long) onto `outputSize` pixels. Taps outside the window but inside the
    /// source are used, so a crop's edges are filtered like its middle.
    ///
    /// `mirrored`: the source is read back to front, as if it had been flipped first (pixel i
    /// of the flipped source is pixel sourceSize - 1 - i); the window is in the flipped source's
    /// coordinates. The kernel is symmetric, so output i of the flipped axis is output
    /// outputSize - 1 - i of the unflipped axis over the mirrored window, with the same taps.
    init(sourceSize: Int, windowStart: Double, windowLength: Double, outputSize: Int, mirrored: Bool) {
        self.init(sourceSize: sourceSize,
                  windowStart: mirrored ? Double(sourceSize) - windowStart - windowLength : windowStart,
                  windowLength: windowLength, outputSize: outputSize)
        if mirrored, outputSize > 1 {
            var starts = self.starts, weights = self.weights
            for i in 0..<outputSize / 2 {
                let j = outputSize - 1 - i
                starts.swapAt(i, j)
                for k in 0..<taps { weights.swapAt(i * taps + k, j * taps + k) }
            }
            self.starts = starts
            self.weights = weights
        }
        var bits: Int32 = 0
        let count = outputSize * taps
        fixedWeights = weights.withUnsafeBufferPointer { weights in
            [Int16](unsafeUninitializedCapacity: count) { fixed, initialised in
                var axis = dr_resample_axis(output_size: Int32(outputSize), taps: Int32(taps), starts: nil,
                                            weights: weights.baseAddress, fixed_weights: nil, fixed_bits: 0)
                bits = dr_resample_quantise(&axis, fixed.baseAddress)
                initialised = count
            }
        }
        fixedBits = bits
    }

    init(sourceSize: Int, windowStart: Double, windowLength: Double, outputSize: Int) {
        let scale = windowLength / Double(outputSize)
        // Shrinking widens the filter by the scale factor, so every source pixel contributes (no aliasing).
        let filterScale = max(scale, 1)
        let support = Self.lobes * filterScale
        // At most ceil(2 × support) pixel centres lie strictly inside the support; rounded up to even.
        var taps = Int((support * 2).rounded(.up))
        taps += taps % 2
        taps = max(2, min(taps, sourceSize + sourceSize % 2))
        var starts = [Int32](repeating: 0, count: outputSize)
        var weights = [Float](repeating: 0, count: outputSize * taps)
        var scratch = [Double](repeating: 0, count: taps)
        // Through buffer pointers, the table read once: with every array access checked and the
        // table looked up per tap, making the taps cost about 1 % of a photo's CPU.
        Self.kernelTable.withUnsafeBufferPointer { table in
            starts.withUnsafeMutableBufferPointer { starts in
                weights.withUnsafeMutableBufferPointer { weights in
                    scratch.withUnsafeMutableBufferPointer { scratch in
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
                                    let weight = Self.kernel((Double(j) + 0.5 - centre) / filterScale, table: table)
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
                            starts[i] = Int32(start)
                            for k in 0..<count where first - start + k < taps {
                                weights[i * taps + first - start + k] = Float(scratch[k] / total)
                            }
                        }
                    }
                }
            }
        }
        self.outputSize = outputSize
        self.taps = taps
        self.starts = starts
        self.weights = weights
    }

    /// The axis as CResample reads it, valid inside `body`.
    func withCAxis<T>(_ body: (dr_resample_axis) -> T) -> T {
        starts.withUnsafeBufferPointer { starts in
            weights.withUnsafeBufferPointer { weights in
                fixedWeights.withUnsafeBufferPointer { fixed in
                    body(dr_resample_axis(output_size: Int32(outputSize), taps: Int32(taps), starts: starts.baseAddress,
                                          weights: weights.baseAddress, fixed_weights: fixed.isEmpty ? nil : fixed.baseAddress,
                                          fixed_bits: fixedBits))
                }
            }
        }
    }

    /// What an axis depends on.
    struct Key: Hashable {
        let sourceSize: Int
        let windowStart: Double
        let windowLength: Double
        let outputSize: Int
        let mirrored: Bool
    }

    /// The axes made lately, shared by the worker threads: photos of one size have the same
    /// `contain` variants' axes, whose taps were about 1 % of a photo's CPU to make again.
    /// A few dozen at most (a cover crop's window moves from photo to photo, so its axes seldom
    /// repeat); past that the table starts afresh.
    private static let recent = Mutex<[Key: ResampleAxis]>([:])
    static let recentLimit = 32

    /// `init(sourceSize:windowStart:windowLength:outputSize:mirrored:)`, or the same axis made
    /// lately.
    static func cached(sourceSize: Int, windowStart: Double, windowLength: Double, outputSize: Int, mirrored: Bool) -> ResampleAxis {
        let key = Key(sourceSize: sourceSize, windowStart: windowStart, windowLength: windowLength, outputSize: outputSize, mirrored: mirrored)
        if let axis = recent.withLock({ $0[key] }) { return axis }
        let axis = ResampleAxis(sourceSize: sourceSize, windowStart: windowStart, windowLength: windowLength, outputSize: outputSize,
                                mirrored: mirrored)
        recent.withLock { table in
            if table.count >= recentLimit { table.removeAll(keepingCapacity: true) }
            table[key] = axis
        }
        return axis
    }

    /// The Lanczos-3 kernel, sinc(x) · sinc(x / 3) for |x| < 3, else 0.
    static func lanczos(_ x: Double) -> Double {
        let ax = abs(x)
        if ax < 1e-12 { return 1 }
        if ax >= lobes { return 0 }
        let px = Double.pi * ax
        return lobes * sin(px) * sin(px / lobes) / (px * px)
    }

    /// Samples of the kernel per unit of x in `kernelTable`.
    static let tableResolution = 1024.0
    /// The kernel at x = i / tableResolution for x in 0...3 (and one zero past the end): the
    /// taps read it with linear interpolation, within 2e-6 of `lanczos` (two sines per tap
    /// were 2% of a photo's time). The weights are normalised after, so their sum is exact.
    static let kernelTable: [Double] = (0...Int(lobes * tableResolution) + 1).map { lanczos(Double($0) / tableResolution) }

    /// `lanczos(x)` from the table.
    static func kernel(_ x: Double) -> Double {
        kernelTable.withUnsafeBufferPointer { table in kernel(x, table: table) }
    }

    /// `lanczos(x)` from `table` (`kernelTable`, already at hand).
    @inline(__always)
    static func kernel(_ x: Double, table: UnsafeBufferPointer<Double>) -> Double {
        let position = abs(x) * tableResolution
        guard position < lobes * tableResolution else { return 0 }
        let index = Int(position)
        let fraction = position - Double(index)
        return table[index] + (table[index + 1] - table[index]) * fraction
    }
}

/// A separable Lanczos-3 resampler over 8-bit RGB rasters: the taps are made here, the passes
/// run in the CResample layer (vertical first, reading the source rows' bytes in place, then
/// the horizontal pass; in 16-bit fixed point on strips of 16 rows where the processor has
/// AVX2, in float on its baseline vector unit elsewhere).
enum Resampler {
    /// A window of `source` (in its pixel coordinates, fractional allowed) resized to width × height.
    /// With `mirrorX` or `mirrorY` the source is read as if flipped left to right or top to
    /// bottom first (the window in the flipped picture's coordinates): an orientation's flips
    /// cost no copy.
    ///
    /// With `transposed`, `source` is the picture stored turned a quarter: the picture is
    /// `source.transposed()` (then flipped as `mirrorX` and `mirrorY` say), and the window and
    /// the size are the upright picture's. Where the processor can (`transposesInPlace`), the
    /// passes run over the stored rows and write their output transposed: no transposed copy of
    /// the source is made (for a 12 MP phone photo held upright, 2.5 ms and 14 MB less a photo).
    static func resample(
        _ source: Raster, windowX: Double, windowY: Double, windowWidth: Double, windowHeight: Double,
        width: Int, height: Int, mirrorX: Bool = false, mirrorY: Bool = false, transposed: Bool = false
    ) throws -> Raster {
        if transposed {
            // The stored rows run along the upright picture's columns: its vertical axis is the
            // source's horizontal one.
            let horizontal = ResampleAxis.cached(sourceSize: source.width, windowStart: windowY, windowLength: windowHeight,
                                                 outputSize: height, mirrored: mirrorY)
            let vertical = ResampleAxis.cached(sourceSize: source.height, windowStart: windowX, windowLength: windowWidth,
                                               outputSize: width, mirrored: mirrorX)
            let out = try Raster(width: width, height: height)
            let code = passes(source, horizontal, vertical, into: out, dr_resample_transposed)
            if code == 0 { return out }
            guard code == 1 else { throw ImagingError.outOfMemory(width: width, height: height) }
            // This processor, or a degenerate window's weights: the transposed copy, then the passes.
            return try resample(try source.transposed(), windowX: windowX, windowY: windowY, windowWidth: windowWidth,
                                windowHeight: windowHeight, width: width, height: height, mirrorX: mirrorX, mirrorY: mirrorY)
        }
        let horizontal = ResampleAxis.cached(sourceSize: source.width, windowStart: windowX, windowLength: windowWidth,
                                             outputSize: width, mirrored: mirrorX)
        let vertical = ResampleAxis.cached(sourceSize: source.height, windowStart: windowY, windowLength: windowHeight,
                                           outputSize: height, mirrored: mirrorY)
        let out = try Raster(width: width, height: height)
        guard passes(source, horizontal, vertical, into: out, dr_resample) == 0 else {
            throw ImagingError.outOfMemory(width: width, height: height)
        }
        return out
    }

    /// The signature of `dr_resample` and `dr_resample_transposed`.
    typealias Passes = (UnsafePointer<UInt8>?, Int32, Int32, Int, UnsafePointer<dr_resample_axis>?,
                        UnsafePointer<dr_resample_axis>?, UnsafeMutablePointer<UInt8>?, Int,
                        UnsafeMutablePointer<Float>?, Int) -> Int32

    /// Runs `run` (one of CResample's entry points) over `source` into `out` with its scratch.
    private static func passes(_ source: Raster, _ horizontal: ResampleAxis, _ vertical: ResampleAxis, into out: Raster,
                               _ run: Passes) -> Int32 {
        horizontal.withCAxis { h in
            vertical.withCAxis { v in
                var h = h, v = v
                let floats = dr_resample_scratch_floats(Int32(source.width), &h, &v)
                let scratch = UnsafeMutablePointer<Float>.allocate(capacity: floats)
                defer { scratch.deallocate() }
                return run(source.pixels, Int32(source.width), Int32(source.height), source.rowBytes, &h, &v,
                           out.pixels, out.rowBytes, scratch, floats)
            }
        }
    }

    /// Whether `resample(transposed: true)` runs without a transposed copy here (AVX2 with
    /// AVX-512 VBMI, and no test's preference for other passes on this thread).
    static var transposesInPlace: Bool { dr_resample_transposes() != 0 }

    /// Whether the fixed-point AVX2 passes run on this processor (for the benchmark's report).
    static var usesAVX2: Bool { dr_resample_uses_avx2() != 0 }

    /// Whether their vertical pass runs on AVX-512 VNNI here.
    static var usesVNNI: Bool { dr_resample_uses_vnni() != 0 }

    /// `body` with the AVX2 passes without VNNI on this thread, where the processor has both, so
    /// that the tests check that path too.
    static func withPlainAVX2Passes<T>(_ body: () throws -> T) rethrows -> T {
        dr_resample_prefer_plain_avx2(1)
        defer { dr_resample_prefer_plain_avx2(0) }
        return try body()
    }

    /// `body` with the baseline float passes on this thread even where the processor has AVX2,
    /// so that the tests check both implementations.
    static func withBaselinePasses<T>(_ body: () throws -> T) rethrows -> T {
        dr_resample_prefer_baseline(1)
        defer { dr_resample_prefer_baseline(0) }
        return try body()
    }
}

import Foundation

/// A ThumbHash of a picture: about 25 bytes from which an app paints a blurred preview of the
/// right colours and aspect before the thumb arrives (the format published by Evan Wallace
/// with reference decoders for JavaScript, Swift, Kotlin and Rust).
///
/// Chosen over BlurHash because it carries the aspect ratio and more detail in fewer bytes, and
/// needs no size parameters: a client decodes it with nothing else. Pictures are opaque here
/// (transparency is flattened onto `imaging.background` before any variant is made), so no
/// alpha channel is encoded.
///
/// Encoding: the picture, at most 100×100, in an L (luminance), P (yellow–blue) and Q
/// (red–green) space; the low-frequency cosine coefficients of each channel, L with up to
/// 7×7 of them (fewer along the shorter side), P and Q 3×3, each channel's AC coefficients
/// scaled by its largest and quantised to 4 bits; a 5-byte header holds the DC terms, the
/// scales, the aspect and the flags.
public enum ThumbHash {
    /// The largest side of the raster a hash is computed from.
    static let maximumSide = 100

    /// The hash of an RGB raster of at most 100×100 pixels.
    static func encode(_ raster: Raster) -> [UInt8] {
        let w = raster.width, h = raster.height
        let count = w * h
        var l = [Double](repeating: 0, count: count)
        var p = [Double](repeating: 0, count: count)
        var q = [Double](repeating: 0, count: count)
        let pixels = raster.pixels
        // (1 ÷ 255) × value, not value ÷ 255: the reference's arithmetic, to its last bit.
        let unit = 1.0 / 255
        for i in 0..<count {
            let r = unit * Double(pixels[i * 3]), g = unit * Double(pixels[i * 3 + 1]), b = unit * Double(pixels[i * 3 + 2])
            l[i] = (r + g + b) / 3
            p[i] = (r + g) / 2 - b
            q[i] = r - g
        }
        let limit = 7.0
        let longest = Double(max(w, h))
        let lx = max(1, Int((limit * Double(w) / longest).rounded()))
        let ly = max(1, Int((limit * Double(h) / longest).rounded()))
        let lChannel = channel(l, width: w, height: h, nx: max(3, lx), ny: max(3, ly))
        let pChannel = channel(p, width: w, height: h, nx: 3, ny: 3)
        let qChannel = channel(q, width: w, height: h, nx: 3, ny: 3)

        let isLandscape = w > h
        let header24 = UInt32(quantise(63 * lChannel.dc))
            | UInt32(quantise(31.5 + 31.5 * pChannel.dc)) << 6
            | UInt32(quantise(31.5 + 31.5 * qChannel.dc)) << 12
            | UInt32(quantise(31 * lChannel.scale)) << 18
        let header16 = UInt16(isLandscape ? ly : lx)
            | UInt16(quantise(63 * pChannel.scale)) << 3
            | UInt16(quantise(63 * qChannel.scale)) << 9
            | (isLandscape ? 1 << 15 : 0)
        var hash: [UInt8] = [UInt8(header24 & 255), UInt8(header24 >> 8 & 255), UInt8(header24 >> 16),
                             UInt8(header16 & 255), UInt8(header16 >> 8)]
        var index = 0
        for ac in [lChannel.ac, pChannel.ac, qChannel.ac] {
            for value in ac {
                if index % 2 == 0 { hash.append(0) }
                hash[hash.count - 1] |= UInt8(quantise(15 * value)) << UInt8(index % 2 * 4)
                index += 1
            }
        }
        return hash
    }

    /// `value` rounded to the nearest whole number, halves up (as JavaScript's `Math.round`, the
    /// reference's), clamped at 0 (quantised fields are unsigned).
    private static func quantise(_ value: Double) -> Int {
        max(0, Int((value + 0.5).rounded(.down)))
    }

    /// The DC term, the AC terms mapped to 0...1, and their scale, of one channel's cosine
    /// transform, over the coefficients (cx, cy) with cx · ny < nx · (ny − cy) (a triangle).
    static func channel(_ values: [Double], width w: Int, height h: Int, nx: Int, ny: Int) -> (dc: Double, ac: [Double], scale: Double) {
        // The coefficients in the reference's order, and the cosines each reads.
        var pairs: [(cx: Int, cy: Int)] = []
        for cy in 0..<ny {
            var cx = 0
            while cx * ny < nx * (ny - cy) {
                pairs.append((cx, cy))
                cx += 1
            }
        }
        var fx = [Double](repeating: 0, count: nx * w), fy = [Double](repeating: 0, count: ny * h)
        for cx in 0..<nx {
            for x in 0..<w { fx[cx * w + x] = cos(Double.pi / Double(w) * Double(cx) * (Double(x) + 0.5)) }
        }
        for cy in 0..<ny {
            for y in 0..<h { fy[cy * h + y] = cos(Double.pi / Double(h) * Double(cy) * (Double(y) + 0.5)) }
        }
        // Each coefficient summed pixel by pixel in the reference's order, so that one on a
        // rounding boundary (a symmetric picture's 0.5) quantises as the reference's does; four
        // coefficients at a time, whose sums are independent, where one at a time waited on
        // each addition.
        var sums = [Double](repeating: 0, count: pairs.count)
        values.withUnsafeBufferPointer { values in
            fx.withUnsafeBufferPointer { fx in
                fy.withUnsafeBufferPointer { fy in
                    var first = 0
                    while first < pairs.count {
                        // A group of fewer than four repeats its last coefficient (its sum unused).
                        let group = (0..<4).map { pairs[min(first + $0, pairs.count - 1)] }
                        let x0 = fx.baseAddress! + group[0].cx * w, x1 = fx.baseAddress! + group[1].cx * w
                        let x2 = fx.baseAddress! + group[2].cx * w, x3 = fx.baseAddress! + group[3].cx * w
                        var f0 = 0.0, f1 = 0.0, f2 = 0.0, f3 = 0.0
                        for y in 0..<h {
                            let y0 = fy[group[0].cy * h + y], y1 = fy[group[1].cy * h + y]
                            let y2 = fy[group[2].cy * h + y], y3 = fy[group[3].cy * h + y]
                            let row = values.baseAddress! + y * w
                            for x in 0..<w {
                                let value = row[x]
                                f0 += value * x0[x] * y0
                                f1 += value * x1[x] * y1
                                f2 += value * x2[x] * y2
                                f3 += value * x3[x] * y3
                            }
                        }
                        for (k, f) in [f0, f1, f2, f3].enumerated() where first + k < pairs.count { sums[first + k] = f }
                        first += 4
                    }
                }
            }
        }
        var dc = 0.0
        var ac: [Double] = []
        var scale = 0.0
        for (k, pair) in pairs.enumerated() {
            let f = sums[k] / Double(w * h)
            if pair.cx > 0 || pair.cy > 0 {
                ac.append(f)
                scale = max(scale, abs(f))
            } else {
                dc = f
            }
        }
        if scale > 0 { ac = ac.map { 0.5 + 0.5 / scale * $0 } }
        return (dc, ac, scale)
    }

    /// The average colour a hash encodes, as 8-bit RGB: what an app paints before anything
    /// else, and what the HTML export uses as each picture's background.
    public static func averageRGB(_ hash: [UInt8]) -> (red: UInt8, green: UInt8, blue: UInt8)? {
        guard hash.count >= 5 else { return nil }
        let header = UInt32(hash[0]) | UInt32(hash[1]) << 8 | UInt32(hash[2]) << 16
        let l = Double(header & 63) / 63
        let p = Double(header >> 6 & 63) / 31.5 - 1
        let q = Double(header >> 12 & 63) / 31.5 - 1
        let b = l - 2.0 / 3 * p
        let r = (3 * l - b + q) / 2
        let g = r - q
        func byte(_ v: Double) -> UInt8 { UInt8(max(0, min(255, (v * 255).rounded()))) }
        return (byte(r), byte(g), byte(b))
    }

    /// The width ÷ height a hash encodes (approximate: the number of L coefficients along each side).
    public static func aspectRatio(_ hash: [UInt8]) -> Double? {
        guard hash.count >= 5 else { return nil }
        let header16 = UInt16(hash[3]) | UInt16(hash[4]) << 8
        let isLandscape = header16 >> 15 != 0
        let stored = Double(header16 & 7)
        let lx = isLandscape ? 7.0 : stored
        let ly = isLandscape ? stored : 7.0
        return lx / ly
    }
}

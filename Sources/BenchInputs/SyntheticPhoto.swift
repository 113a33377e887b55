import BenchKit
import Foundation

/// A synthetic photo-like PNG (gradients, texture, discs) for machines without the corpus.
/// Stored (uncompressed) deflate blocks keep the writer short; the size does not matter here.
public enum SyntheticPhoto {
    public static func png(width: Int, height: Int) -> [UInt8] {
        var raw = [UInt8]()
        raw.reserveCapacity((width * 3 + 1) * height)
        for y in 0..<height {
            raw.append(0)
            for x in 0..<width {
                let fx = Double(x) / Double(width), fy = Double(y) / Double(height)
                let texture = 40 * sin(Double(x) * 0.11) * cos(Double(y) * 0.07)
                let dx = fx - 0.6, dy = fy - 0.4
                let disc = dx * dx + dy * dy < 0.02 ? 90.0 : 0
                raw.append(UInt8(clamping: Int(90 + 120 * fx + texture + disc)))
                raw.append(UInt8(clamping: Int(60 + 150 * fy + texture / 2)))
                raw.append(UInt8(clamping: Int(200 - 120 * fx * fy - disc)))
            }
        }
        var zlib: [UInt8] = [0x78, 0x01]
        var offset = 0
        while offset < raw.count {
            let length = min(65535, raw.count - offset)
            zlib.append(offset + length == raw.count ? 1 : 0)
            zlib += [UInt8(length & 0xFF), UInt8(length >> 8), UInt8(~length & 0xFF), UInt8((~length >> 8) & 0xFF)]
            zlib += raw[offset..<(offset + length)]
            offset += length
        }
        zlib += bigEndian(adler32(raw))
        var png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        png += chunk("IHDR", bigEndian(UInt32(width)) + bigEndian(UInt32(height)) + [8, 2, 0, 0, 0])
        png += chunk("IDAT", zlib)
        png += chunk("IEND", [])
        return png
    }

    static func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
        let body = Array(type.utf8) + data
        return bigEndian(UInt32(data.count)) + body + bigEndian(crc32(body))
    }

    static func bigEndian(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8((value >> 16) & 0xFF), UInt8((value >> 8) & 0xFF), UInt8(value & 0xFF)]
    }

    static func adler32(_ data: [UInt8]) -> UInt32 {
        var a: UInt32 = 1, b: UInt32 = 0
        for byte in data {
            a = (a + UInt32(byte)) % 65521
            b = (b + a) % 65521
        }
        return (b << 16) | a
    }

    static func crc32(_ data: [UInt8]) -> UInt32 {
        var table = [UInt32](repeating: 0, count: 256)
        for n in 0..<256 {
            var c = UInt32(n)
            for _ in 0..<8 { c = c & 1 != 0 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
            table[n] = c
        }
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in data { crc = table[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8) }
        return crc ^ 0xFFFF_FFFF
    }
}

import Foundation
import SeededRandom

/// What the synthetic library draws, on top of the generator's raw bits.
extension SplitMix64 {
    /// A uniform number in 0..<1.
    public mutating func unit() -> Double {
        Double(next() >> 11) / Double(UInt64(1) << 53)
    }

    /// A uniform number in `range`.
    public mutating func uniform(_ range: ClosedRange<Double>) -> Double {
        range.lowerBound + unit() * (range.upperBound - range.lowerBound)
    }

    /// An exponentially distributed number with this mean.
    public mutating func exponential(mean: Double) -> Double {
        -mean * log(1 - unit())
    }

    /// A 64-digit hex string standing in for a SHA-256 (the moments' stable-order tie-break).
    public mutating func hash() -> String {
        (0..<4).map { _ in
            let hex = String(next(), radix: 16)
            return String(repeating: "0", count: 16 - hex.count) + hex
        }.joined()
    }
}

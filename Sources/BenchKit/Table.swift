import Foundation

/// Markdown tables on standard output, and the number formats they use.
public enum Table {
    /// Prints a Markdown table.
    public static func print(header: [String], rows: [[String]]) {
        Swift.print("| " + header.joined(separator: " | ") + " |")
        Swift.print("|" + String(repeating: "---|", count: header.count))
        for row in rows { Swift.print("| " + row.joined(separator: " | ") + " |") }
    }

    /// A number with `digits` decimals.
    public static func number(_ value: Double, _ digits: Int = 1) -> String {
        String(format: "%.\(digits)f", value)
    }

    /// Kilobytes as megabytes.
    public static func megabytes(kilobytes: Int) -> String {
        String(format: "%.0f MB", Double(kilobytes) / 1024)
    }

    /// Bytes as gigabytes or megabytes.
    public static func size(bytes: Int64) -> String {
        bytes >= 1 << 30 ? String(format: "%.2f GB", Double(bytes) / Double(1 << 30)) : String(format: "%.1f MB", Double(bytes) / Double(1 << 20))
    }

    /// A count in thousands when it is a whole number of them ("20k"), else as is.
    public static func count(_ value: Int) -> String {
        value >= 1000 && value % 1000 == 0 ? "\(value / 1000)k" : "\(value)"
    }

    /// A fraction as a percentage.
    public static func percent(_ fraction: Double) -> String {
        String(format: "%.1f %%", fraction * 100)
    }
}

import Foundation

/// Names near the file system's limit of 255 bytes a component: a photo's name must leave room
/// for what the spool adds beside it (` (2)` when the name is taken, `.json`, `.error.json`),
/// else a failing photo could not get its reason file, or not even be moved.
extension Spool {
    /// The longest name component (bytes) of a photo placed in `failed/` or renamed in
    /// `incoming/`: 255 less `.error.json` (11) and a number ` (NNNNNN)` (9).
    public static let longestPlacedName = 255 - 11 - 9

    /// `relative` with its last component shortened to `longestPlacedName` bytes when longer:
    /// the start of its stem (cut between characters), `~`, eight hex digits of a hash of the
    /// whole name (two long names sharing a start stay apart), and its extension when short.
    /// A name that fits is returned as it is.
    public static func fittingName(_ relative: String) -> String {
        let folder = (relative as NSString).deletingLastPathComponent
        let name = (relative as NSString).lastPathComponent
        guard name.utf8.count > longestPlacedName else { return relative }
        let ext = (name as NSString).pathExtension
        let keepsExtension = !ext.isEmpty && ext.utf8.count <= 16
        let stem = keepsExtension ? (name as NSString).deletingPathExtension : name
        let suffix = "~" + String(format: "%08x", hash(name)) + (keepsExtension ? "." + ext : "")
        let room = longestPlacedName - suffix.utf8.count
        var kept = String.UnicodeScalarView()
        var used = 0
        for scalar in stem.unicodeScalars {
            let width = UTF8.width(scalar)
            guard used + width <= room else { break }
            kept.append(scalar)
            used += width
        }
        let short = String(kept) + suffix
        return folder.isEmpty ? short : folder + "/" + short
    }

    /// FNV-1a of the name's bytes, folded to 32 bits: the same on every machine and run.
    private static func hash(_ name: String) -> UInt32 {
        var value: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in name.utf8 { value = (value ^ UInt64(byte)) &* 0x0000_0100_0000_01b3 }
        return UInt32(truncatingIfNeeded: value ^ (value >> 32))
    }
}

import Foundation

/// The characters no text field holds (a user id, a title, a time, a visibility): C0 controls
/// (NUL, newlines, tabs), DEL and C1 controls. A NUL would cut the value short wherever C
/// strings or the file system read it (`alice\0mallory` stored as `alice`); the others are
/// never part of a name or a title an app shows on one line. Shared by sidecars and every
/// field of the HTTP API and the command line (`FieldText`).
public enum ControlCharacters {
    /// Why `value` cannot be a field's value, naming its first control character by code and
    /// place; nil when it holds none.
    public static func problem(in value: String) -> String? {
        for (offset, scalar) in value.unicodeScalars.enumerated() where isControl(scalar) {
            let name = scalar.value == 0 ? "a NUL byte" : "a control character"
            return "must not hold control characters (got \(name), \(String(format: "U+%04X", scalar.value)), at character \(offset))"
        }
        return nil
    }

    /// C0 controls, DEL and C1 controls.
    public static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
    }
}

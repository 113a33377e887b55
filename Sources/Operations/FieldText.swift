import MetadataReading

/// Checks every text field a caller gives shares (an upload's form or query fields, a query of
/// the read API, a JSON body's strings): no control characters, and numbers in plain decimal.
public enum FieldText {
    /// Refuses a value holding a control character (`ControlCharacters`: NUL, a newline, DEL, a
    /// C1 control), naming the field and the first such character.
    public static func checkControls(_ field: String, _ value: String?) throws(FieldError) {
        guard let value, let problem = ControlCharacters.problem(in: value) else { return }
        throw FieldError(field, problem)
    }

    /// A number written in plain decimal (`-33.86`, `1e3`): digits, one sign, one point, one
    /// exponent. Swift's `Double("0x10")` reads hexadecimal (16) and `Double("nan")` and
    /// `Double("inf")` read non-numbers; none of them is what a form or a query means.
    public static func decimal(_ text: String) -> Double? {
        let bytes = Array(text.utf8)
        guard !bytes.isEmpty, bytes.count <= 64 else { return nil }
        var index = 0
        func digits() -> Int {
            let start = index
            while index < bytes.count, (0x30...0x39).contains(bytes[index]) { index += 1 }
            return index - start
        }
        if bytes[index] == 0x2B || bytes[index] == 0x2D { index += 1 }
        var mantissa = digits()
        if index < bytes.count, bytes[index] == 0x2E {
            index += 1
            mantissa += digits()
        }
        guard mantissa > 0 else { return nil }
        if index < bytes.count, bytes[index] == 0x65 || bytes[index] == 0x45 {
            index += 1
            if index < bytes.count, bytes[index] == 0x2B || bytes[index] == 0x2D { index += 1 }
            guard digits() > 0 else { return nil }
        }
        guard index == bytes.count, let value = Double(text), value.isFinite else { return nil }
        return value
    }
}

extension StringProtocol {
    /// Without leading and trailing spaces and tabs.
    public var trimmingSpaces: SubSequence {
        let start = firstIndex { $0 != " " && $0 != "\t" } ?? endIndex
        let end = lastIndex { $0 != " " && $0 != "\t" }.map(index(after:)) ?? start
        return self[start..<end]
    }

    /// Whether every character is an ASCII hexadecimal digit, letters in lowercase: the shape of
    /// hashes and ids, and so of names safe in a file path.
    public var isLowercaseHex: Bool {
        allSatisfy { $0.isASCII && $0.isHexDigit && !$0.isUppercase }
    }
}

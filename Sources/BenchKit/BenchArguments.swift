/// The command line of `darkroom-bench`: a subcommand, then `--flag value` pairs and bare flags.
public struct BenchArguments {
    /// The subcommand (`render`, `pipeline`, `moments`, `all`), if any.
    public let command: String?
    /// Everything after the subcommand.
    public let options: [String]

    public init(_ arguments: [String]) {
        command = arguments.first
        options = Array(arguments.dropFirst())
    }

    /// Whether a bare flag (such as `--no-metadata`) is present.
    public func has(_ flag: String) -> Bool {
        options.contains(flag)
    }

    /// The value after `flag`, if the flag is present.
    public func value(_ flag: String) -> String? {
        guard let index = options.firstIndex(of: flag), index + 1 < options.count else { return nil }
        return options[index + 1]
    }

    /// A whole number after `flag` in `range`, or `fallback` when the flag is absent.
    public func int(_ flag: String, default fallback: Int, in range: ClosedRange<Int> = 1...Int.max) throws -> Int {
        guard let text = value(flag) else { return fallback }
        guard let number = Int(text), range.contains(number) else {
            let bound = range.upperBound == Int.max ? "of at least \(range.lowerBound)" : "in \(range.lowerBound)...\(range.upperBound)"
            throw BenchError("\(flag) must be a whole number \(bound) (got \(text))")
        }
        return number
    }

    /// A comma-separated list of whole numbers after `flag`, or `fallback` when the flag is absent.
    public func ints(_ flag: String, default fallback: [Int]) throws -> [Int] {
        guard let text = value(flag) else { return fallback }
        let numbers = text.split(separator: ",").compactMap { Int($0) }
        guard !numbers.isEmpty, numbers.count == text.split(separator: ",").count, numbers.allSatisfy({ $0 >= 1 }) else {
            throw BenchError("\(flag) must be whole numbers of at least 1 separated by commas (got \(text))")
        }
        return numbers
    }

    /// Refuses any `--flag` not in `valueFlags` (followed by a value) or `bareFlags`.
    public func check(valueFlags: Set<String>, bareFlags: Set<String> = []) throws {
        var index = 0
        while index < options.count {
            let option = options[index]
            if valueFlags.contains(option) {
                guard index + 1 < options.count else { throw BenchError("\(option) needs a value") }
                index += 2
            } else if bareFlags.contains(option) {
                index += 1
            } else {
                throw BenchError("unknown option \(option) for \(command ?? "darkroom-bench"); see darkroom-bench help")
            }
        }
    }
}

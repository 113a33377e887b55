/// A benchmark that cannot run or whose run went wrong, in one line.
public struct BenchError: Error, CustomStringConvertible {
    public let description: String

    public init(_ description: String) {
        self.description = description
    }
}

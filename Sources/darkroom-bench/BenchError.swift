/// A benchmark that cannot run or whose run went wrong, in one line.
struct BenchError: Error, CustomStringConvertible {
    let description: String

    init(_ description: String) {
        self.description = description
    }
}

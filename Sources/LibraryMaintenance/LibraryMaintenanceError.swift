import Failures

/// Why `library copy` or `library check` could not do its work at all (a failure of one object
/// is an outcome of the summary instead): one line saying what and what to do.
public struct LibraryMaintenanceError: Error, TransientAwareError, CustomStringConvertible, Sendable, Equatable {
    public var description: String
    public var category: FailureCategory
    /// True when trying again later may succeed (a bucket or catalog that did not answer).
    public var isTransient: Bool

    public init(_ description: String, category: FailureCategory = .storage, isTransient: Bool = false) {
        self.description = description
        self.category = category
        self.isTransient = isTransient
    }

    /// A local file that could not be read.
    static func localFile(_ path: String, _ reason: String) -> LibraryMaintenanceError {
        LibraryMaintenanceError("\(path): \(reason)")
    }
}

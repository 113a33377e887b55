import Catalog
import Failures
import Imaging
import Storage

/// Why a photo could not be processed, what kind of failure it is, and whether trying again
/// may help.
public struct ProcessingFailure: CategorizedError, CustomStringConvertible, Sendable {
    /// One line: what failed and what to do.
    public var reason: String
    /// What kind of failure it is: what metrics, `status` and the import report group by.
    public var category: FailureCategory
    /// True for conditions that may pass (disk full, catalog busy); false for the photo itself.
    public var isTransient: Bool
    /// True when the catalog's database could not be reached (a restart, a failover, a path that
    /// stopped answering): no fault of the photo's, and no try of it either.
    public var isOutage = false

    public var description: String { reason }

    /// A failure that trying again will not cure.
    public static func permanent(_ reason: String, _ category: FailureCategory) -> ProcessingFailure {
        ProcessingFailure(reason: reason, category: category, isTransient: false)
    }

    public init(reason: String, category: FailureCategory, isTransient: Bool) {
        self.reason = reason
        self.category = category
        self.isTransient = isTransient
    }

    /// Any error thrown while processing one photo, with the category it was made with.
    public init(_ error: any Error) {
        switch error {
        case let failure as ProcessingFailure: self = failure
        case let error as FileSystemError: self.init(reason: error.reason, category: error.category, isTransient: error.isTransient)
        case let error as CatalogError:
            self.init(reason: error.description, category: error.category, isTransient: error.isTransient)
            if case .unavailable = error { isOutage = true }
        case let error as any TransientAwareError:
            self.init(reason: "\(error)", category: error.category, isTransient: error.isTransient)
        default: self.init(reason: "\(error)", category: FailureCategory(of: error), isTransient: false)
        }
    }
}

import Failures

/// A library store that cannot be opened as the settings say: one line naming what is missing
/// or wrong. A `configuration` failure, never transient.
public struct LibraryStoreError: Error, TransientAwareError, CustomStringConvertible, Sendable, Equatable {
    public var description: String

    public init(description: String) {
        self.description = description
    }

    public var category: FailureCategory { .configuration }
    public var isTransient: Bool { false }
}

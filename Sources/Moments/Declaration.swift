import Foundation

/// Whether the backend is creating a place or moment or changing one it made: a create with an
/// id already taken is refused, never turned into an update, so that a retried request or a
/// backend bug cannot hand one user's moment to another.
public enum Declaration: Sendable, Equatable {
    /// A new record: its id must be free.
    case create
    /// A change to an existing record: its id must exist.
    case update

    /// The ids the backend may give its places and moments: 1 to 2^53 - 1, the largest integer
    /// a JSON number read as a double (every JavaScript client) still holds exactly. Negative
    /// ids are the worker's own.
    public static let backendIds: ClosedRange<Int64> = 1...9_007_199_254_740_991
}

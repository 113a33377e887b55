import Foundation
import Failures
import GRDB
import Moments

/// A catalog failure, classified so that the worker knows whether to retry.
public enum CatalogError: CategorizedError, CustomStringConvertible, Sendable, Equatable {
    /// Another writer held the database for longer than the busy timeout: retry later.
    case busy(path: String)
    /// The disk is full: retry once space is freed.
    case diskFull(path: String)
    /// The database file could not be read or written for now (an I/O error of its disk, a file
    /// made read-only or immutable, a journal that cannot be opened): retried with backoff, and
    /// once the catalog is writable again the photo goes through.
    case ioError(path: String, message: String)
    /// The file is not a catalog, or is damaged.
    case corrupt(path: String, message: String)
    /// A request the catalog refuses (an invalid place, an unknown place): one line.
    case refused(String)
    /// A request the moment rules refuse (unknown moment, not the creator, a cover picture from
    /// elsewhere), with the rule's own error so that callers can tell the cases apart.
    case rule(MomentError)
    /// Any other failure, with the database's message.
    case other(String)
    /// A catalog server that could not be reached or answered with a failure that may pass
    /// (PostgreSQL down, a network cut): the work is tried again.
    case unavailable(String)
    /// The queue job this work was done under is no longer this worker's: its lease lapsed and
    /// another worker took the photo. Nothing was committed; the other worker finishes it.
    case leaseLost(String)

    /// Any error of a catalog operation on the database at `path`, by what it is.
    public init(_ error: any Error, path: String) {
        if let error = error as? CatalogError {
            self = error
            return
        }
        if let error = error as? MomentError {
            self = .rule(error)
            return
        }
        guard let error = error as? DatabaseError else {
            self = .other("\(error)")
            return
        }
        switch error.resultCode {
        case .SQLITE_BUSY, .SQLITE_LOCKED: self = .busy(path: path)
        case .SQLITE_FULL: self = .diskFull(path: path)
        case .SQLITE_IOERR, .SQLITE_READONLY: self = .ioError(path: path, message: error.message ?? "\(error)")
        case .SQLITE_CORRUPT, .SQLITE_NOTADB: self = .corrupt(path: path, message: error.message ?? "\(error)")
        default: self = .other(error.message ?? "\(error)")
        }
    }

    /// True when the same operation may succeed if tried again later.
    public var isTransient: Bool {
        switch self {
        case .busy, .diskFull, .ioError, .unavailable: true
        case .corrupt, .refused, .rule, .other, .leaseLost: false
        }
    }

    /// What kind of failure this is: a full disk is the storage's, even under the catalog; a
    /// request the catalog or the moment rules refuse is the input's.
    public var category: FailureCategory {
        switch self {
        case .busy, .ioError, .corrupt, .other, .unavailable, .leaseLost: .catalog
        case .diskFull: .storage
        case .refused, .rule: .badInput
        }
    }

    /// The same without the catalog's path or the database's own message, for answers to
    /// clients; the log keeps `description`.
    public var publicDescription: String {
        switch self {
        case .busy: "the catalog is busy (another writer holds it); try again shortly"
        case .diskFull: "the catalog's disk is full; try again once space is freed"
        case .ioError: "the catalog cannot be written for now (an I/O error or a read-only file); try again shortly"
        case .corrupt: "the catalog is damaged; the server's log has the details under this answer's request_id"
        case .other: "catalog error: the server's log has the details under this answer's request_id"
        case .unavailable: "the catalog's database cannot be reached; try again shortly"
        case .leaseLost: "another worker took this photo over; it finishes it"
        case .refused, .rule: description
        }
    }

    public var description: String {
        switch self {
        case .busy(let path): "catalog \(path) is busy (another writer holds it)"
        case .diskFull(let path): "disk full while writing catalog \(path); free space"
        case .ioError(let path, let message): "cannot write catalog \(path) (\(message)); check its disk and that the file is writable"
        case .corrupt(let path, let message): "catalog \(path) is damaged or not a Darkroom catalog (\(message)); restore it from a backup or point catalog.path elsewhere"
        case .refused(let message): message
        case .rule(let error): error.description
        case .other(let message): "catalog error: \(message)"
        case .unavailable(let message), .leaseLost(let message): message
        }
    }
}

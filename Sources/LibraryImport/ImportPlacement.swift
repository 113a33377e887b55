import Foundation

/// How `darkroom import` places each original in the library, and what becomes of the source.
public enum ImportPlacement: String, Sendable, Codable, CaseIterable {
    /// Copy the original into the library; the source stays as it is (the default).
    case copy
    /// Place the original in the library (a hard link on the same file system, else a copy),
    /// then delete the source once its catalog entry has committed.
    case move
    /// Hard-link the original into the library when it is on the same file system (no second
    /// copy of the bytes), else copy it; the source stays as it is.
    case link

    /// Whether the original should be hard-linked when the file systems allow it.
    public var prefersLink: Bool { self != .copy }
}

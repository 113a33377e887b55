import Catalog
import GRDB
import PostgresCatalog

/// One library path a catalog names: a picture's original, or one of its variants.
public struct LibraryReference: Sendable, Equatable {
    /// Relative to the library (`originals/ab/cd/<sha256>.jpg`, `variants/thumb/ab/cd/<sha256>.jpg`).
    public var path: String
    public var pictureId: Int64
    /// The variant's name (`thumb`...); nil for the original.
    public var variant: String?
    /// The size the catalog records for it (the original's `byte_size`, the variant's `bytes`).
    public var size: Int64

    public init(path: String, pictureId: Int64, variant: String?, size: Int64) {
        self.path = path
        self.pictureId = pictureId
        self.variant = variant
        self.size = size
    }

    /// `original` or `variant thumb`, for lines that name it.
    public var what: String { variant.map { "variant \($0)" } ?? "original" }
}

/// Every library path of a catalog, by path.
public struct LibraryReferences: Sendable {
    /// Each path once (content addressing gives every picture its own paths), in path order.
    public let all: [LibraryReference]
    public let byPath: [String: LibraryReference]
    /// How many pictures and variants the catalog holds.
    public let pictures: Int
    public let variants: Int

    public init(_ references: [LibraryReference]) {
        var byPath: [String: LibraryReference] = [:]
        for reference in references where byPath[reference.path] == nil { byPath[reference.path] = reference }
        self.byPath = byPath
        all = byPath.values.sorted { $0.path < $1.path }
        pictures = Set(references.map(\.pictureId)).count
        variants = references.filter { $0.variant != nil }.count
    }

    public func contains(_ path: String) -> Bool { byPath[path] != nil }
}

/// A catalog that can list every path of the library it names in one go: each picture's
/// original and variants.
///
/// `CatalogStore` has no such call (only a picture's variants by id, and pages of a moment's
/// pictures, which never reach pictures in no moment), so the two stores are read here through
/// what each offers publicly: one snapshot of the SQLite file; `allPictures` and each picture's
/// variants in PostgreSQL (one query per picture: a `libraryReferences()` of `CatalogStore`
/// would read them in two).
public protocol LibraryReferenceReading: Sendable {
    /// Every original and variant the catalog names.
    func libraryReferences() throws(CatalogError) -> LibraryReferences
}

extension Catalog: LibraryReferenceReading {
    public func libraryReferences() throws(CatalogError) -> LibraryReferences {
        let references = try read { db -> [LibraryReference] in
            var references: [LibraryReference] = []
            let pictures = try Row.fetchCursor(db, sql: "SELECT id, original_path, byte_size FROM pictures")
            while let row = try pictures.next() {
                references.append(LibraryReference(path: row["original_path"], pictureId: row["id"], variant: nil, size: row["byte_size"]))
            }
            let variants = try Row.fetchCursor(db, sql: "SELECT picture_id, name, path, bytes FROM variants")
            while let row = try variants.next() {
                references.append(LibraryReference(path: row["path"], pictureId: row["picture_id"], variant: row["name"], size: row["bytes"]))
            }
            return references
        }
        return LibraryReferences(references)
    }
}

extension PostgresCatalog: LibraryReferenceReading {
    public func libraryReferences() throws(CatalogError) -> LibraryReferences {
        var references: [LibraryReference] = []
        for picture in try allPictures() {
            guard let id = picture.id else { continue }
            references.append(LibraryReference(path: picture.originalPath, pictureId: id, variant: nil, size: picture.byteSize))
            for variant in try variants(ofPicture: id) {
                references.append(LibraryReference(path: variant.path, pictureId: id, variant: variant.name, size: variant.bytes))
            }
        }
        return LibraryReferences(references)
    }
}

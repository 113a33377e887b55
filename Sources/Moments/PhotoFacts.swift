import Foundation

/// What the moment rules need to know about one picture: who, when, where, and how good a cover.
public struct PhotoFacts: Sendable, Hashable, Codable, Identifiable {
    /// The catalog's picture id.
    public var id: Int64
    /// The content hash (SHA-256, hex). The tie-break for everything order-sensitive: ids
    /// depend on arrival order, keys do not.
    public var key: String
    /// The uploader's user id, if known.
    public var author: String?
    /// The trusted capture instant; nil when the picture has none.
    public var capturedAt: Date?
    /// Where the picture was taken; nil when unknown.
    public var location: Coordinate?
    /// The moment id the uploader asked for (sidecar), if any.
    public var requestedMomentId: Int64?
    /// The picture's cover score, 0...1 (see `CoverScore`); the engine clamps it on ingest.
    public var coverScore: Double

    /// Facts from their fields.
    public init(id: Int64, key: String, author: String? = nil, capturedAt: Date? = nil,
                location: Coordinate? = nil, requestedMomentId: Int64? = nil, coverScore: Double = 0) {
        self.id = id
        self.key = key
        self.author = author
        self.capturedAt = capturedAt
        self.location = location
        self.requestedMomentId = requestedMomentId
        self.coverScore = coverScore
    }

    /// Time and location, when the picture has both: what place-and-time rules need.
    public var timeAndPlace: (time: Date, location: Coordinate)? {
        guard let capturedAt, let location, location.isValid else { return nil }
        return (capturedAt, location)
    }
}

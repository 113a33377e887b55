import Foundation

/// Who may see and contribute to a moment.
public enum Visibility: String, Sendable, Codable, CaseIterable {
    /// Open to anyone.
    case `public`
    /// Only the creator and the invitees.
    case `private`
}

/// Where a moment came from.
public enum MomentKind: String, Sendable, Codable, CaseIterable {
    /// Created by the backend (a detailed or quick moment of the app); its id is the backend's.
    case declared
    /// Formed by the worker from one author's photos close in place and time.
    case automatic
}

/// Who chose a moment's cover picture.
public enum CoverSource: String, Sendable, Codable, CaseIterable {
    /// The moment's creator: the worker never changes it.
    case creator
    /// The worker's cover policy.
    case policy
    /// Nobody: the moment has no picture yet.
    case none
}

/// A moment: a place and a time window, with a creator, a visibility, invitees and a cover.
public struct Moment: Sendable, Hashable, Codable, Identifiable {
    /// The catalog's moment id (for declared moments, the backend's).
    public var id: Int64
    /// Declared by the backend or formed automatically.
    public var kind: MomentKind
    /// The place the moment happens at.
    public var placeId: Int64
    /// Start of the window (inclusive).
    public var start: Date
    /// End of the window (inclusive); never before `start`.
    public var end: Date
    /// The user who created the moment (the author, for automatic moments).
    public var creator: String?
    /// Public or private.
    public var visibility: Visibility
    /// Users invited to a private moment.
    public var invitees: Set<String>
    /// The moment's title, if any.
    public var title: String?
    /// The cover picture's id, nil while the moment has none.
    public var coverPictureId: Int64?
    /// Who chose the cover.
    public var coverSource: CoverSource
    /// Why the cover is this picture, in words ("set by creator", "first picture", …).
    public var coverReason: String?

    /// A moment from its fields; the cover defaults to none.
    public init(id: Int64, kind: MomentKind, placeId: Int64, start: Date, end: Date,
                creator: String? = nil, visibility: Visibility = .public, invitees: Set<String> = [],
                title: String? = nil, coverPictureId: Int64? = nil, coverSource: CoverSource = .none,
                coverReason: String? = nil) {
        self.id = id
        self.kind = kind
        self.placeId = placeId
        self.start = start
        self.end = end
        self.creator = creator
        self.visibility = visibility
        self.invitees = invitees
        self.title = title
        self.coverPictureId = coverPictureId
        self.coverSource = coverSource
        self.coverReason = coverReason
    }

    /// Whether `author` is the creator or an invitee. A picture without an author is nobody's.
    public func isOwnOrInvited(_ author: String?) -> Bool {
        guard let author else { return false }
        return author == creator || invitees.contains(author)
    }

    /// Whether a photo by `author` may be assigned to this moment: anyone's for a public
    /// moment, only the creator's and invitees' for a private one.
    public func admits(_ author: String?) -> Bool {
        visibility == .public || isOwnOrInvited(author)
    }

    /// Whether `time` lies in the window widened by the rules' grace, boundaries included.
    public func window(contains time: Date, rules: MomentRules) -> Bool {
        start.addingTimeInterval(-rules.graceBefore) <= time && time <= end.addingTimeInterval(rules.graceAfter)
    }
}

/// A moment together with its place, as the store returns candidates for matching.
public struct PlacedMoment: Sendable, Hashable {
    /// The moment.
    public var moment: Moment
    /// Its place (`moment.placeId == place.id`).
    public var place: Place

    /// A moment with its place.
    public init(moment: Moment, place: Place) {
        self.moment = moment
        self.place = place
    }

    /// Whether a photo taken at `location` and `time` falls in this moment's place and window,
    /// whoever took it.
    public func matches(location: Coordinate, time: Date, rules: MomentRules) -> Bool {
        place.contains(location) && moment.window(contains: time, rules: rules)
    }
}

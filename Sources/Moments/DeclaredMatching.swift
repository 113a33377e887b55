import Foundation

/// What the declared-moment rules decide for one photo.
public struct DeclaredResolution: Sendable, Hashable {
    /// The declared moment the photo joins; nil: none (it goes on to the automatic rule).
    public var momentId: Int64?
    /// The private moments it matched without being admitted: it is their candidate.
    public var candidates: Set<Int64>

    /// A resolution from its parts.
    public init(momentId: Int64?, candidates: Set<Int64>) {
        self.momentId = momentId
        self.candidates = candidates
    }
}

/// The declared-moment rules, as a pure function of one photo and the declared moments.
public enum DeclaredMatching {
    /// Decides where a photo goes among declared moments.
    ///
    /// - A requested moment (sidecar) that admits the author wins outright; one that does
    ///   not records the photo as its candidate.
    /// - Otherwise, among declared moments whose circle and window (with grace) hold the photo,
    ///   those admitting the author compete: the author's own or invited first, then
    ///   the smallest distance/radius ratio, then the latest start, then the lowest id. Private
    ///   ones that do not admit the author record it as a candidate.
    /// - Parameters:
    ///   - photo: the photo.
    ///   - requested: the declared moment named by `photo.requestedMomentId`, if it exists.
    ///   - nearby: declared moments that may hold the photo (a superset; filtered exactly here).
    ///   - rules: grace before and after.
    public static func resolve(_ photo: PhotoFacts, requested: Moment?, nearby: [PlacedMoment],
                               rules: MomentRules) -> DeclaredResolution {
        var candidates = Set<Int64>()
        var winner: Int64?
        if let requested, requested.kind == .declared, requested.id == photo.requestedMomentId {
            if requested.admits(photo.author) { winner = requested.id } else { candidates.insert(requested.id) }
        }
        if let tp = photo.timeAndPlace {
            let matching = nearby.filter {
                $0.moment.kind == .declared && $0.matches(location: tp.location, time: tp.time, rules: rules)
            }
            for m in matching where !m.moment.admits(photo.author) { candidates.insert(m.moment.id) }
            if winner == nil {
                winner = matching.filter { $0.moment.admits(photo.author) }
                    .min { outranks($0, $1, author: photo.author, location: tp.location) }?.moment.id
            }
        }
        return DeclaredResolution(momentId: winner, candidates: candidates)
    }

    /// Whether `a` beats `b` for a photo by `author` taken at `location`.
    public static func outranks(_ a: PlacedMoment, _ b: PlacedMoment, author: String?, location: Coordinate) -> Bool {
        let ownA = a.moment.isOwnOrInvited(author), ownB = b.moment.isOwnOrInvited(author)
        if ownA != ownB { return ownA }
        let ratioA = a.place.relativeDistance(of: location), ratioB = b.place.relativeDistance(of: location)
        if ratioA != ratioB { return ratioA < ratioB }
        if a.moment.start != b.moment.start { return a.moment.start > b.moment.start }
        return a.moment.id < b.moment.id
    }
}

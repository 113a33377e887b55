import Foundation

/// How the worker chooses a moment's cover when its creator has not.
public enum CoverPolicy: String, Sendable, Codable, CaseIterable {
    /// The seeds' rule, read order-independently: the earliest picture by capture time
    /// (then content key), not the first to arrive.
    case first
    /// The earliest picture whose cover score is within `coverMargin` of the moment's best score.
    case best
}

/// The cover the policy gives a set of pictures, with the reason to store.
public struct CoverChoice: Sendable, Hashable {
    /// The chosen picture.
    public var pictureId: Int64
    /// Why, in words, for `Moment.coverReason`.
    public var reason: String
}

extension CoverPolicy {
    /// The cover this policy gives `pictures` (in any order), nil when there are none.
    ///
    /// A pure function of the set: the same pictures give the same cover whatever order they
    /// arrived in. Under `best`, a later picture takes the cover only when it beats every
    /// earlier one by more than `margin`, so near-ties keep the earlier cover.
    public func choose(among pictures: [PhotoFacts], margin: Double) -> CoverChoice? {
        choose(digest: MomentDigest(of: pictures), margin: margin) { minimum in
            pictures.filter { $0.coverScore >= minimum }.min(by: PictureOrder.precedes)
        }
    }

    /// The same choice from a moment's digest and a lookup of "the earliest picture scoring at
    /// least this", which the store answers with its indexes.
    func choose(digest: MomentDigest, margin: Double,
                earliestScoringAtLeast: (Double) throws -> PhotoFacts?) rethrows -> CoverChoice? {
        guard let earliest = digest.earliest else { return nil }
        switch self {
        case .first:
            return CoverChoice(pictureId: earliest.id,
                               reason: "first picture (earliest capture time, then content key)")
        case .best:
            let best = digest.bestScore ?? earliest.coverScore
            let chosen = try earliestScoringAtLeast(best - margin) ?? earliest
            return CoverChoice(pictureId: chosen.id,
                               reason: "best score: \(twoDecimals(chosen.coverScore)), the earliest picture within "
                                   + "\(twoDecimals(margin)) of the best score \(twoDecimals(best))")
        }
    }
}

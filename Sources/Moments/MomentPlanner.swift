import Foundation

/// The whole moment state that a set of pictures and declared moments calls for, computed from
/// scratch: the reference that incremental updates must agree with, and what
/// `MomentEngine.rebuild` applies.
public struct MomentPlan: Sendable {
    /// Picture id → the declared moment it joins.
    public var declaredAssignments: [Int64: Int64]
    /// Picture id → the private moments it is a candidate of.
    public var candidates: [Int64: Set<Int64>]
    /// The automatic moments: groups of pictures, each in the stable picture order, ordered by
    /// their anchor (first picture).
    public var automaticGroups: [[PhotoFacts]]
}

/// Computes `MomentPlan`s.
public enum MomentPlanner {
    /// The plan for `pictures` and the declared moments `declared` under `rules`. Depends only
    /// on the two sets, never on their order.
    public static func plan(pictures: [PhotoFacts], declared: [PlacedMoment], rules: MomentRules) -> MomentPlan {
        var discs = DiscGrid()
        var byId: [Int64: PlacedMoment] = [:]
        for placed in declared where placed.moment.kind == .declared {
            byId[placed.moment.id] = placed
            discs.insert(placed.moment.id, center: placed.place.center, radius: placed.place.radiusMetres)
        }
        var assignments: [Int64: Int64] = [:]
        var candidates: [Int64: Set<Int64>] = [:]
        var automatic: [PhotoFacts] = []
        for photo in pictures {
            let nearby = photo.timeAndPlace.map { tp in
                discs.candidates(containing: tp.location).compactMap { byId[$0] }
            } ?? []
            let requested = photo.requestedMomentId.flatMap { byId[$0]?.moment }
            let resolution = DeclaredMatching.resolve(photo, requested: requested, nearby: nearby, rules: rules)
            if !resolution.candidates.isEmpty { candidates[photo.id] = resolution.candidates }
            if let target = resolution.momentId {
                assignments[photo.id] = target
            } else if photo.timeAndPlace != nil {
                automatic.append(photo)
            }
        }
        return MomentPlan(declaredAssignments: assignments, candidates: candidates,
                          automaticGroups: AutomaticClustering.components(of: automatic, rules: rules))
    }
}

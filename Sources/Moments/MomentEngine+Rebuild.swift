import Foundation

extension MomentEngine {
    /// Recomputes every assignment, candidate record, automatic moment and cover from the
    /// store's pictures and declared moments (`darkroom moments rebuild`).
    ///
    /// On a store that incremental updates kept consistent this changes nothing and returns no
    /// events. Automatic moments keep their ids where they survive (each group, earliest first,
    /// reuses the old automatic moment of its earliest picture that has one not yet reused); the
    /// others are deleted or created.
    /// Covers set by creators are kept while their picture stays in the moment.
    public func rebuild<S: MomentStore>(_ store: inout S) throws -> [MomentEvent] {
        let pictures = try store.allPictures().sorted { $0.id < $1.id }
        let moments = try store.allMoments()
        var declared: [PlacedMoment] = []
        for moment in moments where moment.kind == .declared {
            guard let place = try store.place(id: moment.placeId) else { throw MomentError.placeNotFound(id: moment.placeId) }
            declared.append(PlacedMoment(moment: moment, place: place))
        }
        let plan = MomentPlanner.plan(pictures: pictures, declared: declared, rules: rules)
        var tx = MomentTransaction(rules: rules, naming: naming)

        var current: [Int64: Int64] = [:]
        for picture in pictures {
            try tx.syncCandidates(of: picture.id, to: plan.candidates[picture.id] ?? [], in: &store)
            current[picture.id] = try store.momentId(ofPicture: picture.id)
        }
        func move(_ pictureId: Int64, to momentId: Int64?) throws {
            guard current[pictureId] != momentId else { return }
            try store.assign(picture: pictureId, to: momentId)
            current[pictureId] = momentId
            tx.emit(.pictureAdded(pictureId: pictureId, momentId: momentId))
        }

        for picture in pictures {
            if let target = plan.declaredAssignments[picture.id] { try move(picture.id, to: target) }
        }
        var unused = Set(moments.filter { $0.kind == .automatic }.map(\.id))
        var grouped = Set<Int64>()
        for group in plan.automaticGroups {
            guard let anchor = group.first?.timeAndPlace else { continue }
            let momentId: Int64
            if let reused = group.lazy.compactMap({ current[$0.id] }).first(where: unused.contains) {
                unused.remove(reused)
                momentId = reused
            } else {
                let place = try tx.placeForAnchor(at: anchor.location, in: &store)
                let created = try store.createMoment(Moment(id: 0, kind: .automatic, placeId: place.id,
                                                            start: anchor.time, end: anchor.time,
                                                            creator: group[0].author,
                                                            visibility: rules.automaticVisibility))
                tx.emit(.momentCreated(created))
                momentId = created.id
            }
            for picture in group {
                grouped.insert(picture.id)
                try move(picture.id, to: momentId)
            }
            tx.touch(momentId)
        }
        for picture in pictures where plan.declaredAssignments[picture.id] == nil && !grouped.contains(picture.id) {
            try move(picture.id, to: nil)
        }
        for momentId in unused.sorted() {
            try store.deleteMoment(id: momentId)
            tx.emit(.momentDeleted(momentId: momentId))
        }
        for placed in declared { tx.touch(placed.moment.id) }
        try tx.finish(in: &store)
        return tx.events
    }
}

import Foundation

/// The moment rules applied to a `MomentStore`: where each picture goes, when
/// automatic moments form, merge and split, and which picture is each moment's cover.
///
/// The engine holds no state of its own: every operation reads and writes the store it is
/// given, so separate engines (separate worker runs) over one store behave as one. Call each
/// operation inside the store's write transaction; on error, roll it back.
///
/// The outcome depends only on the set of pictures and declared moments, never on the order
/// or batching of the calls: `rebuild` computes it from scratch and agrees.
public struct MomentEngine: Sendable {
    /// The rules in force.
    public let rules: MomentRules

    /// Names automatic places and titles automatic moments (the gazetteer's, in the catalogs);
    /// nil leaves them unnamed.
    public let naming: (any AutomaticNaming)?

    /// An engine applying `rules`, naming what it creates with `naming`.
    public init(rules: MomentRules = .default, naming: (any AutomaticNaming)? = nil) {
        self.rules = rules
        self.naming = naming
    }

    /// Files a new picture: into the declared moment it matches or asked for, else into the
    /// automatic moment of its neighbours (merging the moments it bridges), else unassigned when
    /// it has no time or location. Ingesting the same facts again changes nothing;
    /// different facts for a known id replace the old ones. A cover score outside 0...1 is
    /// clamped (NaN counts as 0) before it is stored.
    public func ingest<S: MomentStore>(_ photo: PhotoFacts, into store: inout S) throws -> [MomentEvent] {
        var photo = photo
        photo.coverScore = CoverScore.unit(photo.coverScore)
        var tx = MomentTransaction(rules: rules, naming: naming)
        if let existing = try store.picture(id: photo.id) {
            if existing == photo { return [] }
            try remove(pictureId: photo.id, in: &tx, store: &store)
        }
        try store.savePicture(photo)
        try tx.settle([photo.id], announce: [photo.id], in: &store)
        try tx.finish(in: &store)
        return tx.events
    }

    /// Files several new pictures, one after another (same result as separate calls).
    public func ingest<S: MomentStore>(_ photos: some Sequence<PhotoFacts>, into store: inout S) throws -> [MomentEvent] {
        var events: [MomentEvent] = []
        for photo in photos { events += try ingest(photo, into: &store) }
        return events
    }

    /// Removes a picture: its automatic moment is recomputed (and may split or vanish), and a
    /// cover it held falls back to the next choice. Removing an unknown id changes nothing.
    public func remove<S: MomentStore>(pictureId: Int64, from store: inout S) throws -> [MomentEvent] {
        var tx = MomentTransaction(rules: rules, naming: naming)
        try remove(pictureId: pictureId, in: &tx, store: &store)
        try tx.finish(in: &store)
        return tx.events
    }

    private func remove<S: MomentStore>(pictureId: Int64, in tx: inout MomentTransaction, store: inout S) throws {
        guard try store.picture(id: pictureId) != nil else { return }
        let momentId = try store.momentId(ofPicture: pictureId)
        let moment = try momentId.flatMap { try store.moment(id: $0) }
        try store.deletePicture(id: pictureId)
        tx.emit(.pictureRemoved(pictureId: pictureId, momentId: momentId))
        if let moment {
            if moment.kind == .automatic { try tx.split(moment.id, in: &store) } else { tx.touch(moment.id) }
        }
    }

    /// Declares a moment from the backend, or updates one (place, window, visibility,
    /// invitees, title). Pictures it now matches are pulled in, even those uploaded long
    /// before, which may shrink, split or remove automatic moments; pictures it no longer
    /// matches go back to the other rules. Changing the place's circle re-evaluates every
    /// declared moment held there. A cover the creator set is kept; a moment arriving
    /// with `coverSource == .creator` brings the creator's choice. A `.create` whose id is taken
    /// is refused (`idTaken`), and so is an `.update` of a moment that does not exist.
    public func declare<S: MomentStore>(_ moment: Moment, at place: Place, as declaration: Declaration = .create,
                                        into store: inout S) throws -> [MomentEvent] {
        try validate(moment, at: place)
        var tx = MomentTransaction(rules: rules, naming: naming)
        let old = try store.moment(id: moment.id)
        if let old, old.kind != .declared {
            throw MomentError.invalidMoment(id: moment.id, reason: "the id belongs to an automatic moment")
        }
        switch (declaration, old) {
        case (.create, let old?): throw MomentError.idTaken(kind: "moment", id: old.id, existing: Self.summary(of: old))
        case (.update, nil): throw MomentError.momentNotFound(id: moment.id)
        default: break
        }
        var affected = Set<Int64>()
        if let old { affected.formUnion(try members(of: old.id, in: store)) }

        let oldPlace = try store.place(id: place.id)
        if oldPlace != place { try store.savePlace(place) }
        var declared = moment
        if moment.coverSource != .creator || moment.coverPictureId == nil {
            declared.coverPictureId = old?.coverPictureId
            declared.coverSource = old?.coverSource ?? .none
            declared.coverReason = old?.coverReason
        } else if declared.coverReason == nil {
            declared.coverReason = "set by creator"
        }
        if declared != old {
            try store.saveMoment(declared)
            tx.emit(old == nil ? .momentCreated(declared) : .momentUpdated(declared))
        }

        var reevaluated = [declared]
        if let oldPlace, !oldPlace.hasSameGeometry(as: place) {
            for other in try store.moments(atPlace: place.id) where other.kind == .declared && other.id != declared.id {
                affected.formUnion(try members(of: other.id, in: store))
                reevaluated.append(other)
            }
        }
        for m in reevaluated {
            affected.formUnion(try store.pictures(near: place.center, radiusMetres: place.radiusMetres,
                                                  from: m.start.addingTimeInterval(-rules.graceBefore),
                                                  through: m.end.addingTimeInterval(rules.graceAfter)).map(\.id))
            affected.formUnion(try store.pictures(requestingMoment: m.id).map(\.id))
            tx.touch(m.id)
        }
        try tx.settle(affected, in: &store)
        try tx.finish(in: &store)
        return tx.events
    }

    /// Withdraws a declared moment (the backend deleted it): its pictures and candidates go
    /// back to the other rules, as if it had never been declared.
    public func withdraw<S: MomentStore>(momentId: Int64, from store: inout S) throws -> [MomentEvent] {
        guard let moment = try store.moment(id: momentId) else { throw MomentError.momentNotFound(id: momentId) }
        guard moment.kind == .declared else {
            throw MomentError.invalidMoment(id: momentId, reason: "automatic moments are not withdrawn, only declared ones")
        }
        var tx = MomentTransaction(rules: rules, naming: naming)
        let assigned = Set(try store.pictures(inMoment: momentId).map(\.id))
        let affected = try members(of: momentId, in: store)
        try store.deleteMoment(id: momentId)
        tx.emit(.momentDeleted(momentId: momentId))
        try tx.settle(affected, announce: assigned, in: &store)
        try tx.finish(in: &store)
        return tx.events
    }

    /// Sets (or, with nil, clears) the creator's choice of cover. Only the moment's
    /// creator may, and only with one of the moment's pictures; the worker never changes that
    /// choice until the picture leaves the moment. Clearing hands the cover back to the policy.
    public func setCover<S: MomentStore>(momentId: Int64, pictureId: Int64?, by user: String?,
                                         in store: inout S) throws -> [MomentEvent] {
        guard var moment = try store.moment(id: momentId) else { throw MomentError.momentNotFound(id: momentId) }
        guard let user, user == moment.creator else { throw MomentError.notCreator(momentId: momentId, user: user) }
        var tx = MomentTransaction(rules: rules, naming: naming)
        if let pictureId {
            guard try store.momentId(ofPicture: pictureId) == momentId else {
                throw MomentError.pictureNotInMoment(pictureId: pictureId, momentId: momentId)
            }
            let changed = moment.coverPictureId != pictureId
            moment.coverPictureId = pictureId
            moment.coverSource = .creator
            moment.coverReason = "set by creator"
            try store.saveMoment(moment)
            if changed { tx.emit(.coverChanged(momentId: momentId, pictureId: pictureId, reason: "set by creator")) }
        } else if moment.coverSource == .creator {
            moment.coverSource = .policy
            try store.saveMoment(moment)
            tx.touch(momentId)
        }
        try tx.finish(in: &store)
        return tx.events
    }

    /// Changes a declared place's name or circle: every declared moment held there is
    /// re-evaluated, as when a moment is declared with a changed place.
    public func updatePlace<S: MomentStore>(_ place: Place, in store: inout S) throws -> [MomentEvent] {
        guard let old = try store.place(id: place.id) else { throw MomentError.placeNotFound(id: place.id) }
        guard place.isValid else {
            throw MomentError.invalidMoment(id: 0, reason: "place \(place.id) needs a valid centre and a radius > 0")
        }
        guard old != place else { return [] }
        try store.savePlace(place)
        var tx = MomentTransaction(rules: rules, naming: naming)
        if !old.hasSameGeometry(as: place) {
            var affected = Set<Int64>()
            for moment in try store.moments(atPlace: place.id) where moment.kind == .declared {
                affected.formUnion(try members(of: moment.id, in: store))
                affected.formUnion(try store.pictures(near: place.center, radiusMetres: place.radiusMetres,
                                                      from: moment.start.addingTimeInterval(-rules.graceBefore),
                                                      through: moment.end.addingTimeInterval(rules.graceAfter)).map(\.id))
                tx.touch(moment.id)
            }
            try tx.settle(affected, in: &store)
        }
        try tx.finish(in: &store)
        return tx.events
    }

    /// One line naming a moment's owner and window, for a refused create.
    static func summary(of moment: Moment) -> String {
        let time = ISO8601DateFormatter()
        return "\(moment.visibility.rawValue), creator \(moment.creator ?? "none"), place \(moment.placeId), "
            + "\(time.string(from: moment.start)) to \(time.string(from: moment.end))"
            + (moment.title.map { ", titled \"\($0)\"" } ?? "")
    }

    /// Pictures whose place depends on a declared moment: its members, candidates and requesters.
    private func members<S: MomentStore>(of momentId: Int64, in store: S) throws -> Set<Int64> {
        var ids = Set(try store.pictures(inMoment: momentId).map(\.id))
        ids.formUnion(try store.candidatePictures(ofMoment: momentId))
        ids.formUnion(try store.pictures(requestingMoment: momentId).map(\.id))
        return ids
    }

    private func validate(_ moment: Moment, at place: Place) throws {
        func refuse(_ reason: String) -> MomentError { .invalidMoment(id: moment.id, reason: reason) }
        guard moment.kind == .declared else { throw refuse("only declared moments can be declared") }
        guard Declaration.backendIds.contains(moment.id) else { throw MomentError.idOutOfRange(kind: "moment", id: moment.id) }
        guard moment.placeId == place.id else {
            throw refuse("its place id \(moment.placeId) differs from the place given (\(place.id))")
        }
        guard moment.start <= moment.end else { throw refuse("it ends before it starts") }
        guard place.isValid else {
            throw refuse("its place \(place.id) needs a valid centre and a radius > 0 (radius \(place.radiusMetres))")
        }
    }
}

import Foundation

/// One engine operation in progress: the moves it makes on a store, the events they produce,
/// and the moments whose window, place and cover must be brought up to date at the end.
///
/// Invariant kept between operations (and restored by `finish`): every picture with a time
/// and a location and no declared moment is in the automatic moment of its connected
/// component; automatic moments are exactly those components.
struct MomentTransaction {
    let rules: MomentRules
    /// Names automatic places and titles automatic moments; nil leaves them unnamed.
    let naming: (any AutomaticNaming)?
    private(set) var events: [MomentEvent] = []
    /// Moments whose members changed: refreshed once by `finish`.
    private var touched: Set<Int64> = []

    init(rules: MomentRules, naming: (any AutomaticNaming)? = nil) {
        self.rules = rules
        self.naming = naming
    }

    mutating func emit(_ event: MomentEvent) { events.append(event) }
    mutating func touch(_ momentId: Int64) { touched.insert(momentId) }

    // MARK: Declared moments

    /// The declared rules' answer for `photo` against the store's current declared moments.
    func resolve<S: MomentStore>(_ photo: PhotoFacts, in store: S) throws -> DeclaredResolution {
        let requested = try photo.requestedMomentId.flatMap { try store.moment(id: $0) }
        let nearby = try photo.timeAndPlace.map { tp in
            try store.declaredMoments(near: tp.location, at: tp.time, rules: rules)
        } ?? []
        return DeclaredMatching.resolve(photo, requested: requested, nearby: nearby, rules: rules)
    }

    /// Makes the store's candidate records of `pictureId` equal to `wanted`.
    mutating func syncCandidates<S: MomentStore>(of pictureId: Int64, to wanted: Set<Int64>, in store: inout S) throws {
        let current = try store.candidateMoments(ofPicture: pictureId)
        for momentId in wanted.subtracting(current).sorted() {
            try store.recordCandidate(picture: pictureId, moment: momentId)
            emit(.candidateRecorded(pictureId: pictureId, momentId: momentId))
        }
        for momentId in current.subtracting(wanted).sorted() {
            try store.removeCandidate(picture: pictureId, moment: momentId)
            emit(.candidateWithdrawn(pictureId: pictureId, momentId: momentId))
        }
    }

    /// Re-decides where each picture of `ids` belongs after a picture arrived or the declared
    /// moments changed, and moves it: into its declared moment, or back into the automatic
    /// pool. Automatic moments that lost pictures are split into their new components first,
    /// then released pictures are placed (merging what they bridge).
    /// - Parameter announce: pictures that get a `pictureAdded` event even when they end up
    ///   where the store already had them (new pictures; members of a withdrawn moment).
    mutating func settle<S: MomentStore>(_ ids: some Sequence<Int64>, announce: Set<Int64> = [],
                                         in store: inout S) throws {
        var released: [PhotoFacts] = []
        var shrunk = Set<Int64>()
        for id in Set(ids).sorted() {
            guard let photo = try store.picture(id: id) else { continue }
            let resolution = try resolve(photo, in: store)
            try syncCandidates(of: id, to: resolution.candidates, in: &store)
            let currentId = try store.momentId(ofPicture: id)
            let current = try currentId.flatMap { try store.moment(id: $0) }
            if let target = resolution.momentId {
                guard target != currentId else {
                    if announce.contains(id) { emit(.pictureAdded(pictureId: id, momentId: target)) }
                    continue
                }
                if let current {
                    if current.kind == .automatic { shrunk.insert(current.id) } else { touch(current.id) }
                }
                try store.assign(picture: id, to: target)
                emit(.pictureAdded(pictureId: id, momentId: target))
                touch(target)
            } else if current?.kind == .automatic {
                continue  // no declared claim: it stays in its automatic moment
            } else {
                if let current { touch(current.id) }
                if currentId != nil { try store.assign(picture: id, to: nil) }
                if photo.timeAndPlace != nil {
                    released.append(photo)
                } else if currentId != nil || announce.contains(id) {
                    emit(.pictureAdded(pictureId: id, momentId: nil))
                }
            }
        }
        for momentId in shrunk.sorted() { try split(momentId, in: &store) }
        for photo in PictureOrder.sorted(released) { try placeAutomatically(photo, in: &store) }
    }

    // MARK: Automatic moments

    /// Puts a photo with a time and a location and no declared moment into the automatic
    /// moment of its neighbours, merging all the moments it links, or into a new automatic
    /// moment. The survivor of a merge is the moment holding the earliest picture, as in
    /// `split` and `rebuild`: the moment that has been shown the longest keeps its id.
    mutating func placeAutomatically<S: MomentStore>(_ photo: PhotoFacts, in store: inout S) throws {
        guard let tp = photo.timeAndPlace else { return }
        let linkedMoments = Set(try store.automaticNeighbours(of: photo, rules: rules)
            .filter { $0.photo.id != photo.id && AutomaticClustering.linked(photo, $0.photo, rules: rules) }
            .map(\.momentId))
        let momentId: Int64
        if let survivor = try earliest(of: linkedMoments, in: store) {
            for other in linkedMoments.sorted() where other != survivor { try merge(other, into: survivor, in: &store) }
            momentId = survivor
        } else {
            let place = try placeForAnchor(at: tp.location, in: &store)
            let moment = try store.createMoment(Moment(id: 0, kind: .automatic, placeId: place.id, start: tp.time,
                                                       end: tp.time, creator: photo.author,
                                                       visibility: rules.automaticVisibility,
                                                       title: automaticTitle(place: place, start: tp.time, anchor: tp.location)))
            emit(.momentCreated(moment))
            momentId = moment.id
        }
        try store.assign(picture: photo.id, to: momentId)
        emit(.pictureAdded(pictureId: photo.id, momentId: momentId))
        touch(momentId)
    }

    /// Of several automatic moments, the one holding the earliest picture (stable order).
    private func earliest<S: MomentStore>(of momentIds: Set<Int64>, in store: S) throws -> Int64? {
        guard momentIds.count > 1 else { return momentIds.first }
        var best: (id: Int64, anchor: PhotoFacts)?
        for id in momentIds.sorted() {
            guard let anchor = try store.digest(ofMoment: id).earliest else { continue }
            if best.map({ PictureOrder.precedes(anchor, $0.anchor) }) ?? true { best = (id, anchor) }
        }
        return best?.id ?? momentIds.min()
    }

    /// Moves every picture of automatic moment `from` into `into` and deletes `from`. A cover
    /// set by the creator survives: when both have one, the earlier picture's.
    mutating func merge<S: MomentStore>(_ from: Int64, into: Int64, in store: inout S) throws {
        guard var survivor = try store.moment(id: into), let absorbed = try store.moment(id: from) else { return }
        try store.movePictures(fromMoment: from, toMoment: into)
        if absorbed.coverSource == .creator, let theirs = absorbed.coverPictureId {
            var adopt = survivor.coverSource != .creator || survivor.coverPictureId == nil
            if !adopt, let ours = survivor.coverPictureId,
               let a = try store.picture(id: theirs), let b = try store.picture(id: ours) {
                adopt = PictureOrder.precedes(a, b)
            }
            if adopt {
                survivor.coverPictureId = theirs
                survivor.coverSource = .creator
                survivor.coverReason = absorbed.coverReason
                try store.saveMoment(survivor)
            }
        }
        try store.deleteMoment(id: from)
        emit(.momentMerged(from: from, into: into))
        touched.remove(from)
        touch(into)
    }

    /// Recomputes the components of an automatic moment that lost pictures: the component
    /// holding the earliest picture keeps the moment, each other one becomes a new moment, and
    /// an empty moment is deleted.
    mutating func split<S: MomentStore>(_ momentId: Int64, in store: inout S) throws {
        guard let moment = try store.moment(id: momentId), moment.kind == .automatic else { return }
        let components = AutomaticClustering.components(of: try store.pictures(inMoment: momentId), rules: rules)
        guard !components.isEmpty else {
            try store.deleteMoment(id: momentId)
            emit(.momentDeleted(momentId: momentId))
            touched.remove(momentId)
            return
        }
        touch(momentId)
        for component in components.dropFirst() {
            guard let anchor = component.first?.timeAndPlace else { continue }
            let place = try placeForAnchor(at: anchor.location, in: &store)
            var draft = Moment(id: 0, kind: .automatic, placeId: place.id, start: anchor.time, end: anchor.time,
                               creator: moment.creator, visibility: moment.visibility,
                               title: automaticTitle(place: place, start: anchor.time, anchor: anchor.location))
            if moment.coverSource == .creator, let cover = moment.coverPictureId, component.contains(where: { $0.id == cover }) {
                draft.coverPictureId = cover
                draft.coverSource = .creator
                draft.coverReason = moment.coverReason
            }
            let created = try store.createMoment(draft)
            emit(.momentCreated(created))
            for picture in component {
                try store.assign(picture: picture.id, to: created.id)
                emit(.pictureAdded(pictureId: picture.id, momentId: created.id))
            }
            touch(created.id)
        }
    }

    /// The place of an automatic moment anchored at `location`: the existing place whose circle
    /// holds it best (smallest distance/radius ratio, then lowest id), else a new place centred
    /// there with the automatic radius.
    mutating func placeForAnchor<S: MomentStore>(at location: Coordinate, in store: inout S) throws -> Place {
        let holding = try store.places(containing: location).filter { $0.isValid && $0.contains(location) }
        let best = holding.min { a, b in
            let ra = a.relativeDistance(of: location), rb = b.relativeDistance(of: location)
            return ra != rb ? ra < rb : a.id < b.id
        }
        if let best { return best }
        return try store.createPlace(name: naming?.placeName(at: location), center: location,
                                     radiusMetres: rules.automaticRadiusMetres)
    }

    /// An automatic moment's title from its place's name (declared or automatic) and the local
    /// date of its start; nil without naming or a name.
    func automaticTitle(place: Place, start: Date, anchor: Coordinate) -> String? {
        guard let naming, let name = place.name ?? naming.placeName(at: place.center) else { return nil }
        return naming.title(placeName: name, start: start, at: anchor)
    }

    // MARK: Finishing

    /// Brings every touched moment up to date: an automatic moment's window and place follow
    /// its pictures; every cover follows the policy unless the creator's cover is still there.
    /// Reads aggregates (`MomentDigest`), not every picture, so a large moment stays cheap.
    mutating func finish<S: MomentStore>(in store: inout S) throws {
        for momentId in touched.sorted() {
            guard let before = try store.moment(id: momentId) else { continue }
            var moment = before
            let digest = try store.digest(ofMoment: momentId)
            if moment.kind == .automatic {
                if let start = digest.firstCapture, let end = digest.lastCapture {
                    moment.start = start
                    moment.end = end
                }
                // Every picture of an automatic moment has a time and a location.
                if let anchor = digest.earliest?.location {
                    let place = try placeForAnchor(at: anchor, in: &store)
                    moment.placeId = place.id
                    if let title = automaticTitle(place: place, start: moment.start, anchor: anchor) { moment.title = title }
                }
            }
            try refreshCover(of: &moment, digest: digest, in: store)
            if moment != before { try store.saveMoment(moment) }
        }
        touched = []
    }

    /// Applies the cover rule to a moment whose pictures have this digest.
    mutating func refreshCover<S: MomentStore>(of moment: inout Moment, digest: MomentDigest, in store: S) throws {
        if moment.coverSource == .creator, let cover = moment.coverPictureId,
           try store.momentId(ofPicture: cover) == moment.id {
            return
        }
        let momentId = moment.id
        let choice = try rules.coverPolicy.choose(digest: digest, margin: rules.coverMargin) { minimum in
            try store.earliestPicture(inMoment: momentId, scoringAtLeast: minimum)
        }
        let changed = choice?.pictureId != moment.coverPictureId
        moment.coverPictureId = choice?.pictureId
        moment.coverSource = choice == nil ? .none : .policy
        moment.coverReason = choice?.reason
        if changed {
            emit(.coverChanged(momentId: moment.id, pictureId: choice?.pictureId,
                               reason: choice?.reason ?? "no pictures left"))
        }
    }
}

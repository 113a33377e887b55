import Foundation

/// What `MomentEngine.nameAutomatic` changed.
public struct NamingOutcome: Sendable, Equatable {
    /// Automatic places that got a name.
    public var places: Int
    /// Automatic moments that got a title.
    public var moments: Int

    public init(places: Int = 0, moments: Int = 0) {
        self.places = places
        self.moments = moments
    }
}

extension MomentEngine {
    /// Names the automatic places and titles the automatic moments made before naming existed
    /// (or while the gazetteer was missing): only those without a name or title; the backend's
    /// declared places and moments are never touched. Without `naming`, changes nothing.
    public func nameAutomatic<S: MomentStore>(in store: inout S) throws -> NamingOutcome {
        guard let naming else { return NamingOutcome() }
        var outcome = NamingOutcome()
        let tx = MomentTransaction(rules: rules, naming: naming)
        for var moment in try store.allMoments() where moment.kind == .automatic {
            guard var place = try store.place(id: moment.placeId) else { continue }
            if place.name == nil, !Declaration.backendIds.contains(place.id),
               let name = naming.placeName(at: place.center) {
                place.name = name
                try store.savePlace(place)
                outcome.places += 1
            }
            guard moment.title == nil,
                  let anchor = try store.digest(ofMoment: moment.id).earliest?.location ?? Optional(place.center),
                  let title = tx.automaticTitle(place: place, start: moment.start, anchor: anchor)
            else { continue }
            moment.title = title
            try store.saveMoment(moment)
            outcome.moments += 1
        }
        return outcome
    }
}

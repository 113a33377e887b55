import Foundation

/// What changed, for the catalog's outbox (`picture.added`, `moment.created`,
/// `moment.cover_changed`, …) and for logs. Events come in the order the changes were made.
public enum MomentEvent: Sendable, Hashable {
    /// A moment was created (declared by the backend, or formed automatically).
    case momentCreated(Moment)
    /// A declared moment's place, window, visibility or invitees changed.
    case momentUpdated(Moment)
    /// Automatic moment `from` was merged into `into`, the moment holding the earliest picture:
    /// all its pictures now belong to `into`, and `from` no longer exists. No
    /// `pictureAdded` is sent for the moved pictures.
    case momentMerged(from: Int64, into: Int64)
    /// A moment no longer exists: withdrawn by the backend, or an automatic moment left empty.
    case momentDeleted(momentId: Int64)
    /// A picture now belongs to `momentId`, or to no moment (nil): sent when a picture is
    /// ingested and whenever its moment changes (other than by a merge).
    case pictureAdded(pictureId: Int64, momentId: Int64?)
    /// A picture was removed from the catalog; it was in `momentId` (nil: in none).
    case pictureRemoved(pictureId: Int64, momentId: Int64?)
    /// A moment's cover changed to `pictureId` (nil: the moment has no picture left).
    case coverChanged(momentId: Int64, pictureId: Int64?, reason: String)
    /// A picture matched a private moment that does not admit its author.
    case candidateRecorded(pictureId: Int64, momentId: Int64)
    /// A picture is no longer a candidate of a moment (the moment changed or went away).
    case candidateWithdrawn(pictureId: Int64, momentId: Int64)
}

/// What became of one photo.
public enum PhotoOutcome: Sendable, Equatable {
    case added(pictureId: Int64, momentId: Int64?)
    case duplicate(of: Int64)

    public var label: String {
        switch self {
        case .added: "added"
        case .duplicate: "duplicate"
        }
    }
}

import Operations

/// What an upload became, as `GET /v1/uploads/{id}` answers (and `POST` with `queued`).
struct UploadState: Encodable, Sendable {
    /// The stages of an upload.
    enum Status: String, Encodable, Sendable {
        /// `presigned`: a direct upload granted, its bytes not yet completed.
        case presigned, queued, processing, done, duplicate, failed

        /// Whether the upload has ended: nothing more will happen to it.
        var isFinal: Bool { self == .done || self == .duplicate || self == .failed }
    }

    var id: String
    var status: Status
    var statusUrl: String
    /// The picture these bytes are (for `done` and `duplicate`).
    var pictureId: Int64?
    /// For `duplicate`: the picture first made of these bytes.
    var duplicateOf: Int64?
    /// The moment the picture is in, if any.
    var momentId: Int64?
    /// Variant name to URL.
    var variants: [String: String]?
    /// For `done` and `duplicate`: where the picture's capture time and location came from
    /// (`sidecar` when the upload's explicit fields won over EXIF).
    var capturedAtSource: String?
    var locationSource: String?
    /// The camera's own values, when the upload's explicit fields replaced them.
    var camera: CameraValues?
    /// For `failed`: why, in one line.
    var reason: String?
}

import Multipart
import Foundation

/// Upload ids: 32 random hexadecimal digits, also the photo's name in the spool (`<id>.jpg`),
/// so that the job row (`jobs.source_name`) leads back to the upload.
enum UploadID {
    /// A new id.
    static func make() -> String {
        UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
    }

    /// Digits in an id: a UUID's 128 bits in hexadecimal.
    static let digits = 32

    /// Whether `text` has the shape of an id (and so is safe in a file name).
    static func isValid(_ text: String) -> Bool {
        text.count == digits && text.isLowercaseHex
    }

    /// The spool name of an upload's photo.
    static func spoolName(_ id: String, extension ext: String) -> String { id + "." + ext }

    /// The status URL of an upload.
    static func statusURL(_ id: String) -> String {
        APIRoute.uploadStatus.path.replacingOccurrences(of: "{id}", with: id)
    }
}

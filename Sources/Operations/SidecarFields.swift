import Foundation
import MetadataReading
import Moments

/// A photo's sidecar from text fields: an upload's query string or form fields, named as
/// the sidecar's keys, with the focal point as two fields (`focal_x`, `focal_y`). The JSON made
/// is checked by the same reader the worker uses, so what is accepted here is what is applied.
public enum SidecarFields {
    /// The fields accepted.
    public static let names = ["author_id", "moment_id", "title", "visibility", "focal_x", "focal_y",
                               "latitude", "longitude", "altitude", "taken_at"]

    /// The sidecar's JSON (nil when no field is given); throws the first field that cannot be used.
    public static func json(from fields: [(name: String, value: String)]) throws(FieldError) -> [UInt8]? {
        var values: [String: String] = [:]
        for (name, value) in fields {
            guard names.contains(name) else {
                throw FieldError(name, "is not a field of an upload; use \(names.joined(separator: ", "))")
            }
            guard values[name] == nil else { throw FieldError(name, "is given twice") }
            try FieldLimits.check(name, value)
            // Written as RFC 3339 (the OpenAPI document's date-time), not as EXIF or another tool
            // spells it, which a sidecar's reader takes; an empty one is refused, not left out.
            if name == "taken_at" { try TimeField.check(value, field: name, example: "2024-05-07T09:33:04+08:00") }
            values[name] = value
        }
        if values.isEmpty { return nil }
        var sidecar = Sidecar(authorId: values["author_id"], title: values["title"], takenAt: values["taken_at"],
                              visibility: values["visibility"])
        sidecar.momentId = try values["moment_id"].map { text throws(FieldError) in
            guard let id = Int64(text) else { throw FieldError("moment_id", "must be a whole number (got \(text))") }
            // Within what a JSON number holds exactly, as the OpenAPI document bounds it.
            let bound = Declaration.backendIds.upperBound
            guard (-bound...bound).contains(id) else { throw FieldError("moment_id", "must be between -\(bound) and \(bound) (got \(text))") }
            return id
        }
        sidecar.latitude = try number(values, "latitude")
        sidecar.longitude = try number(values, "longitude")
        sidecar.altitude = try number(values, "altitude")
        switch (try number(values, "focal_x"), try number(values, "focal_y")) {
        case (let x?, let y?): sidecar.focalPoint = SidecarFocalPoint(x: x, y: y)
        case (nil, nil): break
        case (nil, _): throw FieldError("focal_x", "is needed with focal_y")
        case (_, nil): throw FieldError("focal_y", "is needed with focal_x")
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(sidecar) else { throw FieldError("sidecar", "cannot be written as JSON") }
        let bytes = [UInt8](data)
        do {
            _ = try Sidecar(jsonBytes: bytes)
        } catch MetadataError.sidecarMalformed(_, let key, let problem) {
            throw FieldError(key.replacingOccurrences(of: "focal_point.", with: "focal_"), problem)
        } catch {
            throw FieldError("sidecar", "\(error)")
        }
        return bytes
    }

    private static func number(_ values: [String: String], _ name: String) throws(FieldError) -> Double? {
        guard let text = values[name] else { return nil }
        guard let value = FieldText.decimal(text) else { throw FieldError(name, "must be a number in decimal (got \(text))") }
        return value
    }
}

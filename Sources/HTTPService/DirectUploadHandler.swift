import BucketStorage
import Foundation
import Hummingbird
import Imaging
import JSONValues
import Operations
import ServiceObservability

/// `POST /v1/uploads/presign` and `POST /v1/uploads/{id}/complete`: uploads whose bytes go from
/// the client straight to the bucket, never through this server. Only with the library in a
/// bucket and the machines sharing a PostgreSQL queue (no shared directory): elsewhere 409, with
/// what to use instead.
struct DirectUploadHandler: Sendable {
    let environment: ServiceEnvironment

    /// The keys of a presign request's JSON body.
    static let presignFields = ["size", "content_type", "fields"]

    /// The answer to a presign: where to PUT the photo, with which headers, until when, and where
    /// to say it is complete and follow it.
    struct Presigned: Encodable, Sendable {
        var id: String
        var status: UploadState.Status
        var uploadUrl: String
        var method: String
        /// The headers the PUT must carry, with these exact values (they are signed).
        var headers: [String: String]
        var expiresAt: Date
        /// The exact number of bytes the PUT must send.
        var size: Int
        var completeUrl: String
        var statusUrl: String
    }

    /// The direct uploads of this server's bucket; 409 when the set-up has none.
    private var uploads: DirectUploads {
        get throws {
            guard environment.jobs != nil, let staging = environment.spool.staging as? BucketStaging else {
                throw APIError.conflict("direct uploads need the library in a bucket (library.url: s3://...) and a PostgreSQL catalog; "
                                        + "send the photo to POST /v1/uploads instead")
            }
            return DirectUploads(staging: staging)
        }
    }

    /// Records a direct upload of `size` bytes with its fields and answers a presigned PUT for it
    /// (valid `library.direct_upload_seconds`), 201.
    func presign(body: [UInt8]) async throws -> Response {
        let uploads = try uploads
        let json = try JSONObject(bytes: body, known: Self.presignFields)
        let size = try JSONObject.required(json.integer("size"), "size")
        let limit = environment.maxBodyBytes
        guard size >= 1 else { throw FieldError("size", "must be at least 1 (the photo's size in bytes)") }
        guard size <= limit else { throw APIError.overLimit("size \(size) is larger than \(limit) bytes (server.max_upload_bytes)") }
        let contentType = try json.string("content_type") ?? "application/octet-stream"
        guard Self.isMediaType(contentType) else {
            throw FieldError("content_type", "must be a media type such as image/jpeg (got \(contentType.prefix(80)))")
        }
        let sidecar = try SidecarFields.json(from: try Self.fields(json))
        if environment.jobs?.availability.outage != nil {
            throw APIError.unavailable("the catalog's database cannot be reached; ask again in a few seconds")
        }
        let id = UploadID.make()
        let grant = DirectUploads.Grant(id: id, size: Int(size), contentType: contentType, sidecar: sidecar.map { String(decoding: $0, as: UTF8.self) },
                                        expiresAt: Date().addingTimeInterval(environment.configuration.libraryDirectUploadSeconds))
        let ticket: DirectUploads.Ticket
        do {
            ticket = try await environment.blocking { try uploads.grant(grant) }
        } catch {
            environment.logger.warning("direct upload not granted; the bucket does not answer", metadata: ["upload": "\(id)", "reason": "\(error)"])
            throw APIError.unavailable("the bucket does not answer; ask again in a few seconds")
        }
        environment.logger.info("direct upload granted", metadata: ["upload": "\(id)", "bytes": "\(size)"])
        let statusURL = UploadID.statusURL(id)
        let answer = Presigned(id: id, status: .presigned, uploadUrl: ticket.url, method: "PUT", headers: ticket.headers,
                               expiresAt: ticket.expiresAt, size: Int(size), completeUrl: Self.completeURL(id), statusUrl: statusURL)
        return JSONBody.response(answer, status: .created, headers: [.location: statusURL])
    }

    /// Makes a direct upload whose bytes have arrived a job of the shared queue (202, as
    /// `POST /v1/uploads` answers); 409 while its bytes have not arrived, 415 (and the bytes
    /// removed) when they are not a photo, 404 for an id never granted or expired. Completing
    /// twice answers the upload's state.
    func complete(id: String) async throws -> Response {
        guard UploadID.isValid(id) else { throw APIError.badRequest("\(id) is not an upload id (32 hexadecimal digits, as the presign answered)") }
        let uploads = try uploads
        let environment = environment
        if environment.jobs?.availability.outage != nil {
            throw APIError.unavailable("the catalog's database cannot be reached; complete the upload again in a few seconds")
        }
        let started = ContinuousClock.now
        let grant: DirectUploads.Grant? = try await environment.blocking {
            do {
                return try uploads.recorded(id)
            } catch {
                environment.logger.warning("direct upload not completed; refused for now", metadata: ["upload": "\(id)", "reason": "\(error)"])
                throw APIError.unavailable("the bucket does not answer; complete the upload again in a few seconds")
            }
        }
        guard let grant else {
            // Completed already (its state then), or never granted or expired (404).
            do {
                return try await UploadHandler(environment: environment).status(id: id)
            } catch let error as APIError where error.status == .notFound {
                throw APIError.notFound("no direct upload \(id) waits to be completed: never presigned, refused, or expired")
            }
        }
        let (name, size): (String, Int) = try await environment.blocking {
            do {
                guard let size = try uploads.arrivedSize(id) else {
                    throw APIError.conflict("the photo of upload \(id) has not arrived in the bucket; PUT it to the presigned URL first")
                }
                let head = try uploads.leadingBytes(id, count: min(size, UploadHandler.sniffBytes))
                guard let ext = PhotoFormat.fileExtension(of: head) else {
                    try? uploads.remove(id)
                    throw APIError.unsupportedMediaType(PhotoFormat.refusal(head))
                }
                let name = UploadID.spoolName(id, extension: ext)
                let file = try uploads.stage(grant, as: name)
                do {
                    try environment.jobs?.admitPhotos(files: [file], urgent: true)
                } catch {
                    try? environment.spool.staging?.discard(file, failure: nil)
                    throw error
                }
                // The job is recorded: what the client put is no longer needed (should this
                // fail, the expiry's sweep removes it).
                try? uploads.remove(id)
                return (name, size)
            } catch let error as APIError {
                throw error
            } catch {
                environment.logger.warning("direct upload not completed; refused for now", metadata: ["upload": "\(id)", "reason": "\(error)"])
                throw APIError.unavailable("the bucket or the database does not answer; complete the upload again in a few seconds")
            }
        }
        environment.handOff?(id + "/" + name)
        environment.metrics.recordUploadAccepted(bytes: size, seconds: started.secondsElapsed, id: id)
        environment.logger.info("direct upload completed", metadata: ["upload": "\(id)", "file": "\(name)", "bytes": "\(size)"])
        let statusURL = UploadID.statusURL(id)
        return JSONBody.response(UploadState(id: id, status: .queued, statusUrl: statusURL), status: .accepted,
                                 headers: [.location: statusURL])
    }

    /// The state of a direct upload granted and not yet completed; nil when there is none.
    static func granted(id: String, environment: ServiceEnvironment) throws -> UploadState? {
        guard environment.jobs != nil, let staging = environment.spool.staging as? BucketStaging,
              try DirectUploads(staging: staging).recorded(id) != nil else { return nil }
        return UploadState(id: id, status: .presigned, statusUrl: UploadID.statusURL(id))
    }

    /// The URL that completes the direct upload `id`.
    static func completeURL(_ id: String) -> String {
        APIRoute.completeUpload.path.replacingOccurrences(of: "{id}", with: id)
    }

    /// The upload's fields (`fields`: an object of strings, numbers as their text), as an upload's
    /// query gives them.
    static func fields(_ json: JSONObject) throws(FieldError) -> [(name: String, value: String)] {
        switch json.fields["fields"] {
        case nil, .null?: return []
        case .object(let fields)?:
            return try fields.keys.sorted().map { key throws(FieldError) in
                switch fields[key] {
                case .string(let text)?: return (key, text)
                case .integer(let number)?: return (key, String(number))
                case let value? where value.double != nil: return (key, String(value.double!))
                case let value: throw FieldError(key, "must be a string or a number (got \(value?.summary ?? "nothing"))")
                }
            }
        case let other?: throw FieldError("fields", "must be an object of the upload's fields (got \(other.summary))")
        }
    }

    /// `type/subtype`, printable ASCII without spaces: what a signed `Content-Type` can carry.
    static func isMediaType(_ text: String) -> Bool {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        return text.utf8.count <= 100 && parts.count == 2 && parts.allSatisfy { part in
            !part.isEmpty && part.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: ";") && $0 != UInt8(ascii: ",") }
        }
    }
}

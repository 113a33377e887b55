import Catalog
import Foundation
import Hummingbird
import Pipeline

/// `POST /v1/uploads` and `GET /v1/uploads/{id}`: a photo into the spool, and what became of it.
struct UploadHandler: Sendable {
    let environment: ServiceEnvironment

    /// The form part that holds the photo in a multipart upload.
    static let filePart = "file"

    /// Takes a photo (the raw body with its fields in the query, or a multipart form with a
    /// `file` part and its fields as form fields), checks it is a JPEG or PNG by its bytes, and
    /// writes it into the spool the safe way, with the fields as its sidecar. Answers 202 at
    /// once: processing happens in the workers.
    func accept(_ request: Request) async throws -> Response {
        let started = ContinuousClock.now
        let body = try await environment.collectBody(request)
        let (photo, fields) = try Self.photoAndFields(request, body: body)
        guard !photo.isEmpty else { throw APIError.badRequest("the photo is empty (0 bytes); send its bytes as the body or as a `file` form part") }
        guard let ext = PhotoFormat.fileExtension(of: photo) else { throw APIError.unsupportedMediaType(PhotoFormat.refusal(photo)) }
        let sidecar = try SidecarFields.json(from: fields)
        let id = UploadID.make()
        let spool = environment.spool
        let name = try await environment.writing {
            try spool.enqueue(bytes: photo, name: UploadID.spoolName(id, extension: ext), sidecar: sidecar)
        }
        environment.metrics.recordUploadAccepted(bytes: photo.count, seconds: started.secondsElapsed)
        environment.logger.info("upload accepted", metadata: ["upload": "\(id)", "file": "\(name)", "bytes": "\(photo.count)"])
        let statusURL = UploadID.statusURL(id)
        return JSONBody.response(UploadState(id: id, status: .queued, statusUrl: statusURL), status: .accepted,
                                 headers: [.location: statusURL])
    }

    /// Where the upload `id` is: queued, processing, done, duplicate or failed; 404 when no
    /// upload has this id.
    func status(id: String) async throws -> Response {
        guard UploadID.isValid(id) else { throw APIError.badRequest("\(id) is not an upload id (32 hexadecimal digits, as POST /v1/uploads answers)") }
        let names = PhotoFormat.fileExtensions.map { UploadID.spoolName(id, extension: $0) }
        let environment = environment
        let state = try await environment.blocking { () throws -> UploadState? in
            try Self.state(id: id, names: names, environment: environment)
        }
        guard let state else { throw APIError.notFound("no upload \(id): it was never accepted, or its record is gone") }
        return JSONBody.response(state)
    }

    /// The state of an upload, looked for along the way a photo travels: `incoming/`,
    /// `processing/`, `failed/`, then the catalog's job (committed before the spool lets go).
    private static func state(id: String, names: [String], environment: ServiceEnvironment) throws -> UploadState? {
        var state = UploadState(id: id, status: .queued, statusUrl: UploadID.statusURL(id))
        for name in names {
            switch environment.spool.place(of: name) {
            case .incoming?: return state
            case .processing?:
                state.status = .processing
                return state
            case .failed(let report)?:
                state.status = .failed
                state.reason = report?.reason ?? "failed; the reason file is missing from the spool's failed/"
                return state
            case nil: continue
            }
        }
        guard let job = try environment.catalog.latestJob(sourceNames: names) else { return nil }
        switch job.outcome {
        case .failed:
            state.status = .failed
            state.reason = job.error ?? "failed"
            return state
        case .added, .duplicate:
            state.status = job.outcome == .added ? .done : .duplicate
            if job.outcome == .duplicate { state.duplicateOf = job.pictureId }
            if let pictureId = job.pictureId, let picture = try environment.moments.picture(id: pictureId) {
                state.pictureId = pictureId
                state.momentId = picture.momentId
                state.variants = environment.links.linked(picture).variants
            }
            return state
        }
    }

    /// The photo and its fields: a multipart form's `file` part and other parts, or the raw body
    /// and the query string.
    private static func photoAndFields(_ request: Request, body: [UInt8]) throws -> ([UInt8], [(name: String, value: String)]) {
        let boundary: String?
        do {
            boundary = try MultipartForm.boundary(contentType: request.headers[.contentType])
        } catch {
            throw APIError.badRequest(error.description)
        }
        guard let boundary else {
            let fields = request.uri.queryParameters.map { (name: String($0.key), value: String($0.value)) }
            return (body, fields)
        }
        let form: MultipartForm
        do {
            form = try MultipartForm(body: body, boundary: boundary)
        } catch {
            throw APIError.badRequest(error.description)
        }
        guard let file = form.part(named: filePart) else {
            throw APIError.badRequest("the form has no `\(filePart)` part; send the photo in a part named \(filePart)")
        }
        let fields = form.parts.filter { $0.name != filePart }.map { (name: $0.name, value: String(decoding: $0.content, as: UTF8.self)) }
        return (file.content, fields)
    }
}

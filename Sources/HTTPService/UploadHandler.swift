import Catalog
import Foundation
import Imaging
import Hummingbird
import Operations

/// `POST /v1/uploads` and `GET /v1/uploads/{id}`: a photo into the spool, and what became of it.
struct UploadHandler: Sendable {
    let environment: ServiceEnvironment

    /// The form part that holds the photo in a multipart upload.
    static let filePart = "file"

    /// Takes a photo (the raw body with its fields in the query, or a multipart form with a
    /// `file` part and its fields as form fields), checks it is a JPEG or PNG by its bytes, and
    /// writes it into the spool the safe way, with the fields as its sidecar. Answers 202 once
    /// the photo is durable: processing happens in the workers.
    func accept(_ request: Request) async throws -> Response {
        let started = ContinuousClock.now
        let boundary: String?
        do {
            boundary = try MultipartForm.boundary(contentType: request.headers[.contentType])
        } catch {
            throw APIError.badRequest(error.description)
        }
        let id = UploadID.make()
        let (name, bytes) = if let boundary {
            try await acceptForm(request, boundary: boundary, id: id)
        } else {
            try await acceptStreamed(request, id: id)
        }
        environment.metrics.recordUploadAccepted(bytes: bytes, seconds: started.secondsElapsed)
        environment.logger.info("upload accepted", metadata: ["upload": "\(id)", "file": "\(name)", "bytes": "\(bytes)"])
        let statusURL = UploadID.statusURL(id)
        return JSONBody.response(UploadState(id: id, status: .queued, statusUrl: statusURL), status: .accepted,
                                 headers: [.location: statusURL])
    }

    /// The bytes written to the spool at a time while a raw body streams in: a phone photo is
    /// written in one piece (16 uploads at once, in pieces of 1 MB, were accepted 10–25% slower,
    /// their writes queueing behind other uploads' fsyncs), a larger upload in pieces of this size.
    static let writeChunkBytes = 8 << 20
    /// How much of the start of a photo tells its format (and, when refused, what it looks like).
    static let sniffBytes = 512

    /// A raw body, its fields in the query: the fields are checked before a byte is read, the
    /// body is written into a staged spool file as it arrives (never more than `writeChunkBytes`
    /// of it in memory), told JPEG or PNG by its first bytes (415 at once otherwise), and
    /// published with its sidecar. Returns the spool name and the photo's size.
    private func acceptStreamed(_ request: Request, id: String) async throws -> (String, Int) {
        let sidecar = try SidecarFields.json(from: request.uri.queryParameters.map { (name: String($0.key), value: String($0.value)) })
        let limit = environment.maxBodyBytes
        if let declared = request.headers[.contentLength].flatMap({ Int($0) }), declared > limit { throw APIError.tooLarge(limit: limit) }
        let spool = environment.spool
        let staged = try await environment.writing { try spool.stage() }
        do {
            var head: [UInt8] = []
            var fileExtension: String?
            var pending = ByteBuffer()
            var total = 0
            for try await buffer in request.body {
                total += buffer.readableBytes
                guard total <= limit else { throw APIError.tooLarge(limit: limit) }
                if fileExtension == nil {
                    head += buffer.readableBytesView.prefix(Self.sniffBytes - head.count)
                    if head.count == Self.sniffBytes { fileExtension = try Self.fileExtension(head) }
                }
                pending.writeImmutableBuffer(buffer)
                if pending.readableBytes >= Self.writeChunkBytes {
                    let chunk = pending
                    pending = ByteBuffer()
                    try await environment.writing { try chunk.withUnsafeReadableBytes { try staged.append($0) } }
                }
            }
            let ext = try fileExtension ?? Self.fileExtension(head)
            let last = pending
            let name = try await environment.writing {
                try last.withUnsafeReadableBytes { try staged.append($0) }
                return try staged.publish(name: UploadID.spoolName(id, extension: ext), sidecar: sidecar)
            }
            return (name, total)
        } catch {
            staged.discard()
            throw error
        }
    }

    /// A multipart form: read whole (to find its parts), then written into the spool.
    private func acceptForm(_ request: Request, boundary: String, id: String) async throws -> (String, Int) {
        let body = try await environment.collectBody(request)
        let form: MultipartForm
        do {
            form = try MultipartForm(body: body, boundary: boundary)
        } catch {
            throw APIError.badRequest(error.description)
        }
        guard let file = form.part(named: Self.filePart) else {
            throw APIError.badRequest("the form has no `\(Self.filePart)` part; send the photo in a part named \(Self.filePart)")
        }
        let fields = form.parts.filter { $0.name != Self.filePart }.map { (name: $0.name, value: String(decoding: $0.content, as: UTF8.self)) }
        let sidecar = try SidecarFields.json(from: fields)
        let photo = file.content
        let ext = try Self.fileExtension(photo)
        let spool = environment.spool
        let name = try await environment.writing {
            try spool.enqueue(bytes: photo, name: UploadID.spoolName(id, extension: ext), sidecar: sidecar)
        }
        return (name, photo.count)
    }

    /// The spool extension of a photo told by its first bytes: 400 when there are none, 415
    /// when they are neither JPEG nor PNG.
    private static func fileExtension(_ head: [UInt8]) throws -> String {
        guard !head.isEmpty else { throw APIError.badRequest("the photo is empty (0 bytes); send its bytes as the body or as a `file` form part") }
        guard let ext = PhotoFormat.fileExtension(of: head) else { throw APIError.unsupportedMediaType(PhotoFormat.refusal(head)) }
        return ext
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
}

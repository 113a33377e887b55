import Catalog
import Foundation
import ServiceObservability
import Storage
import Imaging
import Hummingbird
import Multipart
import NIOCore
import Operations

/// `POST /v1/uploads` and `GET /v1/uploads/{id}`: a photo into the spool, and what became of it.
struct UploadHandler: Sendable {
    let environment: ServiceEnvironment

    /// The form part that holds the photo in a multipart upload.
    static let filePart = "file"

    /// Takes a photo (the raw body with its fields in the query, or a multipart form with a
    /// `file` part and its fields as form fields), checks it is a JPEG, PNG, HEIC, HEIF or AVIF by its bytes, and
    /// writes it into the spool the safe way, with the fields as its sidecar. Answers 202 once
    /// the photo is durable: processing happens in the workers.
    func accept(_ request: Request) async throws -> Response {
        let started = ContinuousClock.now
        let outage = environment.jobs?.availability.outage
        if let outage, environment.spool.staging != nil {
            // With no shared directory, a photo is accepted only once its job is recorded: during
            // an outage of the database it is refused before a byte of its body is read, and the
            // client knows at once to send it again (`Retry-After`), here or to another machine.
            throw APIError.unavailable("the catalog's database cannot be reached (for \(Int(Date().timeIntervalSince(outage.since).rounded())) s); "
                                       + "send the photo again in a few seconds")
        }
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
        if let jobs = environment.jobs, environment.spool.staging != nil {
            // No directory shared with the other machines: 202 only once the photo is in the
            // bucket's staging area and its job recorded; else 503, and nothing of it is kept.
            let spool = environment.spool
            // `name` is the photo's place under queued/ (`TOKEN/NAME`): no scan has seen it.
            let file = name
            do {
                try await environment.blocking {
                    do {
                        try spool.publishQueued(file)
                        try jobs.admitPhotos(files: [file], urgent: true)
                    } catch {
                        try? spool.staging?.discard(file, failure: nil)
                        spool.consumeQueued(file)
                        throw error
                    }
                }
            } catch {
                environment.logger.warning("upload not staged; refused for now", metadata: [
                    "upload": "\(id)", "file": "\(name)", "reason": "\(error)"])
                throw APIError.unavailable("the photo could not be stored where every machine finds it (the bucket or the database "
                                           + "does not answer); send it again in a few seconds")
            }
            environment.handOff?(name)
        } else if environment.jobs != nil, outage != nil {
            // The database is out: the photo waits in incoming/, durable, and a worker's scan
            // records its job once the database is back.
            environment.logger.info("upload accepted during an outage of the database; queued when it is back",
                                    metadata: ["upload": "\(id)", "file": "\(name)"])
        } else if let jobs = environment.jobs {
            // A job of the shared queue at once, in the urgent lane: a worker on any machine
            // may take it. The photo is durable in the spool already: should this fail, a
            // worker's scan (or reconciliation) queues it. The answer waits for it, but not for
            // long: a database that stops answering just now would otherwise hold the upload
            // until the statement's deadline, and the photo is safe either way.
            let (environment, handOff) = (environment, environment.handOff)
            let admission = Task {
                let spool = environment.spool
                do {
                    try await environment.blocking {
                        guard let file = try spool.admit(name) else { return }
                        spool.clearUrgent(name)
                        try jobs.admitPhotos(files: [file], urgent: true)
                    }
                } catch {
                    environment.logger.warning("upload accepted but not yet queued; a worker's scan queues it",
                                               metadata: ["upload": "\(id)", "file": "\(name)", "reason": "\(error)"])
                }
                // Straight to this process's workers, ahead of any backlog: no scan to wait for.
                handOff?(name)
            }
            _ = await ServiceEnvironment.wait(for: admission, atMost: Self.admissionWaitSeconds)
        } else {
            environment.handOff?(name)
        }
        environment.metrics.recordUploadAccepted(bytes: bytes, seconds: started.secondsElapsed, id: id)
        environment.logger.info("upload accepted", metadata: ["upload": "\(id)", "file": "\(name)", "bytes": "\(bytes)",
                                                              "request_id": "\(RequestID.current ?? "-")"])
        let statusURL = UploadID.statusURL(id)
        return JSONBody.response(UploadState(id: id, status: .queued, statusUrl: statusURL), status: .accepted,
                                 headers: [.location: statusURL])
    }

    /// How long an accepted upload's answer waits for its job to be recorded.
    static let admissionWaitSeconds = 1.5

    /// Starts an upload's file: in `incoming/`, or, when machines share no directory, in a folder
    /// of its own under `queued/` (its token returned), where no scan takes it before its own
    /// request has staged it in the bucket and recorded its job.
    private static func stage(in spool: Spool) throws -> (StagedPhoto, String?) {
        guard spool.staging != nil else { return (try spool.stage(), nil) }
        let (photo, token) = try spool.stageQueued()
        return (photo, token)
    }

    /// Publishes an upload in the spool as urgent: marked before it comes into view, so that any
    /// worker's scan puts it ahead of the backlog (the mark is removed if publishing fails). With
    /// a `token`, it is published in its own folder under `queued/` instead, and its place there
    /// (`TOKEN/NAME`) is returned.
    private static func publish(_ staged: StagedPhoto, as name: String, sidecar: [UInt8]?, in spool: Spool, token: String?) throws -> String {
        if let token { return token + "/" + (try staged.publish(name: name, sidecar: sidecar)) }
        spool.markUrgent(name)
        do {
            return try staged.publish(name: name, sidecar: sidecar)
        } catch {
            spool.clearUrgent(name)
            throw error
        }
    }

    /// The bytes of a body held in memory before they are written to the spool: what one upload
    /// holds whatever its pace (a slow client never makes it grow), so that a hundred slow
    /// uploads hold a few tens of megabytes. The writes themselves never fsync; the one fsync
    /// comes when the photo is published.
    static let writeChunkBytes = 256 << 10
    /// How much of the start of a photo tells its format (and, when refused, what it looks like).
    static let sniffBytes = 512

    /// A raw body, its fields in the query: the fields are checked before a byte is read, the
    /// body is written into a staged spool file as it arrives (never more than `writeChunkBytes`
    /// of it in memory), told JPEG, PNG or HEIF by its first bytes (415 at once otherwise), and
    /// published with its sidecar. Returns the spool name and the photo's size.
    private func acceptStreamed(_ request: Request, id: String) async throws -> (String, Int) {
        let sidecar = try SidecarFields.json(from: request.uri.queryParameters.map { (name: String($0.key), value: String($0.value)) })
        let limit = environment.maxBodyBytes
        if let declared = request.headers[.contentLength].flatMap({ Int($0) }), declared > limit { throw APIError.tooLarge(limit: limit) }
        let spool = environment.spool
        let (staged, token) = try await environment.writing { try Self.stage(in: spool) }
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
                return try Self.publish(staged, as: UploadID.spoolName(id, extension: ext), sidecar: sidecar, in: spool, token: token)
            }
            return (name, total)
        } catch {
            staged.discard()
            if let token { spool.removeQueuedFolder(token) }
            throw error
        }
    }

    /// A multipart form, parsed as it streams in (`MultipartStream`): the `file` part is
    /// written into a staged spool file as it arrives, like a raw body, and the other parts are
    /// kept as fields up to their limit (`FieldLimits`). A form with too many parts or too long
    /// headers is answered 413, a field too long 400, as soon as the bytes show it: what one
    /// request holds in memory is a chunk of the file and a few kilobytes of fields.
    private func acceptForm(_ request: Request, boundary: String, id: String) async throws -> (String, Int) {
        let limit = environment.maxBodyBytes
        if let declared = request.headers[.contentLength].flatMap({ Int($0) }), declared > limit { throw APIError.tooLarge(limit: limit) }
        // Fields in the query join the form's (one in both is refused as given twice), as the
        // OpenAPI document's query parameters say; checked before a byte of the body is read.
        let queryFields = request.uri.queryParameters.map { (name: String($0.key), value: String($0.value)) }
        _ = try SidecarFields.json(from: queryFields)
        let spool = environment.spool
        let (staged, token) = try await environment.writing { try Self.stage(in: spool) }
        do {
            var form = FormReader(boundary: boundary)
            var total = 0
            for try await buffer in request.body {
                total += buffer.readableBytes
                guard total <= limit else { throw APIError.tooLarge(limit: limit) }
                try form.feed(buffer.readableBytesView)
                if form.pending.readableBytes >= Self.writeChunkBytes {
                    let chunk = form.takePending()
                    try await environment.writing { try chunk.withUnsafeReadableBytes { try staged.append($0) } }
                }
            }
            try form.finish()
            guard form.sawFile else {
                throw APIError.badRequest("the form has no `\(Self.filePart)` part; send the photo in a part named \(Self.filePart)")
            }
            let ext = try form.fileExtension ?? Self.fileExtension(form.head)
            let sidecar = try SidecarFields.json(from: queryFields + form.fields)
            let last = form.takePending()
            let name = try await environment.writing {
                try last.withUnsafeReadableBytes { try staged.append($0) }
                return try Self.publish(staged, as: UploadID.spoolName(id, extension: ext), sidecar: sidecar, in: spool, token: token)
            }
            return (name, form.fileBytes)
        } catch {
            staged.discard()
            if let token { spool.removeQueuedFolder(token) }
            throw error
        }
    }

    /// The state of one multipart upload as its body streams in: the photo's bytes not yet
    /// written, its first bytes (to tell its format), and the fields read so far.
    private struct FormReader {
        var stream: MultipartStream
        var fields: [(name: String, value: String)] = []
        var pending = ByteBuffer()
        var head: [UInt8] = []
        var fileExtension: String?
        var fileBytes = 0
        var sawFile = false
        /// The part being read: nil for the photo, else a field's name and bytes so far.
        private var field: (name: String, bytes: [UInt8])?
        private var inFile = false

        init(boundary: String) {
            stream = MultipartStream(boundary: boundary)
        }

        mutating func feed(_ bytes: ByteBufferView) throws {
            do {
                var stream = stream
                defer { self.stream = stream }
                try stream.feed(bytes) { event in try handle(event) }
            } catch let problem as MultipartForm.Problem {
                throw APIError.form(problem)
            }
        }

        mutating func finish() throws {
            do {
                try stream.finish()
            } catch {
                throw APIError.form(error)
            }
        }

        mutating func takePending() -> ByteBuffer {
            defer { pending = ByteBuffer() }
            return pending
        }

        private mutating func handle(_ event: MultipartStream.Event) throws {
            switch event {
            case .partStarted(let name, _, _) where name == UploadHandler.filePart:
                guard !sawFile else { throw APIError.badRequest("the form has two `\(UploadHandler.filePart)` parts; send one photo per upload") }
                sawFile = true
                inFile = true
            case .partStarted(let name, _, _):
                guard SidecarFields.names.contains(name) else {
                    throw FieldError(name, "is not a field of an upload; use \(SidecarFields.names.joined(separator: ", "))")
                }
                field = (name, [])
            case .content(let bytes) where inFile:
                fileBytes += bytes.count
                if fileExtension == nil {
                    head += bytes.prefix(UploadHandler.sniffBytes - head.count)
                    if head.count == UploadHandler.sniffBytes { fileExtension = try UploadHandler.fileExtension(head) }
                }
                pending.writeBytes(bytes)
            case .content(let bytes):
                guard var current = field else { return }
                let limit = FieldLimits.bytes(of: current.name)
                guard current.bytes.count + bytes.count <= limit else {
                    throw FieldError(current.name, "is longer than \(limit) bytes")
                }
                current.bytes += bytes
                field = current
            case .partEnded:
                if let field { fields.append((name: field.name, value: String(decoding: field.bytes, as: UTF8.self))) }
                field = nil
                inFile = false
            }
        }
    }

    /// The spool extension of a photo told by its first bytes: 400 when there are none, 415
    /// when they are neither JPEG nor PNG.
    fileprivate static func fileExtension(_ head: [UInt8]) throws -> String {
        guard !head.isEmpty else { throw APIError.badRequest("the photo is empty (0 bytes); send its bytes as the body or as a `file` form part") }
        guard let ext = PhotoFormat.fileExtension(of: head) else { throw APIError.unsupportedMediaType(PhotoFormat.refusal(head)) }
        return ext
    }

    /// Where the upload `id` is: queued, processing, done, duplicate or failed; 404 when no
    /// upload has this id.
    /// With `wait` seconds, the answer comes as soon as the upload is done, a duplicate or failed,
    /// or with its state when the wait runs out: the request is woken when the photo's outcome
    /// is recorded (`UploadWaiters`), and looks again only every `waitStep` besides (an outcome
    /// recorded on another machine). Past `server.max_status_waiters` waiting at once, or while
    /// the server stops, it answers at once.
    /// `connection`: the request's own; a wait ends as soon as it closes (the client left).
    func status(id: String, wait: Double = 0, connection: (any Channel)? = nil) async throws -> Response {
        guard UploadID.isValid(id) else { throw APIError.badRequest("\(id) is not an upload id (32 hexadecimal digits, as POST /v1/uploads answers)") }
        let names = PhotoFormat.fileExtensions.map { UploadID.spoolName(id, extension: $0) }
        let environment = environment
        let deadline = ContinuousClock.now + .milliseconds(Int(wait * 1000))
        let waiter = wait > 0 ? environment.waiters.enter(id) : nil
        defer { if let waiter { environment.waiters.leave(waiter) } }
        if let waiter, let connection { connection.closeFuture.whenComplete { _ in waiter.signal() } }
        while true {
            let state = try await environment.blocking { () throws -> UploadState? in
                try Self.state(id: id, names: names, environment: environment)
            }
            guard let state else { throw APIError.notFound("no upload \(id): it was never accepted, or its record is gone") }
            if state.status.isFinal { environment.metrics.recordUploadEnded(id: id) }
            guard let waiter, !state.status.isFinal, ContinuousClock.now < deadline, !environment.waiters.isStopped, !Task.isCancelled,
                  connection?.isActive != false else {
                return JSONBody.response(state)
            }
            let step = environment.jobs == nil || environment.waiters.outcomesArrive ? Self.waitStep : Self.sharedQueueWaitStep
            await waiter.next(atMost: min(step, deadline - ContinuousClock.now))
        }
    }

    /// The longest `?wait=` taken, in seconds.
    static let longestWait = 60.0
    /// How often a waiting status request looks again without being woken.
    static let waitStep = Duration.seconds(2)
    /// The same with a shared job queue while the database's notices of ended jobs do not
    /// reach this process (its listening connection is away): a photo's outcome is recorded in
    /// the catalog, often by another machine, and no folder of this spool shows it, so a
    /// waiting request looks again this often (`darkroom-bench bucket` measured upload to done
    /// at 2,036 ms for 135 ms of processing with the 2 s step alone, 241 ms with 100 ms). At
    /// most `server.max_status_waiters` lookups each step.
    static let sharedQueueWaitStep = Duration.milliseconds(20)

    /// The state of an upload, looked for along the way a photo travels: `incoming/`,
    /// `processing/`, `failed/`, then the catalog's job (committed before the spool lets go).
    /// With the shared queue a photo moves from `incoming/` into `queued/` before its job row
    /// is written, and an answer can come before the row does (`admissionWaitSeconds`), or the
    /// row can wait for a reconciliation: found in neither place, the photo is looked for in
    /// `queued/`, and the catalog asked again should it have left meanwhile.
    private static func state(id: String, names: [String], environment: ServiceEnvironment) throws -> UploadState? {
        if let state = try recordedState(id: id, names: names, environment: environment) { return state }
        if environment.jobs != nil {
            let waiting = names.contains(where: environment.spool.isQueued)
            // Asked again either way: the photo may have been processed and left meanwhile.
            if let state = try recordedState(id: id, names: names, environment: environment) { return state }
            if waiting { return UploadState(id: id, status: .queued, statusUrl: UploadID.statusURL(id)) }
        }
        return try DirectUploadHandler.granted(id: id, environment: environment)
    }

    /// The state from the spool's areas a photo passes through and the catalog; nil when neither has it.
    private static func recordedState(id: String, names: [String], environment: ServiceEnvironment) throws -> UploadState? {
        var state = UploadState(id: id, status: .queued, statusUrl: UploadID.statusURL(id))
        for name in names {
            switch environment.spool.place(of: name) {
            case .incoming?: return state
            case .processing?:
                state.status = .processing
                return state
            case .failed(let report)?:
                state.status = .failed
                state.reason = environment.redaction.scrub(report?.reason ?? "failed; the reason file is missing from the spool's failed/")
                return state
            case nil: continue
            }
        }
        // Between `incoming/` and its commit, a photo of the shared queue is a job there.
        if let held = try environment.jobs?.isPhotoHeld(sourceNames: names) {
            state.status = held ? .processing : .queued
            return state
        }
        guard let job = try environment.catalog.latestJob(sourceNames: names) else { return nil }
        switch job.outcome {
        case .failed:
            state.status = .failed
            state.reason = environment.redaction.scrub(job.error ?? "failed")
            return state
        case .added, .duplicate:
            state.status = job.outcome == .added ? .done : .duplicate
            if job.outcome == .duplicate { state.duplicateOf = job.pictureId }
            if let pictureId = job.pictureId, let picture = try environment.moments.picture(id: pictureId) {
                state.pictureId = pictureId
                state.momentId = picture.momentId
                state.variants = environment.links.linked(picture).variants
                state.capturedAtSource = picture.capturedAtSource
                state.locationSource = picture.locationSource
                state.camera = picture.camera
            }
            return state
        }
    }
}

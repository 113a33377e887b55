import ArgumentParser
import Foundation
import HTTPService
import Logging
import Terminal

struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Serve the backend's upload hook and read API over HTTP.",
        discussion: """
        Listens on server.host and server.port (loopback by default) and, unless \
        server.run_workers is false or --no-workers is given, runs the spool workers in the same \
        process, as `darkroom run` does, their threads server.worker_niceness (10) nice steps \
        below the server's so that uploads are answered first; without them, `darkroom run` \
        processes beside it do the work.

        POST /v1/uploads takes a photo, as the raw body with its fields in the query string, or \
        as multipart/form-data with a `file` part and its fields as form fields: author_id, \
        moment_id, title, visibility, focal_x and focal_y (0 to 1), latitude, longitude, \
        altitude, taken_at, the keys of a sidecar. Only JPEG, PNG, HEIC, HEIF and AVIF are taken, told by their \
        bytes (415 otherwise), up to server.max_upload_bytes (413). The photo is written into \
        spool/incoming/ the safe way and answered 202 as soon as it is durable (fsynced), \
        without waiting for processing, with an upload id; \
        GET /v1/uploads/ID tells whether it is queued, processing, done (with its picture, \
        moment and variant URLs), a duplicate (of which picture) or failed (with the reason). \
        With the catalog in PostgreSQL (catalog.url), an accepted upload becomes a job of the \
        shared queue at once, taken first by the workers of any machine.

        The read API: GET /v1/pictures/ID, GET /v1/moments/ID, GET /v1/moments/ID/pictures \
        (stable order, ?limit= and ?after= for paging), GET /v1/places/around?lat=&long=&rad=; \
        the backend's declarations: POST /v1/places, POST /v1/moments, PUT /v1/moments/ID/cover \
        (by the moment's creator). Variant files are served under /v1/media/ with an ETag and \
        immutable caching, or left to a static server when server.media_base_url is set. \
        GET /healthz answers while the process runs, GET /healthz/ready when the catalog \
        answers and can be written and the spool and library are writable with room for an \
        upload (503 otherwise, naming which), GET /metrics in the Prometheus text format. \
        GET /openapi.json describes every route.

        Every request must carry `Authorization: Bearer TOKEN`, the token of server.token or, \
        when that is null, of DARKROOM_API_TOKEN; without one, serve refuses to start. Errors \
        are answered as {"error": "one line"}. Only /openapi.json needs no token, and the admin \
        listener: /healthz, /healthz/ready and /metrics on server.admin_host (127.0.0.1) and \
        server.admin_port (server.port + 1 by default; 0 turns it off), on a thread of its own, \
        for a service manager's probe or a Prometheus scrape.

        Hostile clients: a request refused before its body is answered at once with \
        `Connection: close` and its body is never read; a whole request must arrive within \
        server.request_deadline_seconds and its body at server.min_bytes_per_second; one client \
        address holds at most server.max_connections_per_client connections.

        With webhooks.urls set, it also delivers every event of the catalog's outbox \
        (picture.added, moment.created, moment.cover_changed, ...) to each URL as a POST signed \
        with HMAC-SHA256 (header X-Darkroom-Signature, key webhooks.secret or \
        DARKROOM_WEBHOOK_SECRET), retried with backoff until a 2xx, in order per moment.

        On SIGTERM or SIGINT it stops accepting connections, answers the requests in flight \
        (cutting a client still sending after server.stop_grace_seconds), lets the workers \
        finish the photos in hand, and exits 0.
        """)

    @OptionGroup var options: ConfigOption

    @Flag(help: "Do not run the spool workers in this process (overrides server.run_workers).")
    var noWorkers = false

    @Option(help: ArgumentHelp("The address to listen on (default: server.host).", valueName: "address"))
    var host: String?

    @Option(help: ArgumentHelp("The TCP port, 0 for any free one (default: server.port).", valueName: "port"))
    var port: Int?

    @Option(help: ArgumentHelp("Log lines as human-readable text or as JSON objects.", valueName: "text|json"))
    var logFormat: LogFormatArgument = .text

    func validate() throws {
        if let port, !(0...Int(UInt16.max)).contains(port) {
            throw ValidationError("--port must be from 0 to \(UInt16.max) (got \(port))")
        }
    }

    func run() async throws {
        var configuration = try options.load(starting: .serve)
        if let host { configuration.server.host = host }
        if let port { configuration.server.port = port }
        let runWorkers = configuration.server.runWorkers && !noWorkers
        let logger = logFormat.bootstrap()
        // The HTTP handlers' blocking work shares the PostgreSQL pool with the workers.
        let catalog = try CatalogChoice.open(configuration, extraConnections: ProcessInfo.processInfo.activeProcessorCount + 2)
        let library = try LibraryChoice.open(configuration, shared: catalog.jobs != nil)
        let server = try APIServer(configuration: configuration, catalog: catalog.store, jobs: catalog.jobs,
                                   runWorkers: runWorkers, library: library.store, staging: library.staging, logger: logger)
        let fields: Logger.Metadata = [
            "workers": "\(runWorkers ? configuration.effectiveConcurrency : 0)",
            "spool": "\(configuration.spoolRoot)", "catalog": "\(catalog.location)",
        ]
        let host = configuration.server.host
        try await server.run { port in
            logger.info("darkroom serve", metadata: fields.merging(["address": "http://\(host):\(port)", "port": "\(port)"]) { $1 })
            // Listening, with the catalog open and the spool created: ready for the service manager.
            ServiceManager.notify("READY=1\nSTATUS=listening on \(host):\(port)")
        }
        await library.close()
        logger.info("darkroom serve stopped")
    }
}

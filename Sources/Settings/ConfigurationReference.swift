import Foundation

/// The meaning of every setting, in the order of `config show`: `darkroom config reference`
/// prints it as the Markdown of docs/configuration.md, each key with its built-in default, so
/// that the page is the code's own table and a test holds the two equal.
public enum ConfigurationReference {
    /// Each dotted key with what it means (Markdown; links relative to docs/).
    public static let meanings: [(key: String, meaning: String)] = [
        ("variants", "Each `{name, fit, width, height, format, quality}`. `contain`: fits inside width×height; `cover`: exactly width×height, cropped. Never upscaled. `format`: `jpeg` (the default, what the backend's apps expect) or `webp` (lossy, the source's ICC profile kept, stored as `.webp` and served as `image/webp`)."),
        ("feed_variant", "The variant whose crop is stored as the picture's feed crop."),
        ("imaging.pixel_limit", "Photos with more pixels are refused before any large allocation (decompression bombs); a progressive JPEG is also refused when its coefficients would take more than 2 bytes per pixel of this."),
        ("imaging.max_file_bytes", "The largest photo file read, in bytes: a larger one is refused from its size, before any of it is read."),
        ("imaging.background", "Transparent PNGs are flattened on this colour."),
        ("imaging.crop", "Where `cover` crops go without a focal point: `attention` (edges, saturation, skin tones) or `centre`."),
        ("imaging.colour", "`srgb`: a photo whose ICC profile is not sRGB (Display P3, Adobe RGB) is converted to sRGB with lcms2 and its variants carry no profile. `keep`: the pixels stay in the photo's own space and its profile goes into every variant."),
        ("metadata.default_time_zone", "The zone assumed for capture times with no offset (marked *assumed*)."),
        ("spool.root", "The spool (see [spool.md](spool.md))."),
        ("spool.settle_seconds", "Where the kernel cannot tell whether a file is still open for writing, how long it must stay unchanged before it is taken."),
        ("spool.lease_seconds", "After this long without renewal, another worker takes a claim back (renewed every third of it)."),
        ("spool.scan_interval_seconds", "The daemon's periodic scan, behind inotify."),
        ("library.root", "Originals at `originals/ab/cd/<sha256>.<ext>`, variants at `variants/<name>/ab/cd/<sha256>.jpg`."),
        ("library.backup_dir", "A second copy of every original."),
        ("library.url", "`s3://BUCKET/PREFIX`: the library in an S3-compatible bucket instead of `library.root` (see [several-machines.md](several-machines.md))."),
        ("library.s3.endpoint", "The S3 service's URL; when null, `AWS_ENDPOINT_URL`, else AWS's endpoint of the region."),
        ("library.s3.region", "The region requests are signed for; when null, `AWS_REGION`, else `us-east-1`."),
        ("library.s3.path_style", "Path-style addressing (`endpoint/BUCKET/KEY`); when null, path-style when an endpoint is given."),
        ("library.public_url", "A CDN or public bucket in front of the library: variant URLs point there."),
        ("library.presign_seconds", "Variant URLs are presigned GETs valid this long (at most 604800)."),
        ("library.direct_upload_seconds", "How long a direct upload's presigned PUT (`POST /v1/uploads/presign`) stays valid (at most 604800); an upload not completed by then is removed."),
        ("catalog.path", "The SQLite catalog (WAL), created and migrated on start."),
        ("catalog.url", "A PostgreSQL catalog, `postgres://user[:password]@host[:port]/database[?sslmode=disable|prefer|require]`, in place of the SQLite file; when null, `DARKROOM_CATALOG_URL`. The password may also come from `PGPASSWORD`; one holding a reserved character (`#`, `/`, `?`, `@`, `%`) must be percent-encoded."),
        ("catalog.connect_timeout_seconds", "PostgreSQL: how long making a connection (TLS and the start-up included) may take."),
        ("catalog.statement_timeout_seconds", "PostgreSQL: how long one statement may wait for its answer before its connection is given up as lost. Migrations, `moments rebuild` and `catalog copy` have hours."),
        ("catalog.transaction_timeout_seconds", "PostgreSQL: how long one transaction may take, all its statements together."),
        ("worker.concurrency", "Photos processed at once; 0: one per core, one more with a PostgreSQL catalog."),
        ("worker.pixel_budget", "Source pixels in flight at once: one huge photo runs alone."),
        ("worker.photo_timeout_seconds", "A photo taking longer is stopped where it is (the decoders check this deadline as they run) and failed as `timeout`."),
        ("worker.max_attempts", "Tries for transient errors (disk full, catalog busy), with exponential backoff."),
        ("worker.retry_base_seconds", "The first backoff of `worker.max_attempts`, doubling at each try."),
        ("worker.max_recoveries", "Times a photo may be taken back from a worker that died on it before it is failed as `crashed`."),
        ("moments.automatic_radius_metres", "Distance within which an author's photos form one automatic moment; the radius of places made for them."),
        ("moments.automatic_time_gap_seconds", "Time within which they do."),
        ("moments.automatic_visibility", "Visibility of automatic moments: `private` or `public`."),
        ("moments.cover_margin", "How much better (on a 0–1 score) a picture must be to take the cover."),
        ("moments.cover_policy", "`best` or `first` (see [moments.md](moments.md))."),
        ("moments.grace_after_seconds", "How late a photo still joins a declared moment."),
        ("moments.grace_before_seconds", "How early a photo still joins a declared moment."),
        ("server.host", "Where `darkroom serve` listens (loopback unless opened up)."),
        ("server.port", "Its TCP port; 0 takes any free one."),
        ("server.token", "The bearer token every request must carry; when null, `DARKROOM_API_TOKEN`. `serve` refuses to start without one."),
        ("server.max_upload_bytes", "Larger uploads are answered 413."),
        ("server.media_base_url", "Null: variants are served under `/v1/media/`. A URL: variant URLs point there, for a static server over `library.root`."),
        ("server.run_workers", "Whether `serve` also runs the spool's workers in its own process (false: `darkroom run` processes beside it)."),
        ("server.upload_threads", "Threads writing accepted uploads into the spool (each waits for its fsync)."),
        ("server.worker_niceness", "How many `nice` steps below the server the spool workers' threads run in `serve` (0 to 19)."),
        ("server.header_timeout_seconds", "A new connection must send its whole first request head within this, or it is closed."),
        ("server.idle_timeout_seconds", "A connection that reads no byte for this long is closed (a request being answered is never cut)."),
        ("server.max_connections", "Connections open at once; past it new connections wait in the kernel's listen queue."),
        ("server.max_connections_per_client", "Connections open at once from one client address; one past it is closed as soon as it is accepted. Behind a proxy every client has its address: raise this to `server.max_connections` there."),
        ("server.listen_backlog", "Connections the kernel holds before the server accepts them (capped by `net.core.somaxconn`). A full queue drops a new client's attempt, which waits a second or more to try again."),
        ("server.request_deadline_seconds", "A whole request (head and body) must arrive within this, or its connection is cut (answering it is not bounded)."),
        ("server.min_bytes_per_second", "After `server.min_rate_grace_seconds`, a request body arriving slower than this on average is cut (only time spent waiting for the client counts); 0: no minimum."),
        ("server.min_rate_grace_seconds", "The first seconds of a request body, to which no minimum rate applies."),
        ("server.stop_grace_seconds", "On SIGTERM, how long a client still sending a request may go on before its connection is cut."),
        ("server.max_status_waiters", "`GET /v1/uploads/{id}?wait=` requests waiting at once; past it, one is answered at once with the upload's state."),
        ("server.admin_host", "Where the admin listener (`/healthz`, `/healthz/ready`, `/metrics`, no token) listens."),
        ("server.admin_port", "The admin listener's port; null: `server.port` + 1 (any free port when `server.port` is 0); 0: no admin listener."),
        ("webhooks.urls", "Endpoints that receive every outbox event as a signed POST (see [webhooks.md](webhooks.md)); empty turns delivery off."),
        ("webhooks.secret", "The HMAC-SHA256 key; when null, `DARKROOM_WEBHOOK_SECRET`. Required when `urls` is not empty: `serve` and `run` refuse to start without it."),
        ("webhooks.timeout_seconds", "How long an endpoint has to answer."),
        ("webhooks.retry_base_seconds", "A failed delivery is tried again after this, doubling at each try."),
        ("webhooks.retry_max_seconds", "The longest wait between two tries of one event."),
        ("webhooks.poll_interval_seconds", "How often the outbox is read when nothing is due."),
    ]

    /// The keys of `config show` that have no meaning written above, and the meanings whose key
    /// `config show` does not know: both empty when the table is complete.
    public static func gaps() -> (undescribed: [String], unknown: [String]) {
        let keys = Configuration.defaults.settingsList().map(\.0)
        let described = Set(meanings.map(\.key))
        return (keys.filter { !described.contains($0) }, meanings.map(\.key).filter { !keys.contains($0) })
    }

    /// docs/configuration.md: the settings with their defaults and meanings, and the
    /// environment variables that stand in for some of them.
    public static func markdown() -> String {
        let meaning = Dictionary(meanings.map { ($0.key, $0.meaning) }, uniquingKeysWith: { first, _ in first })
        var lines = [
            "# Configuration reference",
            "",
            "<!-- Generated by `darkroom config reference`; a test holds this page equal to its output. -->",
            "",
            "Darkroom reads `--config FILE`, else `$DARKROOM_CONFIG`, else `./pipeline.json`, else the",
            "built-in defaults below (the same values as the bundled `pipeline.json`). Every key is",
            "optional. An unknown key, a value out of range and a JSON mistake are refused with the",
            "file, the key (or the line and column) and what to do. Relative paths are relative to",
            "the directory Darkroom runs in.",
            "",
            "```sh",
            "darkroom config check                # every effective value and its source; exit 1 on a problem",
            "DARKROOM_API_TOKEN=s3cret darkroom config check --for serve   # and what would stop serve from starting",
            "darkroom config show --json          # the effective settings for programs",
            "```",
            "",
            "| key | default | meaning |",
            "|---|---|---|",
        ]
        for (key, value) in Configuration.defaults.settingsList() {
            let shown = key == "variants" ? "thumb, preview, mobile, feed (see `pipeline.json`)" : "`\(value)`"
            lines.append("| `\(key)` | \(shown) | \((meaning[key] ?? "(not yet described)").replacingOccurrences(of: "|", with: "\\|")) |")
        }
        lines += [
            "",
            "## From the environment",
            "",
            "| variable | stands in for |",
            "|---|---|",
            "| `DARKROOM_CONFIG` | the configuration file, when `--config` is not given |",
            "| `DARKROOM_API_TOKEN` | `server.token`, when the file leaves it null |",
            "| `DARKROOM_WEBHOOK_SECRET` | `webhooks.secret`, when the file leaves it null |",
            "| `DARKROOM_CATALOG_URL` | `catalog.url`, when the file leaves it null |",
            "| `PGPASSWORD` | the PostgreSQL password, when the address has none |",
            "| `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN` | the bucket's credentials (never read from the file) |",
            "| `AWS_ENDPOINT_URL`, `AWS_REGION` | `library.s3.endpoint`, `library.s3.region` |",
            "",
        ]
        return lines.joined(separator: "\n")
    }
}

import GRDB

/// The catalog's migrations, registered by name in one place.
///
/// A migration is never edited once released: a change to the schema is a new migration
/// appended at the end, so that every existing catalog moves forward the same way.
enum CatalogSchema {
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1-pictures-variants-jobs-outbox") { db in
            try createPlacesAndMoments(db)
            try createPictures(db)
            try createVariants(db)
            try createJobs(db)
            try createOutbox(db)
        }
        migrator.registerMigration("v2-moment-facts-and-indexes") { db in
            try createMomentIndexes(db)
        }
        migrator.registerMigration("v3-imports") { db in
            try createImports(db)
        }
        migrator.registerMigration("v4-moment-time-by-moment") { db in
            // A moment's window is min and max of its pictures' times: two probes of this index
            // instead of a read of every picture in the moment.
            try db.execute(sql: "CREATE INDEX pictures_moment_time ON pictures(moment_id, moment_time)")
        }
        migrator.registerMigration("v5-webhook-deliveries") { db in
            try createWebhookDeliveries(db)
        }
        migrator.registerMigration("v6-jobs-by-source-name") { db in
            // `GET /v1/uploads/{id}` finds the job of an upload by the name it was spooled under.
            try db.create(index: "jobs_on_source_name", on: "jobs", columns: ["source_name"])
        }
        migrator.registerMigration("v7-webhook-delivery-totals") { db in
            try createWebhookDeliveryTotals(db)
        }
        migrator.registerMigration("v8-jobs-failure-category") { db in
            // The category each error carries where it is made: what metrics and reports group
            // failures by. Jobs failed before it was kept have none.
            try db.alter(table: "jobs") { t in t.add(column: "failure_category", .text) }
        }
        migrator.registerMigration("v9-camera-values") { db in
            // The camera's own time and place when the backend's explicit values replaced them,
            // so that the read API shows both.
            try db.alter(table: "pictures") { t in
                t.add(column: "camera_captured_at", .double)
                t.add(column: "camera_latitude", .double)
                t.add(column: "camera_longitude", .double)
            }
        }
        migrator.registerMigration("v10-job-duration-computed") { db in
            // The stored duration was computed when the record was made, before its end was
            // set: negative for every photo added or found a duplicate. The column now follows
            // the job's start and end, for the rows already written too; null while unfinished.
            try db.execute(sql: """
                ALTER TABLE jobs DROP COLUMN duration_ms;
                ALTER TABLE jobs ADD COLUMN duration_ms REAL GENERATED ALWAYS AS (
                    CASE WHEN finished_at > 0 AND finished_at >= started_at THEN (finished_at - started_at) * 1000 END
                ) VIRTUAL;
                """)
        }
        migrator.registerMigration("v11-picture-thumb-hash") { db in
            // The picture's placeholder (a ThumbHash, base64), which apps paint before the thumb
            // arrives. Pictures added before it have none.
            try db.alter(table: "pictures") { t in t.add(column: "thumb_hash", .text) }
        }
        migrator.registerMigration("v12-picture-time-zone-source") { db in
            // Where the capture time's UTC offset came from (recorded, GPS, the sidecar's instant,
            // the camera's maker note, the place's zone, or the default zone). Pictures added
            // before it was kept have none.
            try db.alter(table: "pictures") { t in t.add(column: "time_zone_source", .text) }
        }
        return migrator
    }

    /// One row of running totals over `webhook_deliveries` (rows, tries, delivered), kept by
    /// triggers in the same transaction as every change, and an index of the pending rows alone,
    /// so that `/metrics` reads one row and one index entry instead of a table that grows by a
    /// few rows per photo.
    static func createWebhookDeliveryTotals(_ db: Database) throws {
        try db.execute(sql: """
            CREATE TABLE webhook_delivery_totals (
                id INTEGER PRIMARY KEY CHECK (id = 1),
                deliveries INTEGER NOT NULL,
                attempts INTEGER NOT NULL,
                delivered INTEGER NOT NULL
            );
            INSERT INTO webhook_delivery_totals (id, deliveries, attempts, delivered)
                SELECT 1, COUNT(*), COALESCE(SUM(attempts), 0), COUNT(delivered_at) FROM webhook_deliveries;
            CREATE INDEX webhook_deliveries_pending ON webhook_deliveries(outbox_id) WHERE delivered_at IS NULL;
            CREATE TRIGGER webhook_delivery_totals_insert AFTER INSERT ON webhook_deliveries BEGIN
                UPDATE webhook_delivery_totals
                SET deliveries = deliveries + 1, attempts = attempts + NEW.attempts,
                    delivered = delivered + (NEW.delivered_at IS NOT NULL)
                WHERE id = 1;
            END;
            CREATE TRIGGER webhook_delivery_totals_update AFTER UPDATE OF attempts, delivered_at ON webhook_deliveries BEGIN
                UPDATE webhook_delivery_totals
                SET attempts = attempts + NEW.attempts - OLD.attempts,
                    delivered = delivered + (NEW.delivered_at IS NOT NULL) - (OLD.delivered_at IS NOT NULL)
                WHERE id = 1;
            END;
            CREATE TRIGGER webhook_delivery_totals_delete AFTER DELETE ON webhook_deliveries BEGIN
                UPDATE webhook_delivery_totals
                SET deliveries = deliveries - 1, attempts = attempts - OLD.attempts,
                    delivered = delivered - (OLD.delivered_at IS NOT NULL)
                WHERE id = 1;
            END;
            """)
    }

    /// What the moments engine keeps per picture, and the R*Tree indexes its queries use, so
    /// that assigning a photo costs the same with 100 or 100,000 pictures in the catalog.
    /// R*Tree coordinates are 32-bit floats rounded outwards: a query returns a superset, which
    /// the engine filters exactly.
    private static func createMomentIndexes(_ db: Database) throws {
        try db.alter(table: "pictures") { t in
            t.add(column: "in_moments", .boolean).notNull().defaults(to: false)
            t.add(column: "moment_time", .double)          // the trusted capture time the rules use
            t.add(column: "cover_score", .double).notNull().defaults(to: 0)
        }
        try db.execute(sql: "CREATE INDEX pictures_in_moment_order ON pictures(moment_id, moment_time IS NULL, moment_time, sha256)")
        try db.execute(sql: "CREATE INDEX pictures_in_moment_by_score ON pictures(moment_id, cover_score)")
        try db.execute(sql: "CREATE INDEX candidates_by_picture ON moment_candidates(picture_id)")
        try db.execute(sql: "CREATE INDEX pictures_on_requested_moment ON pictures(requested_moment_id) WHERE requested_moment_id IS NOT NULL")
        // A picture with time and place: one point in (latitude, longitude, time).
        try db.execute(sql: "CREATE VIRTUAL TABLE picture_index USING rtree(id, min_lat, max_lat, min_lon, max_lon, min_t, max_t)")
        // A declared moment: the boxes of its place's circle (two across the date line) and its window.
        try db.execute(sql: "CREATE VIRTUAL TABLE moment_index USING rtree(id, min_lat, max_lat, min_lon, max_lon, min_t, max_t, +moment_id INTEGER)")
        // A place: the boxes of its circle.
        try db.execute(sql: "CREATE VIRTUAL TABLE place_index USING rtree(id, min_lat, max_lat, min_lon, max_lon, +place_id INTEGER)")
    }

    private static func createPlacesAndMoments(_ db: Database) throws {
        try db.create(table: "places") { t in
            t.autoIncrementedPrimaryKey("id")
            t.column("name", .text)
            t.column("latitude", .double).notNull()
            t.column("longitude", .double).notNull()
            t.column("radius_metres", .double).notNull()
            t.column("created_at", .double).notNull()
        }
        try db.create(table: "moments") { t in
            t.autoIncrementedPrimaryKey("id")
            t.column("kind", .text).notNull()                 // declared | automatic
            t.column("place_id", .integer).notNull().references("places")
            t.column("start_at", .double).notNull()           // seconds since 1970, UTC
            t.column("end_at", .double).notNull()
            t.column("creator", .text)
            t.column("visibility", .text).notNull()
            t.column("title", .text)
            t.column("cover_picture_id", .integer)
            t.column("cover_source", .text).notNull().defaults(to: "none")
            t.column("cover_reason", .text)
            t.column("created_at", .double).notNull()
            t.column("updated_at", .double).notNull()
        }
        try db.create(index: "moments_on_place", on: "moments", columns: ["place_id"])
        try db.create(table: "moment_invitees") { t in
            t.column("moment_id", .integer).notNull().references("moments", onDelete: .cascade)
            t.column("user_id", .text).notNull()
            t.primaryKey(["moment_id", "user_id"])
        }
    }

    private static func createPictures(_ db: Database) throws {
        try db.create(table: "pictures") { t in
            t.autoIncrementedPrimaryKey("id")
            t.column("sha256", .text).notNull().unique()
            t.column("status", .text).notNull()               // ready
            t.column("source_name", .text).notNull()          // the name it arrived under
            t.column("original_path", .text).notNull()        // relative to the library root
            t.column("mime_type", .text).notNull()
            t.column("byte_size", .integer).notNull()
            t.column("width", .integer).notNull()             // as stored, before orientation
            t.column("height", .integer).notNull()
            t.column("display_width", .integer).notNull()     // after orientation
            t.column("display_height", .integer).notNull()
            t.column("orientation", .integer).notNull()
            t.column("make", .text)
            t.column("model", .text)
            t.column("captured_at", .double)                  // instant, seconds since 1970 UTC
            t.column("captured_local", .text)                 // local wall time as shot
            t.column("captured_offset", .integer)             // seconds east of UTC
            t.column("time_source", .text)
            t.column("time_trusted", .boolean).notNull().defaults(to: false)
            t.column("latitude", .double)
            t.column("longitude", .double)
            t.column("altitude", .double)
            t.column("position_error", .double)
            t.column("location_source", .text).notNull()
            t.column("author_id", .text)
            t.column("title", .text)
            t.column("visibility", .text)
            t.column("requested_moment_id", .integer)
            t.column("focal_x", .double)
            t.column("focal_y", .double)
            t.column("feed_crop_x", .integer)
            t.column("feed_crop_y", .integer)
            t.column("feed_crop_width", .integer)
            t.column("feed_crop_height", .integer)
            t.column("feed_crop_source", .text)
            t.column("sharpness", .double)
            t.column("mean_luma", .double)
            t.column("clipped_fraction", .double)
            t.column("metadata_json", .text).notNull()        // the full metadata read, with warnings
            t.column("moment_id", .integer).references("moments", onDelete: .setNull)
            t.column("created_at", .double).notNull()
        }
        try db.create(index: "pictures_on_moment", on: "pictures", columns: ["moment_id", "captured_at"])
        try db.create(index: "pictures_on_author_time", on: "pictures", columns: ["author_id", "captured_at"])
        try db.create(table: "moment_candidates") { t in
            t.column("moment_id", .integer).notNull().references("moments", onDelete: .cascade)
            t.column("picture_id", .integer).notNull().references("pictures", onDelete: .cascade)
            t.primaryKey(["moment_id", "picture_id"])
        }
    }

    private static func createVariants(_ db: Database) throws {
        try db.create(table: "variants") { t in
            t.column("picture_id", .integer).notNull().references("pictures", onDelete: .cascade)
            t.column("name", .text).notNull()
            t.column("path", .text).notNull()                 // relative to the library root
            t.column("width", .integer).notNull()
            t.column("height", .integer).notNull()
            t.column("bytes", .integer).notNull()
            t.column("format", .text).notNull()
            t.primaryKey(["picture_id", "name"])
        }
    }

    private static func createJobs(_ db: Database) throws {
        // One row per photo that arrived, whatever became of it: the audit trail of the spool.
        try db.create(table: "jobs") { t in
            t.autoIncrementedPrimaryKey("id")
            t.column("source_name", .text).notNull()
            t.column("claim_path", .text).notNull()           // where it sat in processing/
            t.column("sha256", .text)
            t.column("outcome", .text).notNull()              // added | duplicate | failed
            t.column("picture_id", .integer).references("pictures", onDelete: .setNull)
            t.column("attempts", .integer).notNull()
            t.column("error", .text)
            t.column("sidecar_json", .text)
            t.column("worker", .text).notNull()
            t.column("started_at", .double).notNull()
            t.column("finished_at", .double).notNull()
            t.column("duration_ms", .double).notNull()
        }
        try db.create(index: "jobs_on_claim", on: "jobs", columns: ["claim_path"])
        try db.create(index: "jobs_on_finished", on: "jobs", columns: ["finished_at"])
    }

    private static func createOutbox(_ db: Database) throws {
        try db.create(table: "outbox") { t in
            t.autoIncrementedPrimaryKey("id")
            t.column("event", .text).notNull()
            t.column("moment_id", .integer)
            t.column("picture_id", .integer)
            t.column("payload", .text).notNull()
            t.column("created_at", .double).notNull()
            t.column("delivered_at", .double)
        }
    }

    /// The bulk import's runs and its journal: one row per file of an imported library, keyed by
    /// its absolute path, with the size and modification time it had, so that a second run skips
    /// what is done and an interrupted one continues where it stopped.
    private static func createImports(_ db: Database) throws {
        try db.create(table: "imports") { t in
            t.autoIncrementedPrimaryKey("id")
            t.column("roots", .text).notNull()                // JSON list of absolute folders
            t.column("mode", .text).notNull()                 // copy | move | link
            t.column("worker", .text).notNull()
            t.column("started_at", .double).notNull()
            t.column("finished_at", .double)                  // null while running, or when killed
            t.column("outcome", .text).notNull()              // running | finished | interrupted
            t.column("report_json", .text)
        }
        try db.create(table: "import_files") { t in
            t.column("source_path", .text).primaryKey()       // absolute, as walked
            t.column("directory", .text).notNull()
            t.column("size", .integer).notNull()
            t.column("modified_ns", .integer).notNull()       // nanoseconds since 1970
            t.column("outcome", .text).notNull()              // added | duplicate | failed
            t.column("sha256", .text)
            t.column("picture_id", .integer).references("pictures", onDelete: .setNull)
            t.column("job_id", .integer).references("jobs", onDelete: .setNull)
            t.column("error", .text)
            t.column("sidecars", .text)                       // JSON list of "kind:name"
            t.column("import_id", .integer).references("imports", onDelete: .setNull)
            t.column("finished_at", .double).notNull()
        }
        try db.create(index: "import_files_on_directory", on: "import_files", columns: ["directory"])
        try db.create(index: "import_files_on_import", on: "import_files", columns: ["import_id", "outcome"])
    }

    /// Per-endpoint delivery state of the outbox's events: one row per event and endpoint, kept
    /// once delivered, so that a restart neither resends nor loses an event. A row waiting for an
    /// earlier event of its moment has no `next_attempt_at` until that event is delivered, so the
    /// due rows of an endpoint are one index range however long its backlog.
    private static func createWebhookDeliveries(_ db: Database) throws {
        try db.create(table: "webhook_deliveries") { t in
            t.column("outbox_id", .integer).notNull().references("outbox", onDelete: .cascade)
            t.column("endpoint", .text).notNull()             // the URL as configured
            t.column("moment_id", .integer)                   // the outbox row's: the ordering key
            t.column("attempts", .integer).notNull().defaults(to: 0)
            t.column("next_attempt_at", .double)              // null while an earlier event of the moment is pending
            t.column("delivered_at", .double)
            t.column("last_status", .integer)                 // the HTTP status of the last try, if one came back
            t.column("last_error", .text)
            t.primaryKey(["endpoint", "outbox_id"])
        }
        try db.execute(sql: "CREATE INDEX webhook_deliveries_due ON webhook_deliveries(endpoint, next_attempt_at) WHERE delivered_at IS NULL")
        try db.execute(sql: "CREATE INDEX webhook_deliveries_moment_order ON webhook_deliveries(endpoint, moment_id, outbox_id) WHERE delivered_at IS NULL")
        try db.execute(sql: "CREATE INDEX webhook_deliveries_outbox ON webhook_deliveries(outbox_id)")
        // Events not yet delivered everywhere: what a dispatcher looks at for new work.
        try db.execute(sql: "CREATE INDEX outbox_pending ON outbox(id) WHERE delivered_at IS NULL")
    }
}


extension Catalog {
    /// How the schema of an SQLite catalog opened elsewhere (read-only: `catalog copy`, which
    /// must not migrate its source) stands against this version's migrations: those it lacks
    /// (written by an older darkroom) and those this version does not know (a newer one).
    public static func migrationGaps(in db: Database) throws -> (missing: [String], unknown: [String]) {
        let migrator = CatalogSchema.migrator
        let applied = try migrator.appliedIdentifiers(db)
        let known = migrator.migrations
        return (known.filter { !applied.contains($0) }, applied.subtracting(known).sorted())
    }
}

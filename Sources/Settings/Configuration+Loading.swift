import Foundation
import Imaging
import Moments
import JSONValues

extension Configuration {
    /// Where the configuration comes from when none is named: `$DARKROOM_CONFIG`, then
    /// `./pipeline.json`; nil means the built-in defaults.
    public static func defaultPath(environment: [String: String] = ProcessInfo.processInfo.environment) -> String? {
        if let path = environment["DARKROOM_CONFIG"], !path.isEmpty { return path }
        return FileManager.default.fileExists(atPath: "pipeline.json") ? "pipeline.json" : nil
    }

    /// Loads and validates a configuration file; every problem names its key.
    public static func load(path: String) throws(ConfigurationError) -> Configuration {
        try parse(readFile(path), file: path)
    }

    /// Parses and validates configuration JSON.
    public static func parse(_ data: Data, file: String) throws(ConfigurationError) -> Configuration {
        // Foundation's parser names a character offset and takes a trailing comma: the syntax is
        // checked first, strictly, to say the line and column.
        if let mistake = JSONSyntax.firstMistake(in: Array(data)) {
            throw ConfigurationError(file: file, key: "", problem: "not valid JSON at \(mistake)")
        }
        let root: [String: Any]
        do {
            guard let object = try JSONSerialization.jsonObject(with: data) as? [String: Any] else {
                throw ConfigurationError(file: file, key: "", problem: "the top level must be a JSON object")
            }
            root = object
        } catch let error as ConfigurationError {
            throw error
        } catch {
            throw ConfigurationError(file: file, key: "", problem: "not valid JSON (\((error as NSError).userInfo["NSDebugDescription"] ?? error))")
        }
        var reader = ConfigurationReader(file: file)
        return try reader.read(root)
    }
}

/// Reads the JSON object key by key, so that every error names the key it is about, and an
/// unknown key (a typo) is an error rather than a silently ignored setting.
struct ConfigurationReader {
    let file: String

    mutating func read(_ root: [String: Any]) throws(ConfigurationError) -> Configuration {
        var c = Configuration.defaults
        try known(root, "", ["variants", "feed_variant", "imaging", "metadata", "spool", "library", "catalog", "worker", "moments", "server", "webhooks"])
        if let list = root["variants"] {
            guard let items = list as? [Any], !items.isEmpty else { throw fail("variants", "must be a non-empty list of variant recipes") }
            c.variants = try items.enumerated().map { (i, item) throws(ConfigurationError) in try variant(item, key: "variants[\(i)]") }
            let names = c.variants.map(\.name)
            if Set(names).count != names.count { throw fail("variants", "variant names must be unique (got \(names.joined(separator: ", ")))") }
        }
        c.feedVariant = try string(root, "feed_variant", "feed_variant") ?? c.feedVariant
        if !c.variants.contains(where: { $0.name == c.feedVariant }) {
            throw fail("feed_variant", "names no variant (\(c.feedVariant)); use one of: \(c.variants.map(\.name).joined(separator: ", "))")
        }
        if let imaging = try object(root, "imaging") {
            try known(imaging, "imaging", ["pixel_limit", "max_file_bytes", "background", "crop", "colour"])
            c.pixelLimit = try int(imaging, "pixel_limit", "imaging.pixel_limit", min: 1) ?? c.pixelLimit
            c.maxFileBytes = try int(imaging, "max_file_bytes", "imaging.max_file_bytes", min: 1).map(Int64.init) ?? c.maxFileBytes
            if let hex = try string(imaging, "background", "imaging.background") {
                do { c.background = try RGB(hex: hex) } catch { throw fail("imaging.background", "must be a colour like \"#ffffff\" (got \"\(hex)\")") }
            }
            if let crop = try string(imaging, "crop", "imaging.crop") {
                guard let strategy = CropStrategy(rawValue: crop) else { throw fail("imaging.crop", "must be \"attention\" or \"centre\" (got \"\(crop)\")") }
                c.crop = strategy
            }
            if let colour = try string(imaging, "colour", "imaging.colour") {
                guard let handling = ColourHandling(rawValue: colour) else {
                    throw fail("imaging.colour", "must be \"srgb\" (convert wider profiles to sRGB) or \"keep\" (keep each photo's profile) (got \"\(colour)\")")
                }
                c.colour = handling
            }
        }
        if let metadata = try object(root, "metadata") {
            try known(metadata, "metadata", ["default_time_zone"])
            if let zone = try string(metadata, "default_time_zone", "metadata.default_time_zone") {
                guard let timeZone = TimeZone(identifier: zone) else {
                    throw fail("metadata.default_time_zone", "unknown time zone \"\(zone)\"; use an IANA name such as \"Europe/Paris\" or \"UTC\"")
                }
                c.defaultTimeZone = timeZone
            }
        }
        if let spool = try object(root, "spool") {
            try known(spool, "spool", ["root", "settle_seconds", "lease_seconds", "scan_interval_seconds"])
            c.spoolRoot = try string(spool, "root", "spool.root") ?? c.spoolRoot
            c.settleSeconds = try double(spool, "settle_seconds", "spool.settle_seconds", min: 0) ?? c.settleSeconds
            c.leaseSeconds = try double(spool, "lease_seconds", "spool.lease_seconds", min: 1) ?? c.leaseSeconds
            c.scanIntervalSeconds = try double(spool, "scan_interval_seconds", "spool.scan_interval_seconds", min: 0.05) ?? c.scanIntervalSeconds
        }
        if let library = try object(root, "library") {
            for secret in ["access_key_id", "secret_access_key", "session_token", "credentials"] where library[secret] != nil {
                throw fail("library.\(secret)", "credentials are never read from the file: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY "
                           + "(and AWS_SESSION_TOKEN) in the environment")
            }
            try known(library, "library", ["root", "backup_dir", "url", "s3", "public_url", "presign_seconds", "direct_upload_seconds"])
            c.libraryRoot = try string(library, "root", "library.root") ?? c.libraryRoot
            c.backupDir = try string(library, "backup_dir", "library.backup_dir")
            c.libraryURL = try string(library, "url", "library.url")
            if let url = c.libraryURL, BucketAddress(url) == nil {
                throw fail("library.url", "must be s3://BUCKET/PREFIX (a bucket name of 3 to 63 lowercase letters, digits, dots and hyphens), "
                           + "or null for the directory at library.root (got \(url))")
            }
            if let s3 = try object(library, "s3") {
                for secret in ["access_key_id", "secret_access_key", "session_token"] where s3[secret] != nil {
                    throw fail("library.s3.\(secret)", "credentials are never read from the file: set AWS_ACCESS_KEY_ID and "
                               + "AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN) in the environment")
                }
                try known(s3, "library.s3", ["endpoint", "region", "path_style"])
                c.libraryS3.endpoint = try string(s3, "endpoint", "library.s3.endpoint")
                if let endpoint = c.libraryS3.endpoint, URL(string: endpoint).map({ ["http", "https"].contains($0.scheme ?? "") && $0.host != nil }) != true {
                    throw fail("library.s3.endpoint", "must be an http:// or https:// URL with a host (got \(endpoint))")
                }
                c.libraryS3.region = try string(s3, "region", "library.s3.region")
                c.libraryS3.pathStyle = try bool(s3, "path_style", "library.s3.path_style")
            }
            c.libraryPublicURL = try string(library, "public_url", "library.public_url")
            if let publicURL = c.libraryPublicURL, URL(string: publicURL).map({ ["http", "https"].contains($0.scheme ?? "") && $0.host != nil }) != true {
                throw fail("library.public_url", "must be an http:// or https:// URL with a host (got \(publicURL))")
            }
            c.libraryPresignSeconds = try double(library, "presign_seconds", "library.presign_seconds", min: 1)
            if let seconds = c.libraryPresignSeconds, seconds > 604_800 {
                throw fail("library.presign_seconds", "must be at most 604800 (seven days, S3's limit) (got \(seconds))")
            }
            c.libraryDirectUploadSeconds = try double(library, "direct_upload_seconds", "library.direct_upload_seconds", min: 1)
                ?? c.libraryDirectUploadSeconds
            if c.libraryDirectUploadSeconds > 604_800 {
                throw fail("library.direct_upload_seconds", "must be at most 604800 (seven days, S3's limit) (got \(c.libraryDirectUploadSeconds))")
            }
        }
        if let catalog = try object(root, "catalog") {
            try known(catalog, "catalog", ["path", "url", "connect_timeout_seconds", "statement_timeout_seconds", "transaction_timeout_seconds"])
            c.catalogPath = try string(catalog, "path", "catalog.path") ?? c.catalogPath
            c.catalogURL = try string(catalog, "url", "catalog.url")
            c.catalogConnectTimeoutSeconds = try double(catalog, "connect_timeout_seconds", "catalog.connect_timeout_seconds", min: 0.1)
                ?? c.catalogConnectTimeoutSeconds
            c.catalogStatementTimeoutSeconds = try double(catalog, "statement_timeout_seconds", "catalog.statement_timeout_seconds", min: 0.1)
                ?? c.catalogStatementTimeoutSeconds
            c.catalogTransactionTimeoutSeconds = try double(catalog, "transaction_timeout_seconds", "catalog.transaction_timeout_seconds", min: 0.1)
                ?? c.catalogTransactionTimeoutSeconds
            if let url = c.catalogURL, !(url.hasPrefix("postgres://") || url.hasPrefix("postgresql://")) {
                throw fail("catalog.url", "must be a postgres://user[:password]@host[:port]/database address, or null for the SQLite file at catalog.path")
            }
        }
        if let worker = try object(root, "worker") {
            try known(worker, "worker", ["concurrency", "pixel_budget", "photo_timeout_seconds", "max_attempts", "retry_base_seconds", "max_recoveries"])
            c.concurrency = try int(worker, "concurrency", "worker.concurrency", min: 0) ?? c.concurrency
            c.pixelBudget = try int(worker, "pixel_budget", "worker.pixel_budget", min: 1) ?? c.pixelBudget
            c.photoTimeoutSeconds = try double(worker, "photo_timeout_seconds", "worker.photo_timeout_seconds", min: 1) ?? c.photoTimeoutSeconds
            c.maxAttempts = try int(worker, "max_attempts", "worker.max_attempts", min: 1) ?? c.maxAttempts
            c.retryBaseSeconds = try double(worker, "retry_base_seconds", "worker.retry_base_seconds", min: 0) ?? c.retryBaseSeconds
            c.maxRecoveries = try int(worker, "max_recoveries", "worker.max_recoveries", min: 0) ?? c.maxRecoveries
        }
        if let moments = try object(root, "moments") {
            let known: Set<String> = ["grace_before_seconds", "grace_after_seconds", "automatic_radius_metres",
                                      "automatic_time_gap_seconds", "automatic_visibility", "cover_policy", "cover_margin"]
            try self.known(moments, "moments", known)
            c.moments = try momentRules(moments)
        }
        if let server = try object(root, "server") { c.server = try serverSettings(server) }
        if let webhooks = try object(root, "webhooks") { c.webhooks = try webhookSettings(webhooks) }
        return c
    }

    private func variant(_ item: Any, key: String) throws(ConfigurationError) -> VariantRecipe {
        guard let v = item as? [String: Any] else { throw fail(key, "must be an object with name, fit, width, height, format, quality") }
        try known(v, key, ["name", "fit", "width", "height", "format", "quality"])
        guard let name = try string(v, "name", key + ".name"), !name.isEmpty,
              name.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" }) else {
            throw fail(key + ".name", "is required: letters, digits, - and _ only (it names files)")
        }
        guard let fitName = try string(v, "fit", key + ".fit"), let fit = Fit(rawValue: fitName) else {
            throw fail(key + ".fit", "must be \"contain\" (long edge at most N) or \"cover\" (exactly W×H, cropped)")
        }
        guard let width = try int(v, "width", key + ".width", min: 1, max: 16384) else { throw fail(key + ".width", "is required") }
        guard let height = try int(v, "height", key + ".height", min: 1, max: 16384) else { throw fail(key + ".height", "is required") }
        let formatName = try string(v, "format", key + ".format") ?? "jpeg"
        guard let format = OutputFormat(rawValue: formatName) else { throw fail(key + ".format", "must be \"jpeg\" or \"webp\" (got \"\(formatName)\")") }
        let quality = try int(v, "quality", key + ".quality", min: 1, max: 100) ?? 85
        return VariantRecipe(name: name, fit: fit, width: width, height: height, format: format, quality: quality)
    }

    private func momentRules(_ object: [String: Any]) throws(ConfigurationError) -> MomentRules {
        do {
            let data = try JSONSerialization.data(withJSONObject: object)
            let rules = try JSONDecoder().decode(MomentRules.self, from: data)
            try rules.validate()
            return rules
        } catch MomentError.invalidRule(let key, let value, let expected) {
            throw fail("moments." + key, "must be \(expected) (got \(value))")
        } catch let DecodingError.keyNotFound(key, context) {
            throw fail(path("moments", context.codingPath + [key]), "is required")
        } catch let DecodingError.typeMismatch(_, context) {
            throw fail(path("moments", context.codingPath), "has the wrong type (\(context.debugDescription))")
        } catch let DecodingError.dataCorrupted(context) {
            throw fail(path("moments", context.codingPath), context.debugDescription)
        } catch {
            throw fail("moments", "\(error)")
        }
    }

    private func path(_ prefix: String, _ codingPath: [any CodingKey]) -> String {
        ([prefix] + codingPath.map(\.stringValue)).joined(separator: ".")
    }

    func fail(_ key: String, _ problem: String) -> ConfigurationError {
        ConfigurationError(file: file, key: key, problem: problem)
    }

    func known(_ object: [String: Any], _ key: String, _ allowed: Set<String>) throws(ConfigurationError) {
        for name in object.keys.sorted() where !allowed.contains(name) {
            let full = key.isEmpty ? name : key + "." + name
            throw fail(full, "unknown key; known keys here are: \(allowed.sorted().joined(separator: ", "))")
        }
    }

    func object(_ o: [String: Any], _ key: String) throws(ConfigurationError) -> [String: Any]? {
        guard let value = o[key], !(value is NSNull) else { return nil }
        guard let object = value as? [String: Any] else { throw fail(key, "must be an object") }
        return object
    }

    func string(_ o: [String: Any], _ name: String, _ key: String) throws(ConfigurationError) -> String? {
        guard let value = o[name], !(value is NSNull) else { return nil }
        guard let string = value as? String else { throw fail(key, "must be a string") }
        return string
    }

    func number(_ o: [String: Any], _ name: String, _ key: String) throws(ConfigurationError) -> NSNumber? {
        guard let value = o[name], !(value is NSNull) else { return nil }
        guard let number = value as? NSNumber, !JSONValue.isBoolean(value) else {
            throw fail(key, "must be a number (got \(value))")
        }
        return number
    }

    func int(_ o: [String: Any], _ name: String, _ key: String, min: Int, max: Int = Int.max) throws(ConfigurationError) -> Int? {
        guard let n = try number(o, name, key) else { return nil }
        let d = n.doubleValue
        guard d.rounded() == d, d >= Double(min), d <= Double(max) else {
            throw fail(key, max == Int.max ? "must be a whole number of at least \(min) (got \(n))" : "must be a whole number from \(min) to \(max) (got \(n))")
        }
        return Int(d)
    }

    func double(_ o: [String: Any], _ name: String, _ key: String, min: Double) throws(ConfigurationError) -> Double? {
        guard let n = try number(o, name, key) else { return nil }
        guard n.doubleValue.isFinite, n.doubleValue >= min else { throw fail(key, "must be a number of at least \(min) (got \(n))") }
        return n.doubleValue
    }
}

import Foundation

/// What `darkroom config check` and `config show` report: every problem of a configuration
/// file (not only the first), and each effective setting with where its value came from.
public struct ConfigurationCheck: Sendable {
    /// Where one effective value came from.
    public enum Source: String, Sendable {
        case file, environment, `default`
    }

    /// One effective setting.
    public struct Setting: Sendable {
        /// The dotted key, as in the README's table (`worker.concurrency`).
        public var key: String
        /// The value as JSON text (secrets masked).
        public var value: String
        public var source: Source
    }

    /// The file read, or nil when the built-in defaults stand.
    public var file: String?
    /// Why the file is named (`--config`, `$DARKROOM_CONFIG`, `./pipeline.json`).
    public var fileReason: String?
    /// Every problem found, each naming its key; empty when the configuration is usable.
    public var problems: [ConfigurationError]
    /// The effective settings, in the order of the README's table (only when there is no problem).
    public var settings: [Setting]

    /// How many problems one check reports at most, so that a file of garbage ends the list.
    static let problemLimit = 50

    /// Checks the configuration that `path` names (or, with nil, the one Darkroom would read:
    /// `$DARKROOM_CONFIG`, then `./pipeline.json`, then the defaults).
    public static func run(path: String?, environment: [String: String] = ProcessInfo.processInfo.environment) -> ConfigurationCheck {
        let chosen = path ?? Configuration.defaultPath(environment: environment)
        let reason = path != nil ? "--config" : chosen == nil ? nil
            : environment["DARKROOM_CONFIG"].map { !$0.isEmpty } == true ? "$DARKROOM_CONFIG" : "./pipeline.json"
        guard let chosen else {
            return ConfigurationCheck(file: nil, fileReason: nil, problems: [],
                                      settings: settings(of: .defaults, file: [:], environment: environment))
        }
        let data: Data
        do {
            data = try Configuration.readFile(chosen)
        } catch {
            return ConfigurationCheck(file: chosen, fileReason: reason, problems: [error], settings: [])
        }
        var root: [String: Any]
        do {
            _ = try Configuration.parse(data, file: chosen)
            root = (try? JSONSerialization.jsonObject(with: data) as? [String: Any]) ?? [:]
        } catch {
            // Every problem, not only the first: set the offending key aside and read again.
            guard error.key != "", var remaining = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] else {
                return ConfigurationCheck(file: chosen, fileReason: reason, problems: [error], settings: [])
            }
            var problems = [error]
            var key = error.key
            while problems.count < problemLimit, Self.remove(key, from: &remaining) {
                do {
                    var reader = ConfigurationReader(file: chosen)
                    _ = try reader.read(remaining)
                    break
                } catch {
                    problems.append(error)
                    key = error.key
                }
            }
            return ConfigurationCheck(file: chosen, fileReason: reason, problems: problems, settings: [])
        }
        var reader = ConfigurationReader(file: chosen)
        let configuration = (try? reader.read(root)) ?? .defaults
        return ConfigurationCheck(file: chosen, fileReason: reason, problems: [],
                                  settings: settings(of: configuration, file: root, environment: environment))
    }

    /// Removes a dotted key (`worker.concurrency`, `variants[2].fit`: the whole list) from a
    /// JSON object; false when nothing was there to remove.
    static func remove(_ key: String, from object: inout [String: Any]) -> Bool {
        var parts = key.split(separator: ".").map(String.init)
        guard let first = parts.first else { return false }
        if let bracket = first.firstIndex(of: "[") {
            // A problem inside a list sets the whole list aside.
            return object.removeValue(forKey: String(first[..<bracket])) != nil
        }
        parts.removeFirst()
        if parts.isEmpty { return object.removeValue(forKey: first) != nil }
        guard var inner = object[first] as? [String: Any] else { return object.removeValue(forKey: first) != nil }
        let removed = remove(parts.joined(separator: "."), from: &inner)
        object[first] = inner
        return removed
    }

    /// Each key of the effective configuration with its value and source.
    static func settings(of configuration: Configuration, file: [String: Any], environment: [String: String]) -> [Setting] {
        // catalog.url may carry a password: shown as set or not, like the secrets.
        let secrets: [String: String] = ["server.token": "DARKROOM_API_TOKEN", "webhooks.secret": "DARKROOM_WEBHOOK_SECRET",
                                         "catalog.url": "DARKROOM_CATALOG_URL"]
        return configuration.settingsList().map { key, value in
            let inFile = Self.value(at: key, in: file).map { !($0 is NSNull) } ?? false
            if let variable = secrets[key] {
                let fromEnvironment = !inFile && !(environment[variable] ?? "").isEmpty
                let isSet = inFile || fromEnvironment
                return Setting(key: key, value: isSet ? "\"********\"" : "null",
                               source: inFile ? .file : fromEnvironment ? .environment : .default)
            }
            return Setting(key: key, value: value, source: Self.value(at: key, in: file) != nil ? .file : .default)
        } + bucketEnvironment(environment)
    }

    /// What the environment gives the bucket of `library.url`: the AWS tools' variables, the
    /// credentials masked (they are never read from the file).
    static func bucketEnvironment(_ environment: [String: String]) -> [Setting] {
        let masked: Set<String> = ["AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"]
        return ["AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_ENDPOINT_URL", "AWS_REGION"].map { variable in
            guard let value = environment[variable], !value.isEmpty else { return Setting(key: variable, value: "null", source: .default) }
            return Setting(key: variable, value: masked.contains(variable) ? "\"********\"" : "\"\(value)\"", source: .environment)
        }
    }

    private static func value(at key: String, in object: [String: Any]) -> Any? {
        var current: Any? = object
        for part in key.split(separator: ".") { current = (current as? [String: Any])?[String(part)] }
        return current
    }
}

extension Configuration {
    /// Every setting as a dotted key and its value as JSON text, in the README's order.
    func settingsList() -> [(String, String)] {
        func json(_ value: Any?) -> String {
            guard let value else { return "null" }
            // JSONSerialization writes only arrays and objects: a scalar goes in a one-item array.
            let isCollection = value is [Any] || value is [String: Any]
            guard let data = try? JSONSerialization.data(withJSONObject: isCollection ? value : [value],
                                                         options: [.sortedKeys, .withoutEscapingSlashes]) else { return "\(value)" }
            let text = String(decoding: data, as: UTF8.self)
            return isCollection ? text : String(text.dropFirst().dropLast())
        }
        let recipes = variants.map { recipe -> [String: Any] in
            ["name": recipe.name, "fit": recipe.fit.rawValue, "width": recipe.width, "height": recipe.height,
             "format": recipe.format.rawValue, "quality": recipe.quality]
        }
        let rules = (try? JSONSerialization.jsonObject(with: JSONEncoder().encode(moments))) as? [String: Any] ?? [:]
        var list: [(String, String)] = [
            ("variants", json(recipes)), ("feed_variant", json(feedVariant)),
            ("imaging.pixel_limit", json(pixelLimit)), ("imaging.max_file_bytes", json(Int(maxFileBytes))), ("imaging.background", json(background.hex)), ("imaging.crop", json(crop.rawValue)), ("imaging.colour", json(colour.rawValue)),
            // Foundation on Linux names UTC "GMT"; the settings call it UTC.
            ("metadata.default_time_zone", json(defaultTimeZone.identifier == "GMT" ? "UTC" : defaultTimeZone.identifier)),
            ("spool.root", json(spoolRoot)), ("spool.settle_seconds", json(settleSeconds)), ("spool.lease_seconds", json(leaseSeconds)),
            ("spool.scan_interval_seconds", json(scanIntervalSeconds)),
            ("library.root", json(libraryRoot)), ("library.backup_dir", json(backupDir)),
            ("library.url", json(libraryURL)), ("library.s3.endpoint", json(libraryS3.endpoint)),
            ("library.s3.region", json(libraryS3.region)), ("library.s3.path_style", json(libraryS3.pathStyle)),
            ("library.public_url", json(libraryPublicURL)), ("library.presign_seconds", json(libraryPresignSeconds)),
            ("library.direct_upload_seconds", json(libraryDirectUploadSeconds)),
            ("catalog.path", json(catalogPath)), ("catalog.url", json(catalogURL)),
            ("catalog.connect_timeout_seconds", json(catalogConnectTimeoutSeconds)),
            ("catalog.statement_timeout_seconds", json(catalogStatementTimeoutSeconds)),
            ("catalog.transaction_timeout_seconds", json(catalogTransactionTimeoutSeconds)),
            ("worker.concurrency", json(concurrency)), ("worker.pixel_budget", json(pixelBudget)),
            ("worker.photo_timeout_seconds", json(photoTimeoutSeconds)), ("worker.max_attempts", json(maxAttempts)),
            ("worker.retry_base_seconds", json(retryBaseSeconds)), ("worker.max_recoveries", json(maxRecoveries)),
        ]
        list += rules.keys.sorted().map { ("moments." + $0, json(rules[$0])) }
        list += [
            ("server.host", json(server.host)), ("server.port", json(server.port)), ("server.token", json(server.token)),
            ("server.max_upload_bytes", json(server.maxUploadBytes)), ("server.media_base_url", json(server.mediaBaseURL)),
            ("server.run_workers", json(server.runWorkers)), ("server.upload_threads", json(server.uploadThreads)),
            ("server.worker_niceness", json(server.workerNiceness)),
            ("server.header_timeout_seconds", json(server.headerTimeoutSeconds)),
            ("server.idle_timeout_seconds", json(server.idleTimeoutSeconds)),
            ("server.max_connections", json(server.maxConnections)),
            ("server.max_connections_per_client", json(server.maxConnectionsPerClient)),
            ("server.listen_backlog", json(server.listenBacklog)),
            ("server.request_deadline_seconds", json(server.requestDeadlineSeconds)),
            ("server.min_bytes_per_second", json(server.minBytesPerSecond)),
            ("server.min_rate_grace_seconds", json(server.minRateGraceSeconds)),
            ("server.stop_grace_seconds", json(server.stopGraceSeconds)),
            ("server.max_status_waiters", json(server.maxStatusWaiters)),
            ("server.admin_host", json(server.adminHost)), ("server.admin_port", json(server.adminPort)),
            ("webhooks.urls", json(webhooks.urls)), ("webhooks.secret", json(webhooks.secret)),
            ("webhooks.timeout_seconds", json(webhooks.timeoutSeconds)), ("webhooks.retry_base_seconds", json(webhooks.retryBaseSeconds)),
            ("webhooks.retry_max_seconds", json(webhooks.retryMaxSeconds)),
            ("webhooks.poll_interval_seconds", json(webhooks.pollIntervalSeconds)),
        ]
        return list
    }
}

import Foundation
import ServiceSettings
import JSONValues

extension ConfigurationReader {
    /// The `server` section.
    func serverSettings(_ o: [String: Any]) throws(ConfigurationError) -> ServerSettings {
        try known(o, "server", ["host", "port", "token", "max_upload_bytes", "media_base_url", "run_workers", "upload_threads", "worker_niceness",
                            "header_timeout_seconds", "idle_timeout_seconds", "max_connections", "max_connections_per_client", "listen_backlog",
                            "request_deadline_seconds", "min_bytes_per_second", "min_rate_grace_seconds", "stop_grace_seconds",
                            "max_status_waiters", "admin_host", "admin_port"])
        var s = ServerSettings.defaults
        s.host = try string(o, "host", "server.host") ?? s.host
        s.port = try int(o, "port", "server.port", min: 0, max: 65535) ?? s.port
        s.token = try string(o, "token", "server.token")
        s.maxUploadBytes = try int(o, "max_upload_bytes", "server.max_upload_bytes", min: 1) ?? s.maxUploadBytes
        if let base = try string(o, "media_base_url", "server.media_base_url") {
            guard let url = URL(string: base), url.scheme == "http" || url.scheme == "https" else {
                throw fail("server.media_base_url", "must be an http(s) URL such as \"https://media.example.com/\" (got \"\(base)\")")
            }
            s.mediaBaseURL = base.hasSuffix("/") ? base : base + "/"
        }
        s.runWorkers = try bool(o, "run_workers", "server.run_workers") ?? s.runWorkers
        s.uploadThreads = try int(o, "upload_threads", "server.upload_threads", min: 1, max: 256) ?? s.uploadThreads
        s.workerNiceness = try int(o, "worker_niceness", "server.worker_niceness", min: 0, max: 19) ?? s.workerNiceness
        s.headerTimeoutSeconds = try double(o, "header_timeout_seconds", "server.header_timeout_seconds", min: 0.1) ?? s.headerTimeoutSeconds
        s.idleTimeoutSeconds = try double(o, "idle_timeout_seconds", "server.idle_timeout_seconds", min: 0.1) ?? s.idleTimeoutSeconds
        s.maxConnections = try int(o, "max_connections", "server.max_connections", min: 1) ?? s.maxConnections
        s.maxConnectionsPerClient = try int(o, "max_connections_per_client", "server.max_connections_per_client", min: 1)
            ?? s.maxConnectionsPerClient
        s.listenBacklog = try int(o, "listen_backlog", "server.listen_backlog", min: 1, max: 65535) ?? s.listenBacklog
        s.requestDeadlineSeconds = try double(o, "request_deadline_seconds", "server.request_deadline_seconds", min: 1) ?? s.requestDeadlineSeconds
        s.minBytesPerSecond = try int(o, "min_bytes_per_second", "server.min_bytes_per_second", min: 0) ?? s.minBytesPerSecond
        s.minRateGraceSeconds = try double(o, "min_rate_grace_seconds", "server.min_rate_grace_seconds", min: 0) ?? s.minRateGraceSeconds
        s.stopGraceSeconds = try double(o, "stop_grace_seconds", "server.stop_grace_seconds", min: 0) ?? s.stopGraceSeconds
        s.maxStatusWaiters = try int(o, "max_status_waiters", "server.max_status_waiters", min: 0) ?? s.maxStatusWaiters
        s.adminHost = try string(o, "admin_host", "server.admin_host") ?? s.adminHost
        s.adminPort = try int(o, "admin_port", "server.admin_port", min: 0, max: 65535)
        if let admin = s.adminPort, admin != 0, admin == s.port, s.adminHost == s.host {
            throw fail("server.admin_port", "is server.port (\(admin)); give the admin listener a port of its own, or 0 to turn it off")
        }
        return s
    }

    /// The `webhooks` section.
    func webhookSettings(_ o: [String: Any]) throws(ConfigurationError) -> WebhookSettings {
        try known(o, "webhooks", ["urls", "secret", "timeout_seconds", "retry_base_seconds", "retry_max_seconds", "poll_interval_seconds"])
        var w = WebhookSettings.defaults
        if let list = o["urls"], !(list is NSNull) {
            guard let urls = list as? [String] else { throw fail("webhooks.urls", "must be a list of http(s) URLs") }
            for (i, text) in urls.enumerated() {
                guard let url = URL(string: text), url.scheme == "http" || url.scheme == "https", url.host != nil else {
                    throw fail("webhooks.urls[\(i)]", "must be an http(s) URL such as \"https://backend.example.com/hooks/darkroom\" (got \"\(text)\")")
                }
            }
            w.urls = urls
        }
        w.secret = try string(o, "secret", "webhooks.secret")
        w.timeoutSeconds = try double(o, "timeout_seconds", "webhooks.timeout_seconds", min: 0.1) ?? w.timeoutSeconds
        w.retryBaseSeconds = try double(o, "retry_base_seconds", "webhooks.retry_base_seconds", min: 0) ?? w.retryBaseSeconds
        w.retryMaxSeconds = try double(o, "retry_max_seconds", "webhooks.retry_max_seconds", min: 0) ?? w.retryMaxSeconds
        w.pollIntervalSeconds = try double(o, "poll_interval_seconds", "webhooks.poll_interval_seconds", min: 0.01) ?? w.pollIntervalSeconds
        return w
    }

    func bool(_ o: [String: Any], _ name: String, _ key: String) throws(ConfigurationError) -> Bool? {
        guard let value = o[name], !(value is NSNull) else { return nil }
        guard JSONValue.isBoolean(value), let flag = value as? Bool else {
            throw fail(key, "must be true or false (got \(value))")
        }
        return flag
    }
}

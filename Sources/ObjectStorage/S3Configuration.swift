import Foundation

/// Where the bucket is and how to talk to it.
public struct S3Configuration: Sendable, Equatable {
    /// How the bucket is named in requests.
    public enum Addressing: String, Sendable, Equatable, CaseIterable {
        /// `https://endpoint/bucket/key`: what self-hosted gateways (Ceph RGW, MinIO) serve by default.
        case pathStyle = "path"
        /// `https://bucket.endpoint/key`: AWS's default (the bucket name must be a valid host label).
        case virtualHosted = "virtual"
    }

    /// `http://` or `https://` host and optional port, without a path (`https://s3.eu-west-1.amazonaws.com`,
    /// `http://127.0.0.1:7480`).
    public var endpoint: String
    public var region: String
    public var bucket: String
    public var addressing: Addressing
    public var credentials: S3Credentials
    /// Seconds to wait for a connection.
    public var connectTimeoutSeconds: Double
    /// Seconds without a byte read before a request fails.
    public var readTimeoutSeconds: Double
    /// Seconds one send of a request may take in all, its body's upload or download included.
    public var requestTimeoutSeconds: Double
    public var retry: RetryPolicy
    /// `putFile` uploads a file larger than this in parts (default 64 MiB).
    public var multipartThreshold: Int
    /// The size of each part but the last (default 16 MiB; S3's minimum is 5 MiB). A file that
    /// would need more than 10,000 parts gets larger ones.
    public var partSize: Int

    public init(endpoint: String, region: String, bucket: String, addressing: Addressing = .pathStyle, credentials: S3Credentials,
                connectTimeoutSeconds: Double = 10, readTimeoutSeconds: Double = 60, requestTimeoutSeconds: Double = 600,
                retry: RetryPolicy = RetryPolicy(), multipartThreshold: Int = 64 << 20, partSize: Int = 16 << 20) {
        self.endpoint = endpoint
        self.region = region
        self.bucket = bucket
        self.addressing = addressing
        self.credentials = credentials
        self.connectTimeoutSeconds = connectTimeoutSeconds
        self.readTimeoutSeconds = readTimeoutSeconds
        self.requestTimeoutSeconds = requestTimeoutSeconds
        self.retry = retry
        self.multipartThreshold = multipartThreshold
        self.partSize = partSize
    }

    /// A configuration for `bucket` from the environment: credentials from `AWS_ACCESS_KEY_ID`,
    /// `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`; the region from `AWS_REGION` (then
    /// `AWS_DEFAULT_REGION`, then `us-east-1`); the endpoint from `AWS_ENDPOINT_URL_S3` or
    /// `AWS_ENDPOINT_URL`, else AWS's regional endpoint with virtual-hosted addressing.
    public static func fromEnvironment(
        bucket: String, addressing: Addressing? = nil,
        _ environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws(ObjectStorageError) -> S3Configuration {
        func value(_ name: String) -> String? {
            guard let text = environment[name]?.trimmingCharacters(in: .whitespacesAndNewlines), !text.isEmpty else { return nil }
            return text
        }
        let credentials = try S3Credentials.fromEnvironment(environment)
        let region = value("AWS_REGION") ?? value("AWS_DEFAULT_REGION") ?? "us-east-1"
        let endpoint = value("AWS_ENDPOINT_URL_S3") ?? value("AWS_ENDPOINT_URL")
        let configuration = S3Configuration(
            endpoint: endpoint ?? "https://s3.\(region).amazonaws.com", region: region, bucket: bucket,
            addressing: addressing ?? (endpoint == nil ? .virtualHosted : .pathStyle), credentials: credentials)
        _ = try configuration.validated()
        return configuration
    }

    /// The endpoint taken apart, once its form is checked.
    struct Endpoint: Sendable, Equatable {
        var scheme: String
        /// The host as it goes into a URL (an IPv6 address in brackets).
        var host: String
        /// The port when not the scheme's default.
        var port: Int?

        /// `host` or `host:port`, for the URL and the `Host` header.
        var authority: String { port.map { "\(host):\($0)" } ?? host }
    }

    /// The endpoint, once every setting is checked; `.configuration` saying what is wrong (the
    /// endpoint is named without any user or password it may hold).
    func validated() throws(ObjectStorageError) -> Endpoint {
        guard let components = URLComponents(string: endpoint), let scheme = components.scheme?.lowercased(),
              scheme == "http" || scheme == "https", let rawHost = components.host, !rawHost.isEmpty
        else {
            throw .configuration(reason: "the endpoint must be an http:// or https:// URL with a host (got \(Self.redacted(endpoint)))")
        }
        guard components.user == nil, components.password == nil else {
            throw .configuration(reason: "the endpoint must not hold a user or password: credentials come from AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY")
        }
        guard components.path.isEmpty || components.path == "/", components.query == nil, components.fragment == nil else {
            throw .configuration(reason: "the endpoint \(Self.redacted(endpoint)) must have no path or query: the bucket is set on its own")
        }
        guard !bucket.isEmpty, !bucket.contains("/") else {
            throw .configuration(reason: "the bucket name '\(bucket)' is empty or holds a '/'")
        }
        if addressing == .virtualHosted {
            let label = bucket.utf8.allSatisfy { ($0 >= 97 && $0 <= 122) || ($0 >= 48 && $0 <= 57) || $0 == 45 || $0 == 46 }
            guard label else {
                throw .configuration(reason: "the bucket name '\(bucket)' cannot be a host name: use path-style addressing")
            }
        }
        guard !region.isEmpty else { throw .configuration(reason: "the region is empty") }
        guard partSize >= 5 << 20, partSize <= 5 << 30 else {
            throw .configuration(reason: "the part size must be 5 MiB to 5 GiB (got \(partSize) bytes)")
        }
        guard multipartThreshold >= partSize, multipartThreshold <= 5 << 30 else {
            throw .configuration(reason: "the multipart threshold must be at least the part size and at most 5 GiB (got \(multipartThreshold) bytes)")
        }
        guard connectTimeoutSeconds > 0, readTimeoutSeconds > 0, requestTimeoutSeconds > 0 else {
            throw .configuration(reason: "timeouts must be positive")
        }
        let host = rawHost.contains(":") && !rawHost.hasPrefix("[") ? "[\(rawHost)]" : rawHost
        let defaultPort = scheme == "https" ? 443 : 80
        let port = components.port.flatMap { $0 == defaultPort ? nil : $0 }
        return Endpoint(scheme: scheme, host: host.lowercased(), port: port)
    }

    /// `text` with any `user:password@` removed, for messages.
    static func redacted(_ text: String) -> String {
        guard let at = text.firstIndex(of: "@"), let schemeEnd = text.range(of: "://"), schemeEnd.upperBound <= at else { return text }
        return String(text[..<schemeEnd.upperBound]) + "…@" + String(text[text.index(after: at)...])
    }
}

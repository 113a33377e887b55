import ChildProcesses
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// S3 requests of the harness's own, signed (AWS Signature Version 4) by curl's `--aws-sigv4`,
/// independent of Darkroom's S3 client: to make buckets, and for tests that check what the
/// client did (or that the gateway refuses what it should).
extension RadosGateway {
    /// What the gateway answered.
    public struct Response: Sendable {
        public let status: Int
        public let body: Data
        /// The response's headers, names in lower case (the last value of a repeated one).
        public let headers: [String: String]
        public var text: String { String(decoding: body, as: UTF8.self) }
    }

    /// Sends one request signed with the user's keys (or `accessKey` and `secretKey` when given:
    /// a wrong secret is answered 403 `SignatureDoesNotMatch`). `path` is the percent-encoded
    /// path, `/bucket` or `/bucket/key`, with a query when needed (keep query parameters in
    /// alphabetical order: curl 7.88 signs the query as it is written). The payload is sent
    /// unsigned (`x-amz-content-sha256: UNSIGNED-PAYLOAD`); `headers` are added (and signed:
    /// none may be empty, as curl 7.88 signs a header it was told to leave out, such as
    /// `Expect:`, and the signature then does not match).
    /// Throws when curl cannot reach the gateway within `timeout` seconds.
    public func signedRequest(_ method: String, _ path: String, body: Data? = nil, headers: [String: String] = [:],
                              accessKey: String? = nil, secretKey: String? = nil, timeout: Double = 30) throws -> Response {
        try requireDirectoryExists()
        let stem = self.path("requests/\(UUID().uuidString)")
        let bodyFile = stem + ".body", headerFile = stem + ".headers", answerFile = stem + ".answer", upload = stem + ".upload"
        defer {
            for file in [bodyFile, headerFile, answerFile, upload] { unlink(file) }
        }
        // HEAD through --head: with --request HEAD curl would wait for the body the length announces.
        var arguments = ["/usr/bin/curl", "--silent", "--show-error", "--max-time", String(timeout)]
            + (method == "HEAD" ? ["--head"] : ["--request", method])
            + ["--aws-sigv4", "aws:amz:\(region):s3",
               "--user", "\(accessKey ?? self.accessKey):\(secretKey ?? self.secretKey)",
               "--header", "x-amz-content-sha256: UNSIGNED-PAYLOAD",
               "--output", bodyFile, "--dump-header", headerFile, "--write-out", "%{http_code}"]
        for (name, value) in headers.sorted(by: { $0.key < $1.key }) {
            arguments += ["--header", "\(name): \(value)"]
        }
        if let body {
            guard FileManager.default.createFile(atPath: upload, contents: body) else {
                throw Unavailable(description: "cannot write the request's body under \(directory.path)")
            }
            arguments += ["--upload-file", upload]
        }
        arguments.append(endpoint.absoluteString + path)
        do {
            // The answer (`--write-out`) on standard output, curl's complaints after it.
            try ChildSpawning.run(arguments, output: answerFile, timeout: timeout + 10)
        } catch {
            throw Unavailable(description: "\(method) \(path) failed: \(error)")
        }
        let answer = (try? String(contentsOfFile: answerFile, encoding: .utf8)) ?? ""
        guard let status = Int(answer.prefix(3)), status > 0 else {
            throw Unavailable(description: "\(method) \(path): curl gave no status (\(answer))")
        }
        let received = method == "HEAD" ? Data() : FileManager.default.contents(atPath: bodyFile) ?? Data()
        return Response(status: status, body: received,
                        headers: Self.parseHeaders(FileManager.default.contents(atPath: headerFile) ?? Data()))
    }

    /// Creates a bucket with a signed PUT; throws unless the gateway answers 200.
    public func createBucket(_ name: String) throws {
        let response = try signedRequest("PUT", "/\(name)")
        guard (200..<300).contains(response.status) else {
            throw Unavailable(description: "creating bucket \(name) was answered \(response.status): \(response.text.prefix(500))")
        }
    }

    /// A new bucket, `prefix-` and a random suffix, created in this gateway; its name.
    public func freshBucket(prefix: String = "test") throws -> String {
        let name = prefix.lowercased() + "-" + Self.randomString(12, from: "abcdefghijklmnopqrstuvwxyz0123456789")
        try createBucket(name)
        return name
    }

    private func requireDirectoryExists() throws {
        guard FileManager.default.fileExists(atPath: path("requests")) else {
            throw Unavailable(description: "the gateway's cluster was stopped and removed: start a new one")
        }
    }

    /// The headers of the last response in a `--dump-header` file (after any 100 Continue).
    static func parseHeaders(_ data: Data) -> [String: String] {
        var headers: [String: String] = [:]
        for line in String(decoding: data, as: UTF8.self).components(separatedBy: "\r\n") {
            if line.hasPrefix("HTTP/") {
                headers = [:]
            } else if let colon = line.firstIndex(of: ":") {
                headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            }
        }
        return headers
    }
}

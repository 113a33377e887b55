import Crypto
import Foundation

/// AWS Signature Version 4 (`AWS4-HMAC-SHA256`): the `Authorization` header of a request, or
/// the query string of a presigned URL.
///
/// The canonical request follows AWS's definition exactly, as S3 checks it: the path encoded
/// once, segment by segment (RFC 3986 unreserved characters kept, `/` kept, every other byte
/// `%XX` uppercase; no `.`/`..` normalisation); the query's names and values encoded (`/` too)
/// and sorted; header names lowercased, values trimmed with inner runs of spaces made one,
/// repeated headers joined by `,`, sorted by name. Checked against AWS's SigV4 test suite and
/// the S3 examples of AWS's documentation (`SigV4SuiteTests`, `S3SigningExampleTests`).
public struct SigV4Signer: Sendable {
    public var credentials: S3Credentials
    public var region: String
    /// The signing service: `s3` for S3 (`service` in AWS's generic test suite).
    public var service: String
    /// Whether `sign` adds `x-amz-content-sha256` with the payload's hash (S3 requires it; the
    /// generic test suite has it not). Default: for the service `s3`.
    public var sendsContentSHA256: Bool

    public init(credentials: S3Credentials, region: String, service: String = "s3", sendsContentSHA256: Bool? = nil) {
        self.credentials = credentials
        self.region = region
        self.service = service
        self.sendsContentSHA256 = sendsContentSHA256 ?? (service == "s3")
    }

    /// A header or a query parameter, as given (not yet encoded).
    public struct Field: Sendable, Equatable {
        public var name: String
        public var value: String
        public init(_ name: String, _ value: String) {
            self.name = name
            self.value = value
        }
    }

    /// What is signed of a request: the method, the path and query before any encoding, and the
    /// headers to sign (`Host` among them).
    public struct Request: Sendable, Equatable {
        public var method: String
        /// The path as it names the object (`/bucket/a b.jpg`), not yet percent-encoded.
        public var path: String
        public var query: [Field]
        public var headers: [Field]

        public init(method: String, path: String, query: [Field] = [], headers: [Field]) {
            self.method = method
            self.path = path
            self.query = query
            self.headers = headers
        }

        /// The value of a header (names compared case-insensitively; repeated ones joined by `,`).
        public func header(_ name: String) -> String? {
            let values = headers.filter { $0.name.lowercased() == name.lowercased() }.map(\.value)
            return values.isEmpty ? nil : values.joined(separator: ",")
        }
    }

    /// The hash of the body as the canonical request's last line says it.
    public enum Payload: Sendable, Equatable {
        /// The SHA-256 of the body in lowercase hex: S3 checks the body against it.
        case sha256(String)
        /// `UNSIGNED-PAYLOAD`: the body is not part of the signature (presigned URLs, streams).
        case unsigned

        /// The hash of no body.
        public static let empty = Payload.sha256("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")

        /// The payload hash of `bytes`.
        public static func hashing<Bytes: DataProtocol>(_ bytes: Bytes) -> Payload {
            .sha256(SigV4Encoding.sha256Hex(bytes))
        }

        public var value: String {
            switch self {
            case .sha256(let hex): hex
            case .unsigned: "UNSIGNED-PAYLOAD"
            }
        }
    }

    /// Every intermediate of one signature, for tests and for diagnosing a `SignatureDoesNotMatch`
    /// (the server's error body carries its own canonical request to compare).
    public struct Signature: Sendable, Equatable {
        public var canonicalRequest: String
        public var stringToSign: String
        /// `host;x-amz-date`: the signed headers' names, lowercased, sorted.
        public var signedHeaders: String
        /// The signature in lowercase hex.
        public var signature: String
        /// `20150830/us-east-1/service/aws4_request`.
        public var scope: String
    }

    static let algorithm = "AWS4-HMAC-SHA256"
    /// The longest a presigned URL may live: seven days.
    public static let maximumExpiry = 604_800

    // MARK: - Header signing

    /// `request` with the headers that authenticate it: `x-amz-date` (unless present),
    /// `x-amz-security-token` when the credentials have a session token, `x-amz-content-sha256`
    /// when `sendsContentSHA256`, all signed, and `Authorization` last.
    public func sign(_ request: Request, payload: Payload, date: Date) -> Request {
        var signed = request
        let (amzDate, _) = SigV4Encoding.timestamps(date)
        if signed.header("x-amz-date") == nil { signed.headers.append(Field("x-amz-date", amzDate)) }
        if let token = credentials.sessionToken, signed.header("x-amz-security-token") == nil {
            signed.headers.append(Field("x-amz-security-token", token))
        }
        if sendsContentSHA256, signed.header("x-amz-content-sha256") == nil {
            signed.headers.append(Field("x-amz-content-sha256", payload.value))
        }
        let signature = signature(for: signed, payload: payload, date: date)
        signed.headers.append(Field("Authorization", authorization(signature)))
        return signed
    }

    /// The `Authorization` header's value for a signature.
    public func authorization(_ signature: Signature) -> String {
        "\(Self.algorithm) Credential=\(credentials.accessKey)/\(signature.scope), SignedHeaders=\(signature.signedHeaders), Signature=\(signature.signature)"
    }

    /// The signature of `request` exactly as given: every header of it is signed (an
    /// `Authorization` header excepted); nothing is added.
    public func signature(for request: Request, payload: Payload, date: Date) -> Signature {
        let (amzDate, dateStamp) = SigV4Encoding.timestamps(date)
        let (canonicalHeaders, signedHeaders) = Self.canonicalHeaders(request.headers)
        let canonicalRequest = [
            request.method.uppercased(),
            SigV4Encoding.canonicalURI(request.path),
            SigV4Encoding.canonicalQuery(request.query),
            canonicalHeaders,
            signedHeaders,
            payload.value,
        ].joined(separator: "\n")
        let scope = "\(dateStamp)/\(region)/\(service)/aws4_request"
        let stringToSign = [
            Self.algorithm, amzDate, scope, SigV4Encoding.sha256Hex(Array(canonicalRequest.utf8)),
        ].joined(separator: "\n")
        let key = Self.signingKey(secretKey: credentials.secretKey, dateStamp: dateStamp, region: region, service: service)
        let mac = HMAC<SHA256>.authenticationCode(for: Array(stringToSign.utf8), using: key)
        return Signature(canonicalRequest: canonicalRequest, stringToSign: stringToSign, signedHeaders: signedHeaders,
                         signature: SigV4Encoding.hex(mac), scope: scope)
    }

    /// The canonical headers block (each `name:value` line ending in a line feed) and the
    /// signed headers list.
    static func canonicalHeaders(_ headers: [Field]) -> (block: String, signed: String) {
        var byName: [String: [String]] = [:]
        var order: [String] = []
        for field in headers {
            let name = field.name.lowercased()
            if name == "authorization" { continue }
            if byName[name] == nil { order.append(name) }
            byName[name, default: []].append(SigV4Encoding.canonicalHeaderValue(field.value))
        }
        let names = order.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        let block = names.map { "\($0):\(byName[$0]!.joined(separator: ","))\n" }.joined()
        return (block, names.joined(separator: ";"))
    }

    /// `kSigning`: HMAC chains of the date, region, service and `aws4_request` from `AWS4` + secret.
    public static func signingKey(secretKey: String, dateStamp: String, region: String, service: String) -> SymmetricKey {
        var key = SymmetricKey(data: Array("AWS4\(secretKey)".utf8))
        for part in [dateStamp, region, service, "aws4_request"] {
            key = SymmetricKey(data: Array(HMAC<SHA256>.authenticationCode(for: Array(part.utf8), using: key)))
        }
        return key
    }

    // MARK: - Presigned URLs

    /// The query string of a presigned request, in order: the request's own parameters and
    /// `X-Amz-Algorithm`, `X-Amz-Credential`, `X-Amz-Date`, `X-Amz-Expires`,
    /// `X-Amz-SignedHeaders` (`host` and every other header of `request`, which the user of the
    /// URL must then send with the same values) and `X-Amz-Security-Token` when there is a session
    /// token, all encoded and sorted, then `X-Amz-Signature`. The payload is `UNSIGNED-PAYLOAD`.
    /// `expires` is in seconds, 1 to 604,800 (checked by the caller: out of range traps).
    public func presignedQuery(_ request: Request, expires: Int, date: Date) -> (query: String, signature: Signature) {
        precondition((1...Self.maximumExpiry).contains(expires), "X-Amz-Expires must be 1...604800 seconds")
        let (amzDate, dateStamp) = SigV4Encoding.timestamps(date)
        let (_, signedHeaders) = Self.canonicalHeaders(request.headers)
        var unsigned = request
        unsigned.query += [
            Field("X-Amz-Algorithm", Self.algorithm),
            Field("X-Amz-Credential", "\(credentials.accessKey)/\(dateStamp)/\(region)/\(service)/aws4_request"),
            Field("X-Amz-Date", amzDate),
            Field("X-Amz-Expires", String(expires)),
            Field("X-Amz-SignedHeaders", signedHeaders),
        ]
        if let token = credentials.sessionToken { unsigned.query.append(Field("X-Amz-Security-Token", token)) }
        let signature = signature(for: unsigned, payload: .unsigned, date: date)
        let query = SigV4Encoding.canonicalQuery(unsigned.query) + "&X-Amz-Signature=" + signature.signature
        return (query, signature)
    }
}

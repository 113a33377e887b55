import Foundation

/// The keys requests are signed with: an access key, its secret, and the session token of
/// temporary credentials. Its description names the access key only, never the secret or token.
public struct S3Credentials: Sendable, Equatable, CustomStringConvertible, CustomReflectable {
    public var accessKey: String
    public var secretKey: String
    /// The token of temporary credentials (STS); sent as `x-amz-security-token`.
    public var sessionToken: String?

    public init(accessKey: String, secretKey: String, sessionToken: String? = nil) {
        self.accessKey = accessKey
        self.secretKey = secretKey
        self.sessionToken = sessionToken
    }

    /// The credentials in `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY` and (optional)
    /// `AWS_SESSION_TOKEN`; throws `.configuration` naming what is missing (never a value).
    public static func fromEnvironment(
        _ environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws(ObjectStorageError) -> S3Credentials {
        func value(_ name: String) -> String? {
            guard let text = environment[name]?.trimmingCharacters(in: .whitespacesAndNewlines), !text.isEmpty else { return nil }
            return text
        }
        let missing = ["AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"].filter { value($0) == nil }
        guard missing.isEmpty, let access = value("AWS_ACCESS_KEY_ID"), let secret = value("AWS_SECRET_ACCESS_KEY") else {
            throw .configuration(reason: "no S3 credentials: \(missing.joined(separator: " and ")) not set in the environment")
        }
        return S3Credentials(accessKey: access, secretKey: secret, sessionToken: value("AWS_SESSION_TOKEN"))
    }

    public var description: String {
        "S3Credentials(accessKey: \(accessKey), secretKey: <redacted>\(sessionToken == nil ? "" : ", sessionToken: <redacted>"))"
    }

    /// What `dump` and debuggers show: the access key, not the secrets.
    public var customMirror: Mirror {
        Mirror(self, children: ["accessKey": accessKey, "secretKey": "<redacted>"], displayStyle: .struct)
    }
}

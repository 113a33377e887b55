import Foundation

/// A command that checks its configuration before it starts: `config check --for COMMAND` asks
/// the same question of the same function, so that the check fails exactly where the start would.
public enum StartingCommand: String, CaseIterable, Sendable {
    case serve, run
}

extension Configuration {
    /// Reads a configuration file's bytes; a file that is not there, one that cannot be read
    /// and a folder are told apart, each with what to do.
    public static func readFile(_ path: String) throws(ConfigurationError) -> Data {
        var status = stat()
        guard stat(path, &status) == 0 else {
            let reason = errno
            if reason == ENOENT || reason == ENOTDIR {
                throw ConfigurationError(file: path, key: "", problem: "no such file; check the path (or set DARKROOM_CONFIG, or name none to use the built-in defaults)")
            }
            throw ConfigurationError(file: path, key: "", problem: "cannot look at it (\(String(cString: strerror(reason)))); check the folders above it")
        }
        if status.st_mode & S_IFMT == S_IFDIR {
            throw ConfigurationError(file: path, key: "", problem: "a folder, not a file; name the pipeline.json inside it")
        }
        guard let handle = FileHandle(forReadingAtPath: path) else {
            let reason = errno
            let detail = reason == EACCES ? "permission denied" : String(cString: strerror(reason))
            throw ConfigurationError(file: path, key: "", problem: "the file is there but cannot be read (\(detail)); check its owner and mode")
        }
        defer { try? handle.close() }
        do {
            return try handle.readToEnd() ?? Data()
        } catch {
            throw ConfigurationError(file: path, key: "", problem: "the file is there but cannot be read (\(error.localizedDescription))")
        }
    }

    /// What would stop `command` from starting with these settings, each problem one line naming
    /// its key and what to do: `serve` without a bearer token, and for both commands,
    /// `webhooks.urls` without a signing secret. `darkroom serve` and `darkroom run` refuse to
    /// start with these lines; `darkroom config check --for COMMAND` prints the same ones.
    /// Nil `command`: the problems every command shares.
    public func startProblems(for command: StartingCommand?,
                              environment: [String: String] = ProcessInfo.processInfo.environment) -> [String] {
        var problems: [String] = []
        if command == .serve, server.resolvedToken(environment: environment) == nil {
            problems.append("server.token: no API token: set server.token in pipeline.json or DARKROOM_API_TOKEN in the environment")
        }
        if !webhooks.urls.isEmpty, webhooks.resolvedSecret(environment: environment) == nil {
            problems.append("webhooks.secret: webhooks.urls lists \(Set(webhooks.urls).count) endpoint(s) but no signing secret is set; "
                            + "set webhooks.secret in pipeline.json or DARKROOM_WEBHOOK_SECRET in the environment")
        }
        return problems
    }
}

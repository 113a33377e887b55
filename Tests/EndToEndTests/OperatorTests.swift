import Catalog
import ChildProcesses
import Foundation
import GRDB
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// What an operator setting Darkroom up on a server relies on: the version, the configuration
/// check, `make install`, the systemd units and the readiness notification.
@Suite("Operating Darkroom")
struct OperatorTests {
    /// Runs a program to its end with extra environment; its status and output.
    @discardableResult
    static func run(_ executable: String, _ arguments: [String], in directory: String? = nil,
                    environment extra: [String: String] = [:]) throws -> (status: Int32, stdout: String, stderr: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if let directory { process.currentDirectoryURL = URL(fileURLWithPath: directory) }
        process.environment = ProcessInfo.processInfo.environment.merging(extra) { $1 }
        let stem = NSTemporaryDirectory() + "darkroom-op-" + UUID().uuidString
        _ = FileManager.default.createFile(atPath: stem + ".out", contents: nil)
        _ = FileManager.default.createFile(atPath: stem + ".err", contents: nil)
        defer { try? FileManager.default.removeItem(atPath: stem + ".out"); try? FileManager.default.removeItem(atPath: stem + ".err") }
        process.standardOutput = FileHandle(forWritingAtPath: stem + ".out")
        process.standardError = FileHandle(forWritingAtPath: stem + ".err")
        try process.run()
        process.waitForExit()
        return (process.terminationStatus, (try? String(contentsOfFile: stem + ".out", encoding: .utf8)) ?? "",
                (try? String(contentsOfFile: stem + ".err", encoding: .utf8)) ?? "")
    }

    static func which(_ program: String) -> String? {
        ["/usr/bin/", "/bin/", "/usr/local/bin/"].map { $0 + program }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    @Test func versionSaysWhichBuildAndWhichLibraries() throws {
        let line = try Self.run(Workspace.binary, ["--version"])
        #expect(line.status == 0)
        #expect(line.stdout.hasPrefix("darkroom ") && line.stdout.contains("(commit ") && line.stdout.contains(", built "), "\(line.stdout)")

        let json = try Self.run(Workspace.binary, ["version", "--json"])
        #expect(json.status == 0)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        let version = try #require(object["version"] as? String)
        #expect(line.stdout.hasPrefix("darkroom \(version) "))
        #expect(version.split(separator: ".").count == 3)
        #expect(object["commit"] is String && object["built"] is String)
        let libraries = try #require(object["libraries"] as? [String: String])
        #expect(Set(libraries.keys) == ["libjpeg-turbo", "libpng", "libexif", "sqlite", "libheif", "libwebp", "lcms2"])
        // The libraries say their own versions at run time (libexif's comes from the build):
        // numbers with dots, as their own releases are named.
        for name in ["libjpeg-turbo", "libpng", "sqlite", "libheif", "libwebp", "lcms2"] {
            let said = libraries[name] ?? "none"
            #expect(said.split(separator: ".").count >= 2 && said.split(separator: ".").allSatisfy { $0.allSatisfy(\.isNumber) },
                    "\(name): \(said)")
        }
        // The text form lists the same libraries, one a line.
        let text = try Self.run(Workspace.binary, ["version"])
        for (name, version) in libraries { #expect(text.stdout.contains("  \(name) \(version)\n"), "\(name) in \(text.stdout)") }
    }

    @Test func configCheckShowsEachValueWithItsSource() throws {
        let space = try Workspace()
        let check = try Self.run(Workspace.binary, ["config", "check", "--config", space.configPath],
                                 environment: ["DARKROOM_API_TOKEN": "from-the-environment"])
        #expect(check.status == 0, "\(check.stderr)")
        let lines = check.stdout.split(separator: "\n").map(String.init)
        #expect(lines.first?.contains("OK") == true)
        #expect(lines.contains { $0.hasPrefix("spool.root ") && $0.contains(space.spool) && $0.hasSuffix("(file)") })
        #expect(lines.contains { $0.hasPrefix("spool.lease_seconds ") && $0.hasSuffix("(file)") })
        #expect(lines.contains { $0.hasPrefix("imaging.pixel_limit ") && $0.hasSuffix("(default)") })
        #expect(lines.contains { $0.hasPrefix("server.token ") && $0.contains("********") && $0.hasSuffix("(environment)") })
        #expect(!check.stdout.contains("from-the-environment"), "secrets are masked")

        let show = try Self.run(Workspace.binary, ["config", "show", "--json", "--config", space.configPath])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(show.stdout.utf8)) as? [String: Any])
        let settings = try #require(object["settings"] as? [String: [String: Any]])
        #expect(settings["worker.concurrency"]?["value"] as? Int == 2)
        #expect(settings["worker.concurrency"]?["source"] as? String == "file")
        #expect(settings["catalog.path"]?["value"] as? String == space.catalogPath)
    }

    @Test func configCheckListsEveryProblemOfABrokenFile() throws {
        let space = try Workspace()
        let broken = space.root + "/broken.json"
        try Data("""
            {"spool": {"root": "x", "setle_seconds": 3}, "worker": {"concurrency": -1},
             "imaging": {"background": "blue"}, "server": {"port": 99999}}
            """.utf8).write(to: URL(fileURLWithPath: broken))
        let check = try Self.run(Workspace.binary, ["config", "check", "--config", broken])
        #expect(check.status == 1)
        let problems = check.stderr.split(separator: "\n").map(String.init)
        #expect(problems.count == 4, "\(problems)")
        for key in ["spool.setle_seconds", "worker.concurrency", "imaging.background", "server.port"] {
            #expect(problems.contains { $0.hasPrefix(broken + ": " + key + ": ") }, "\(key) in \(problems)")
        }
    }

    /// `make install` into a staging folder with the binary already built, then `make uninstall`.
    @Test func makeInstallPutsEveryFileInPlaceAndUninstallRemovesThem() throws {
        let make = try #require(Self.which("make"), "make is not installed")
        // `make test` builds the man page generator first (a build from inside `swift test`
        // would wait for the test run's own lock).
        try #require(FileManager.default.isExecutableFile(atPath: Workspace.packageRoot + "/.build/debug/generate-manual"),
                     "build it first: swift build --product generate-manual (make test does)")
        let stage = NSTemporaryDirectory() + "darkroom-install-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: stage) }
        let install = try Self.run(make, ["install", "DESTDIR=" + stage, "BIN=" + Workspace.binary], in: Workspace.packageRoot)
        #expect(install.status == 0, "\(install.stderr.suffix(2000))")
        let prefix = stage + "/usr/local"
        var expected = ["/bin/darkroom", "/etc/darkroom/pipeline.json", "/etc/darkroom/darkroom.env",
                        "/lib/systemd/system/darkroom.service", "/lib/systemd/system/darkroom-serve.service",
                        "/lib/sysusers.d/darkroom.conf", "/share/bash-completion/completions/darkroom",
                        "/share/zsh/site-functions/_darkroom", "/share/fish/vendor_completions.d/darkroom.fish",
                        "/share/man/man1/darkroom.1"]
        // A man page for every command, the subcommands' too.
        expected += ["run", "serve", "import", "enqueue", "status", "retry", "inspect", "render", "places.add",
                     "moments.create", "moments.update", "config.check", "version"].map { "/share/man/man1/darkroom.\($0).1" }
        for file in expected {
            #expect(FileManager.default.fileExists(atPath: prefix + file), "\(file) installed")
        }
        let unit = try String(contentsOfFile: prefix + "/lib/systemd/system/darkroom.service", encoding: .utf8)
        #expect(unit.contains("ExecStart=/usr/local/bin/darkroom run --config /usr/local/etc/darkroom/pipeline.json"))
        #expect(unit.contains("Type=notify") && unit.contains("ProtectSystem=strict") && unit.contains("NoNewPrivileges=yes"))
        #expect(!unit.contains("DARKROOM_API_TOKEN="), "no secret in the unit")
        let bash = try String(contentsOfFile: prefix + "/share/bash-completion/completions/darkroom", encoding: .utf8)
        #expect(bash.contains("darkroom") && bash.contains("complete"))
        let installedConfig = try Self.run(prefix + "/bin/darkroom", ["config", "check", "--config", prefix + "/etc/darkroom/pipeline.json"])
        #expect(installedConfig.status == 0, "the installed pipeline.json is valid: \(installedConfig.stderr)")

        let uninstall = try Self.run(make, ["uninstall", "DESTDIR=" + stage], in: Workspace.packageRoot)
        #expect(uninstall.status == 0, "\(uninstall.stderr.suffix(2000))")
        let left = FileManager.default.enumerator(atPath: stage)?.allObjects.compactMap { $0 as? String }.filter { relative in
            var isDirectory: ObjCBool = false
            return FileManager.default.fileExists(atPath: stage + "/" + relative, isDirectory: &isDirectory) && !isDirectory.boolValue
        } ?? []
        #expect(left.isEmpty, "left behind: \(left)")
    }

    @Test(.enabled(if: OperatorTests.which("systemd-analyze") != nil, "systemd-analyze is not installed: units not verified"))
    func systemdAcceptsBothUnits() throws {
        let make = try #require(Self.which("make"), "make is not installed")
        let analyze = try #require(Self.which("systemd-analyze"))
        try #require(FileManager.default.isExecutableFile(atPath: Workspace.packageRoot + "/.build/debug/generate-manual"),
                     "build it first: swift build --product generate-manual (make test does)")
        // Installed under a real prefix (no DESTDIR), so that the units name files that exist.
        let prefix = NSTemporaryDirectory() + "darkroom-units-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: prefix) }
        let install = try Self.run(make, ["install", "PREFIX=" + prefix, "BIN=" + Workspace.binary], in: Workspace.packageRoot)
        #expect(install.status == 0, "\(install.stderr.suffix(2000))")
        let units = ["darkroom.service", "darkroom-serve.service"].map { prefix + "/lib/systemd/system/" + $0 }
        let verify = try Self.run(analyze, ["verify", "--man=no"] + units)
        #expect(verify.status == 0, "\(verify.stderr)")
        #expect(verify.stderr.isEmpty && verify.stdout.isEmpty, "no warning: \(verify.stderr)")
    }

    /// A datagram socket standing in for systemd's notification socket.
    final class NotifySocket {
        let path = NSTemporaryDirectory() + "darkroom-notify-" + UUID().uuidString.prefix(8) + ".sock"
        let fd: Int32

        init() throws {
            fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
            var address = sockaddr_un()
            address.sun_family = sa_family_t(AF_UNIX)
            let bytes = Array(path.utf8)
            withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
            let bound = withUnsafePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
            }
            guard fd >= 0, bound == 0 else { throw CocoaError(.fileWriteUnknown) }
            var timeout = timeval(tv_sec: 60, tv_usec: 0)
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        }

        deinit {
            close(fd)
            unlink(path)
        }

        /// The next notification, or nil after a minute without one.
        func receive() -> String? {
            var buffer = [UInt8](repeating: 0, count: 4096)
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            return count > 0 ? String(decoding: buffer.prefix(count), as: UTF8.self) : nil
        }
    }

    @Test(arguments: ["run", "serve"])
    func theDaemonSaysReadyOnlyOnceTheCatalogIsOpenAndStoppingWhenItDrains(command: String) throws {
        let space = try Workspace()
        let socket = try NotifySocket()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Workspace.binary)
        process.arguments = [command, "--config", space.configPath] + (command == "serve" ? ["--port", "0"] : [])
        process.environment = ProcessInfo.processInfo.environment.merging(
            ["NOTIFY_SOCKET": socket.path, "DARKROOM_API_TOKEN": "token", "SWIFT_BACKTRACE": "enable=no"]) { $1 }
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        #expect(!FileManager.default.fileExists(atPath: space.catalogPath))
        try process.run()
        defer { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }

        let ready = try #require(socket.receive(), "no notification within a minute")
        #expect(ready.split(separator: "\n").contains("READY=1"), "\(ready)")
        // Ready means the catalog is open (created and migrated) and the spool is there.
        let tables = try DatabaseQueue(path: space.catalogPath).read { db in try String.fetchAll(db, sql: "SELECT name FROM sqlite_master") }
        #expect(tables.contains("jobs") && tables.contains("pictures"))
        #expect(FileManager.default.fileExists(atPath: space.incoming))

        kill(process.processIdentifier, SIGTERM)
        #expect(socket.receive() == "STOPPING=1")
        process.waitForExit()
        #expect(process.terminationStatus == 0)
    }
}

import Catalog
import ChildProcesses
import Foundation
import PostgresCatalog
import PostgresHarness
import PostgresNIO
import PostgresStore
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Three "machines" on one PostgreSQL catalog and one shared storage directory, as a cluster
/// of Darkroom hosts on a shared mount: each machine is a process group in a UTS namespace of
/// its own (its own host name, so its workers' names say which machine did what). Photos
/// arrive at once through uploads (two machines serve the HTTP API), a drop folder and an
/// import; one machine is killed with SIGKILL, all its processes, twice during the run.
@Suite("Several machines on one PostgreSQL catalog and one shared storage",
       .enabled(if: SharedCluster.available, Comment(rawValue: SharedCluster.skipReason)),
       .enabled(if: Machine.canNameHosts, "this machine cannot make UTS namespaces (unshare -u): the machines would share one host name"))
struct SeveralMachinesTests {
    static let perChannel = 200
    /// Photos of each channel that are cut short: they must end as failures with their reason.
    static let truncatedPerChannel = 2

    @Test func sixHundredPhotosThroughUploadsADropFolderAndAnImportWithOneMachineKilledTwice() throws {
        let location = try SharedCluster.freshDatabase()
        let token = "several-machines-\(UUID().uuidString)"
        let environment = ["DARKROOM_CATALOG_URL": location.description,
                           "DARKROOM_API_TOKEN": token]
        // Short leases, so that the killed machine's photos come back within the test.
        let space = try Workspace(leaseSeconds: 3, concurrency: 1, scanInterval: 0.2)
        let catalog = try PostgresCatalog(location: location)
        defer { catalog.close() }

        // Every photo is the same camera file (one place, one time: all the commits meet in one
        // moment) with bytes of its own after its end; a few are cut short.
        let base = LibraryTree.sample("Landscape_6.jpg")
        func photo(_ channel: String, _ index: Int) -> [UInt8] {
            let bytes = base + Array("\(channel)-\(index)".utf8)
            return index < Self.truncatedPerChannel ? Array(bytes.prefix(bytes.count / 3)) : bytes
        }
        let importFolder = space.root + "/phone-backup"
        try FileManager.default.createDirectory(atPath: importFolder, withIntermediateDirectories: true)
        for index in 0..<Self.perChannel {
            _ = FileManager.default.createFile(atPath: importFolder + "/imp-\(index).jpg", contents: Data(photo("imp", index)))
        }

        let ports = [try TemporaryCluster.freePort(), try TemporaryCluster.freePort()]
        let machines = [
            Machine(name: "m1", space: space, environment: environment, commands: [["serve", "--port", "\(ports[0])"]]),
            Machine(name: "m2", space: space, environment: environment,
                    commands: [["run", "--no-progress"], ["import", importFolder, "--progress", "none"]]),
            Machine(name: "m3", space: space, environment: environment,
                    commands: [["run", "--no-progress"], ["serve", "--no-workers", "--port", "\(ports[1])"]]),
        ]
        for machine in machines { try machine.start() }
        defer { for machine in machines { machine.kill() } }
        for port in ports { #expect(Machine.waitForHTTP(port: port, token: token), "the server on port \(port) answers") }

        var kills = 0
        /// The machine that runs a worker and the import dies at a third and at two thirds of the
        /// pictures, all its processes at once, and comes back (the import resumes from its journal).
        func killWhenDue() throws {
            let due = [Self.perChannel * 3 / 5, Self.perChannel * 9 / 5]
            guard kills < due.count, try catalog.counts(now: Date()).pictures >= due[kills] else { return }
            machines[1].kill()
            kills += 1
            try machines[1].start()
        }
        var accepted: [String] = []
        for index in 0..<Self.perChannel {
            if let id = Machine.upload(photo("up", index), port: ports[index % 2], token: token) { accepted.append(id) }
            try space.drop(bytes: photo("drop", index), as: "drop-\(index).jpg")
            try killWhenDue()
        }
        #expect(accepted.count == Self.perChannel, "every upload was accepted")
        let good = 3 * (Self.perChannel - Self.truncatedPerChannel)
        let deadline = Date().addingTimeInterval(600)
        while Date() < deadline {
            try killWhenDue()
            let counts = try catalog.counts(now: Date())
            if kills == 2, counts.pictures >= good, counts.jobsFailed >= 3 * Self.truncatedPerChannel,
               try catalog.photoQueueDepth() == (0, 0), machines[1].importFinished { break }
            usleep(200_000)
        }
        #expect(kills == 2, "the machine was killed twice during the run")
        // A kill between two steps of a removal can leave a done photo, or a ticket or sidecar
        // without its photo, under queued/: the running machines' reconciliation (every half
        // lease, for files quiet for a lease, companions for two) removes them.
        let drained = Date()
        while !space.files(under: space.spool + "/queued").isEmpty, Date().timeIntervalSince(drained) < 4 * 3 {
            usleep(250_000)
        }
        print("several machines: queued/ empty \(String(format: "%.1f", Date().timeIntervalSince(drained))) s after the queue drained")
        for machine in machines { machine.stop() }
        // The first kill came while the import was under way: it was run again and resumed.
        let runs = try Self.count("SELECT count(*) FROM imports", location)
        #expect(runs >= 2, "the import was interrupted and run again (\(runs) runs)")

        // Every photo is a picture exactly once, or a failure with its reason.
        let counts = try catalog.counts(now: Date())
        #expect(counts.pictures == good && counts.jobsAdded == good, "\(counts)")
        #expect(counts.jobsDuplicate == 0, "no photo was committed twice: \(counts)")
        let jobs = try catalog.allJobs()
        let failedNames = Set(jobs.filter { $0.outcome == .failed }.map { ($0.sourceName as NSString).lastPathComponent })
        // An upload is named after its id: the first ones sent were the truncated ones.
        let truncated = Set(["drop", "imp"].flatMap { channel in (0..<Self.truncatedPerChannel).map { "\(channel)-\($0).jpg" } })
            .union(accepted.prefix(Self.truncatedPerChannel).map { "\($0).jpg" })
        #expect(failedNames == truncated, """
            failed: \(jobs.filter { $0.outcome == .failed && !truncated.contains(($0.sourceName as NSString).lastPathComponent) }
                .map { "\($0.sourceName) on \($0.worker): \($0.error ?? "no reason")" })
            """)
        #expect(jobs.filter { $0.outcome == .failed }.allSatisfy { !($0.error ?? "").isEmpty }, "every failure has its reason")
        // No queue job lost or completed twice: every one done or failed, and no claim committed twice.
        let queue = try Self.queueStates(location)
        #expect(queue["queued", default: 0] == 0 && queue["running", default: 0] == 0, "\(queue)")
        // Uploads, the drop folder and the import: every photo of the three was a queue job.
        #expect(queue["done", default: 0] == 3 * (Self.perChannel - Self.truncatedPerChannel), "\(queue)")
        #expect(queue["failed", default: 0] == 3 * Self.truncatedPerChannel, "\(queue)")
        let committedClaims = jobs.filter { $0.outcome != .failed }.map(\.claimPath)
        #expect(Set(committedClaims).count == committedClaims.count, "no claim committed twice")
        // No file orphaned: nothing waits in the spool, the failures are in failed/ with their
        // reasons, and every file of the library is a picture's.
        #expect(space.files(under: space.incoming).isEmpty)
        #expect(space.files(under: space.spool + "/queued").isEmpty)
        #expect(space.files(under: space.spool + "/processing").isEmpty)
        // (An imported photo that fails stays in its folder: no copy of it goes to failed/.)
        #expect(space.files(under: space.spool + "/failed").filter { $0.hasSuffix(".error.json") }.count == 2 * Self.truncatedPerChannel)
        var referenced = Set<String>()
        for picture in try catalog.allPictures() {
            referenced.insert(picture.originalPath)
            for variant in try catalog.variants(ofPicture: picture.id ?? 0) { referenced.insert(variant.path) }
        }
        let stored = Set(space.files(under: space.library))
        #expect(stored.subtracting(referenced).isEmpty, "orphaned in the library: \(stored.subtracting(referenced).sorted().prefix(5))")
        #expect(referenced.subtracting(stored).isEmpty, "missing from the library: \(referenced.subtracting(stored).sorted().prefix(5))")
        // Every machine took part (a worker's name is its host's, then its process's).
        let hosts = Set(jobs.map { String($0.worker.prefix { $0 != "." }) })
        #expect(hosts.isSuperset(of: ["m1", "m2", "m3"]), "\(hosts)")
        // The import's photos were shared out: machines other than the importing one took some.
        let importHosts = Set(jobs.filter { $0.claimPath.hasPrefix("import:") }.map { String($0.worker.prefix { $0 != "." }) })
        #expect(importHosts.count >= 2, "the import's photos were processed on \(importHosts.sorted())")
        // The moments are those one worker would have made.
        let rebuild = try space.run(["moments", "rebuild", "--check"], environment: environment)
        #expect(rebuild.status == 0, "moments rebuild --check: \(rebuild.stdout) \(rebuild.stderr)")
        #expect(!FileManager.default.fileExists(atPath: space.catalogPath), "no SQLite catalog was written")
    }

    /// One count from the catalog's database.
    static func count(_ sql: String, _ location: PostgresLocation) throws -> Int {
        let pool = try PostgresPool(location: location, maximumConnections: 1)
        defer { pool.close() }
        return try pool.withSession { session in Int(try session.value(PostgresQuery(unsafeSQL: sql), as: Int64.self) ?? 0) }
    }

    /// The shared queue's jobs by state.
    static func queueStates(_ location: PostgresLocation) throws -> [String: Int] {
        let pool = try PostgresPool(location: location, maximumConnections: 1)
        defer { pool.close() }
        return try pool.withSession { session in
            var states: [String: Int] = [:]
            for row in try session.rows("SELECT state, count(*) FROM queue_jobs GROUP BY state") {
                let (state, count) = try row.decode((String, Int64).self)
                states[state] = Int(count)
            }
            return states
        }
    }
}

/// One "machine": `darkroom` processes in a process group of their own and a UTS namespace with
/// its own host name, on the workspace's shared storage. Killing it kills every process of it.
final class Machine: @unchecked Sendable {
    // @unchecked: used from the test's one thread.
    let name: String
    let space: Workspace
    let environment: [String: String]
    let commands: [[String]]
    /// Whether its processes get a PID namespace of their own (as a container's do): their pids
    /// then repeat those of another machine's, and its process table is not this one's.
    let ownPIDs: Bool
    /// The log files' prefix: machines with one host name keep their logs apart.
    let logName: String
    /// The process group: its leader's pid.
    private var group: pid_t?
    private var importStatus: String { space.root + "/\(logName)-import.status" }

    init(name: String, space: Workspace, environment: [String: String], commands: [[String]], ownPIDs: Bool = false,
         logName: String? = nil) {
        self.name = name
        self.space = space
        self.environment = environment
        self.commands = commands
        self.ownPIDs = ownPIDs
        self.logName = logName ?? name
    }

    /// What the machine's `index`th command wrote to standard error (its log) so far.
    func log(_ index: Int) -> String {
        (try? String(contentsOfFile: space.root + "/\(logName)-\(index).err", encoding: .utf8)) ?? ""
    }

    /// Whether this machine's import ran to its end (its exit status was written).
    var importFinished: Bool { FileManager.default.fileExists(atPath: importStatus) }

    /// Whether UTS namespaces can be made here (root, or a kernel that allows it).
    static let canNameHosts = unshares(["-u"])
    /// Whether UTS and PID namespaces can be made here.
    static let canSeparatePIDs = unshares(["-u", "-p", "-f", "--mount-proc"])

    private static func unshares(_ options: [String]) -> Bool {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/unshare")
        process.arguments = options + ["true"]
        guard (try? process.run()) != nil else { return false }
        process.waitForExit()
        return process.terminationStatus == 0
    }

    /// Starts the machine's processes: a shell that leads a new session (and so a process group
    /// of its own), in a UTS namespace with the machine's host name, runs each command in the
    /// background and waits. Spawned and reaped directly (posix_spawn, waitpid): Foundation's
    /// `Process` does not always see the end of a child whose own children live on.
    func start() throws {
        let quote = { (word: String) in "'" + word.replacingOccurrences(of: "'", with: "'\\''") + "'" }
        // The machine starts with none of the test process's descriptors (posix_spawn passes on
        // every one not marked close-on-exec): a file another test is writing would otherwise
        // stay open for writing in its processes.
        var script = "for fd in /proc/$$/fd/*; do fd=${fd##*/}; [ \"$fd\" -gt 2 ] && eval \"exec $fd>&-\" 2>/dev/null; done\n"
        script += "hostname \(name)\n"
        for (index, command) in commands.enumerated() {
            let line = ([Workspace.binary] + command + ["--config", space.configPath]).map(quote).joined(separator: " ")
            let log = quote(space.root + "/\(logName)-\(index)")
            // The import's end is written down, so that the test knows it finished (not killed).
            let after = command.first == "import" ? "; echo $? > \(quote(importStatus))" : ""
            script += "( \(line) >> \(log).out 2>> \(log).err\(after) ) &\n"
        }
        script += "wait\n"
        var variables = ProcessInfo.processInfo.environment
        variables["SWIFT_BACKTRACE"] = "enable=no"
        variables.merge(environment) { _, new in new }
        // A PID namespace gets a /proc of its own, as a container's does: libdispatch's thread
        // pool monitor reads /proc/<tid>/stat by the thread ids it sees, and in a namespace
        // showing the parent's /proc it finds none and traps (SIGILL, "trap invalid opcode in
        // libdispatch.so", in _dispatch_workq_monitor_pools).
        let argv = ["/usr/bin/unshare", "-u"] + (ownPIDs ? ["-p", "-f", "--mount-proc"] : []) + ["/bin/bash", "-c", script]
        var cArguments = argv.map { strdup($0) } + [nil]
        var cEnvironment = variables.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for pointer in cArguments + cEnvironment { free(pointer) } }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // POSIX_SPAWN_SETSID (glibc 2.26 and later; not imported into Swift).
        posix_spawnattr_setflags(&attributes, 0x80)
        // The machine's processes live for the test: none may hold this process's descriptors.
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        ChildSpawning.closeInheritedDescriptors(&actions)
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, argv[0], &actions, &attributes, &cArguments, &cEnvironment)
        guard spawned == 0 else { throw POSIXError(POSIXErrorCode(rawValue: spawned) ?? .EINVAL) }
        group = pid
    }

    /// SIGKILL to every process of the machine, then waits until none is left.
    func kill() { signal(SIGKILL) }

    /// SIGTERM to every process (a graceful stop), then waits until none is left.
    func stop() { signal(SIGTERM) }

    private func signal(_ number: Int32) {
        guard let leader = group else { return }
        Glibc.kill(-leader, number)
        var status: Int32 = 0
        // A graceful stop has a minute; then the machine is killed, so the test never hangs on it.
        let stopBy = Date().addingTimeInterval(60)
        while waitpid(leader, &status, WNOHANG) == 0 {
            if Date() >= stopBy {
                Issue.record("machine \(name) did not stop within a minute of signal \(number); killed")
                Glibc.kill(-leader, SIGKILL)
                while waitpid(leader, &status, 0) < 0 && errno == EINTR {}
                break
            }
            usleep(20_000)
        }
        // The group outlives its leader until its last process ends.
        let deadline = Date().addingTimeInterval(60)
        while Glibc.kill(-leader, 0) == 0, Date() < deadline { usleep(20_000) }
        group = nil
    }

    /// One HTTP/1.1 exchange on loopback, the connection closed after it: status and body.
    static func exchange(port: Int, head: String, body: [UInt8] = [], timeout seconds: Int = 60) -> (status: Int, body: String)? {
        exchangeBytes(port: port, head: head, body: body, timeout: seconds).map { ($0.status, String(decoding: $0.body, as: UTF8.self)) }
    }

    /// The same, the answer's body as bytes.
    static func exchangeBytes(port: Int, head: String, body: [UInt8] = [], timeout seconds: Int = 60) -> (status: Int, body: [UInt8])? {
        guard let socket = connectLoopback(port: port, timeout: seconds) else { return nil }
        defer { close(socket) }
        guard sendAll(Array(head.utf8) + body, on: socket) else { return nil }
        var answer: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = recv(socket, &buffer, buffer.count, 0)
            if n <= 0 { break }
            answer += buffer[0..<n]
        }
        let separator: [UInt8] = [13, 10, 13, 10]
        guard let end = (0..<max(0, answer.count - 3)).first(where: { answer[$0..<$0 + 4].elementsEqual(separator) }),
              let status = String(decoding: answer[..<end], as: UTF8.self).split(separator: " ").dropFirst().first.flatMap({ Int($0) })
        else { return nil }
        return (status, Array(answer[(end + 4)...]))
    }

    /// A TCP connection to 127.0.0.1:`port` whose reads and writes give up after `seconds` (a
    /// server that stops answering fails the exchange instead of hanging the test); nil when
    /// nothing listens.
    static func connectLoopback(port: Int, timeout seconds: Int) -> Int32? {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var timeout = timeval(tv_sec: seconds, tv_usec: 0)
        setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(socket, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        let connected = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
        guard connected else {
            close(socket)
            return nil
        }
        return socket
    }

    /// Sends every byte; false when the connection ends first.
    static func sendAll(_ bytes: [UInt8], on socket: Int32) -> Bool {
        var sent = 0
        while sent < bytes.count {
            let n = bytes[sent...].withUnsafeBytes { send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard n > 0 else { return false }
            sent += n
        }
        return true
    }

    /// Waits until the server on `port` answers `/healthz/ready`.
    static func waitForHTTP(port: Int, token: String) -> Bool {
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline {
            let head = "GET /healthz/ready HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(token)\r\nConnection: close\r\n\r\n"
            if exchange(port: port, head: head)?.status == 200 { return true }
            usleep(100_000)
        }
        return false
    }

    /// Uploads a photo; its upload id, or nil when it was not accepted.
    static func upload(_ photo: [UInt8], port: Int, token: String) -> String? {
        let head = "POST /v1/uploads HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(token)\r\n"
            + "Content-Type: image/jpeg\r\nContent-Length: \(photo.count)\r\nConnection: close\r\n\r\n"
        guard let answer = exchange(port: port, head: head, body: photo), answer.status == 202,
              let object = try? JSONSerialization.jsonObject(with: Data(answer.body.utf8)) as? [String: Any] else { return nil }
        return object["id"] as? String
    }
}

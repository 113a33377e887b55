import Foundation
import PostgresHarness
import PostgresStore
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Machines are told apart by their instances, never by their host names, and whether a holder
/// of photos is alive is read from its heartbeat in the catalog.
@Suite("Machines are identities, not host names",
       .enabled(if: SharedCluster.available, Comment(rawValue: SharedCluster.skipReason)),
       .enabled(if: Machine.canSeparatePIDs, "this machine cannot make UTS and PID namespaces with their own /proc (unshare -u -p -f --mount-proc)"))
struct MachineIdentityTests {
    /// Two machines with one host name, each its own PID namespace (two containers of one pod
    /// name, or cloned VMs): their processes have the same host name and, often, the same pids.
    /// One imports while the other serves uploads, a slow one among them, and the second starts
    /// its own import while the first's is under way: neither removes the other's files, neither
    /// takes the other's import for abandoned, and no good photo fails.
    @Test func twoMachinesWithOneHostNameImportAndUploadAtOnceWithoutHarmingEachOther() throws {
        let location = try SharedCluster.freshDatabase()
        let token = "twins-\(UUID().uuidString)"
        let environment = ["DARKROOM_CATALOG_URL": location.description, "DARKROOM_API_TOKEN": token]
        let space = try Workspace(leaseSeconds: 10, concurrency: 1, scanInterval: 0.2)
        let base = LibraryTree.sample("Landscape_6.jpg")
        var folders: [String] = []
        for twin in ["a", "b"] {
            let folder = space.root + "/library-\(twin)"
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            for index in 0..<30 {
                _ = FileManager.default.createFile(atPath: folder + "/\(twin)-\(index).jpg", contents: Data(base + Array("\(twin)-\(index)".utf8)))
            }
            folders.append(folder)
        }
        let ports = [try TemporaryCluster.freePort(), try TemporaryCluster.freePort()]
        let twins = (0..<2).map { index in
            Machine(name: "twin", space: space, environment: environment,
                    commands: [["serve", "--port", "\(ports[index])"], ["import", folders[index], "--progress", "none"]],
                    ownPIDs: true, logName: "twin-\(index)")
        }
        defer { for twin in twins { twin.kill() } }
        try twins[0].start()
        #expect(Machine.waitForHTTP(port: ports[0], token: token), "twin 0 serves: \(twins[0].log(0).suffix(1500))")

        // A slow upload to the first machine: its staged file (`.tmp-darkroom-twin.PID.INSTANCE-...`)
        // exists while the second machine starts and sweeps what it takes for dead writers' files.
        let slowPhoto = base + Array("slow".utf8)
        let slow = SlowUpload(port: ports[0], token: token, photo: slowPhoto, seconds: 6)
        slow.start()
        Thread.sleep(forTimeInterval: 1.5)
        try twins[1].start()
        #expect(Machine.waitForHTTP(port: ports[1], token: token), "twin 1 serves: \(twins[1].log(0).suffix(1500))")
        var accepted = 0
        for index in 0..<20 {
            if Machine.upload(base + Array("up-\(index)".utf8), port: ports[index % 2], token: token) != nil { accepted += 1 }
        }
        #expect(accepted == 20, "every upload was accepted")
        let slowStatus = slow.wait()
        #expect(slowStatus == 202, """
            the slow upload was accepted while the other machine started (\(slowStatus.map(String.init) ?? slow.failure)); \
            twin 0 said: \(twins[0].log(0).suffix(3000))
            """)

        let expected = 60 + 20 + 1
        let deadline = Date().addingTimeInterval(300)
        while Date() < deadline {
            if try DatabaseFaultTests.pictures(location) >= expected, twins.allSatisfy(\.importFinished) { break }
            usleep(250_000)
        }
        for twin in twins { twin.stop() }
        #expect(try DatabaseFaultTests.pictures(location) == expected, "every photo of both machines is a picture")
        #expect(try DatabaseFaultTests.count("SELECT count(*) FROM jobs WHERE outcome = 'failed'", location) == 0,
                "no good photo failed: \(twins.map { $0.log(0) + $0.log(1) }.joined().split(separator: "\n").filter { $0.contains("failed") }.prefix(5))")
        // Neither import was taken for abandoned by the other: each finished in one run.
        #expect(try DatabaseFaultTests.count("SELECT count(*) FROM imports", location) == 2)
        #expect(try DatabaseFaultTests.count("SELECT count(*) FROM imports WHERE outcome = 'finished'", location) == 2)
        // Two instances, one host name.
        let owners = try DatabaseFaultTests.count("SELECT count(DISTINCT worker) FROM jobs WHERE worker LIKE 'twin.%'", location)
        #expect(owners >= 2, "the jobs name both machines' instances")
    }

    /// A machine killed while it holds photos: another machine takes them over once their leases
    /// lapse (the default lease of 30 s), and says so in its log; a machine restarted at once
    /// gives its dead self's photos back without waiting for the leases.
    @Test func aKilledMachinesPhotosAreTakenOverWithinALeaseAndARestartGivesThemBackAtOnce() throws {
        let location = try SharedCluster.freshDatabase()
        let environment = ["DARKROOM_CATALOG_URL": location.description]
        let space = try Workspace(leaseSeconds: 30, concurrency: 1, scanInterval: 0.2)
        let machines = ["k1", "k2"].map { name in
            Machine(name: name, space: space, environment: environment, commands: [["run", "--no-progress"]])
        }
        defer { for machine in machines { machine.kill() } }
        let base = LibraryTree.sample("Apple_iPhone_6.jpg")
        for index in 0..<60 { try space.drop(bytes: base + Array("photo-\(index)".utf8), as: "photo-\(index).jpg") }
        for machine in machines { try machine.start() }

        /// Waits until `machine` holds a photo; returns that job's id and its holder, read together
        /// (a photo is processed in a fraction of a second: asked apart, its holder may be gone).
        func held(by machine: Machine) throws -> (id: Int64, owner: String)? {
            let deadline = Date().addingTimeInterval(60)
            while Date() < deadline {
                // (Until the first machine has migrated the catalog, there is no queue to ask.)
                if let job = try? Self.heldJob(by: machine.name, location) { return job }
                usleep(20_000)
            }
            return nil
        }
        func finishedOrRetaken(_ job: Int64, from owner: String, within seconds: Double) throws -> Double? {
            let started = Date()
            while Date().timeIntervalSince(started) < seconds {
                if try Self.jobLeftBy(job, owner: owner, location) { return Date().timeIntervalSince(started) }
                usleep(50_000)
            }
            return nil
        }

        // Killed and not restarted: the other machine takes its photo over when the lease lapses.
        let first = try #require(try held(by: machines[1]), "machine k2 held a photo").id
        machines[1].kill()
        let takenOver = try finishedOrRetaken(first, from: "k2.", within: 40)
        print("machine identity: a killed machine's photo was taken over after \(takenOver.map { String(format: "%.1f", $0) } ?? "-") s")
        #expect(takenOver.map { $0 <= 35 } == true, "taken over within 35 s")
        #expect(machines[0].log(0).contains("took over a photo whose holder stopped renewing its lease"), "the takeover is logged")
        // `status` tells the live holder from the dead one by their heartbeats.
        let status = try space.run(["status"], environment: environment)
        let holders = status.stdout.split(separator: "\n").filter { $0.hasPrefix("    k") }
        #expect(holders.contains { $0.contains("k2.") && $0.contains("dead") } && holders.contains { $0.contains("k1.") && $0.contains("live") },
                "\(status.stdout)")

        // Killed and restarted at once: its new self gives the photo back without waiting.
        for index in 60..<100 { try space.drop(bytes: base + Array("photo-\(index)".utf8), as: "photo-\(index).jpg") }
        try machines[1].start()
        let (second, owner) = try #require(try held(by: machines[1]), "machine k2 held a photo again")
        machines[1].kill()
        try machines[1].start()
        let givenBack = try finishedOrRetaken(second, from: owner, within: 40)
        print("machine identity: a restarted machine's photo came back after \(givenBack.map { String(format: "%.1f", $0) } ?? "-") s")
        #expect(givenBack.map { $0 < 15 } == true, "given back well before its lease lapsed")
        #expect(machines[1].log(0).contains("gave back the photos of this machine's processes that died"))
        for machine in machines { machine.stop() }
    }

    /// A job that `prefix`'s instances hold under a lease now, if any.
    static func heldJob(by prefix: String, _ location: PostgresLocation) throws -> (id: Int64, owner: String)? {
        let pool = try PostgresPool(location: location, maximumConnections: 1)
        defer { pool.close() }
        return try pool.withSession { session in
            let row = try session.value("SELECT id::text || ' ' || lease_owner FROM queue_jobs WHERE state = 'running' AND lease_owner LIKE \(prefix + ".%") LIMIT 1",
                                        as: String.self)
            let parts = row?.split(separator: " ", maxSplits: 1).map(String.init) ?? []
            guard parts.count == 2, let id = Int64(parts[0]) else { return nil }
            return (id, parts[1])
        }
    }

    /// Whether the job is done, or held by someone other than `owner` (a prefix or a whole name).
    static func jobLeftBy(_ job: Int64, owner: String, _ location: PostgresLocation) throws -> Bool {
        let pool = try PostgresPool(location: location, maximumConnections: 1)
        defer { pool.close() }
        return try pool.withSession { session in
            try session.value("""
                SELECT state = 'done' OR (state = 'running' AND NOT starts_with(lease_owner, \(owner))) FROM queue_jobs WHERE id = \(job)
                """, as: Bool.self) ?? false
        }
    }
}

/// An upload whose body trickles in over `seconds`, on a thread of its own.
final class SlowUpload: @unchecked Sendable {
    // @unchecked: `status` and `finished` are guarded by `lock`.
    let port: Int
    let token: String
    let photo: [UInt8]
    let seconds: Double
    private let lock = NSCondition()
    private var status: Int?
    private var finished = false
    /// What went wrong when no status came.
    private(set) var failure = "no answer"

    init(port: Int, token: String, photo: [UInt8], seconds: Double) {
        self.port = port
        self.token = token
        self.photo = photo
        self.seconds = seconds
    }

    func start() {
        Thread { [self] in
            let result = send()
            lock.lock()
            status = result
            finished = true
            lock.broadcast()
            lock.unlock()
        }.start()
    }

    /// The answer's status once it came (nil: none within a minute).
    func wait() -> Int? {
        lock.lock()
        defer { lock.unlock() }
        let deadline = Date().addingTimeInterval(seconds + 60)
        while !finished { if !lock.wait(until: deadline) { return nil } }
        return status
    }

    private func send() -> Int? {
        guard let socket = Machine.connectLoopback(port: port, timeout: 60) else { return fail("connect") }
        defer { close(socket) }
        let head = "POST /v1/uploads HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(token)\r\n"
            + "Content-Type: image/jpeg\r\nContent-Length: \(photo.count)\r\nConnection: close\r\n\r\n"
        let pieces = 12
        let piece = (photo.count + pieces - 1) / pieces
        var chunks = [Array(head.utf8)]
        for start in stride(from: 0, to: photo.count, by: piece) { chunks.append(Array(photo[start..<min(photo.count, start + piece)])) }
        for (index, chunk) in chunks.enumerated() {
            guard Machine.sendAll(chunk, on: socket) else { return fail("send of piece \(index)") }
            if index > 0 && index < chunks.count - 1 { usleep(UInt32(seconds / Double(pieces) * 1_000_000)) }
        }
        var answer: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = recv(socket, &buffer, buffer.count, 0)
            if n <= 0 { break }
            answer += buffer[0..<n]
        }
        let text = String(decoding: answer, as: UTF8.self)
        guard let status = text.split(separator: " ").dropFirst().first.flatMap({ Int($0) }) else {
            return fail("reading the answer (\(answer.count) bytes: \(text.prefix(200)))")
        }
        return status
    }

    private func fail(_ step: String) -> Int? {
        let reason = String(cString: strerror(errno))
        lock.withLock { failure = "\(step) failed: \(reason)" }
        return nil
    }
}

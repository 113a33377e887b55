import Foundation
import GatewayHarness
import PostgresHarness
import PostgresStore
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Three machines that share nothing but one PostgreSQL catalog and one bucket: each has its own
/// spool and library folders (none visible to the others). 600 photos arrive as uploads to two
/// servers, as direct uploads through presigned URLs, in the drop folder of one machine and by an
/// import on another; one of the serving machines is killed with SIGKILL and its local
/// directories deleted, and the bucket's gateway is stopped for 20 s mid-run. At the end every
/// photo accepted is a picture exactly once, every job is done, no staged or direct-upload object
/// is left, `library check` finds no orphan and nothing missing, the moments rebuild clean, and
/// every variant URL of the API answers the variant's bytes.
@Suite("Machines that share nothing but PostgreSQL and a bucket",
       .enabled(if: SharedCluster.available, Comment(rawValue: SharedCluster.skipReason)),
       .enabled(if: SharedGateway.available, Comment(rawValue: SharedGateway.skipReason)),
       .enabled(if: Machine.canNameHosts, "this machine cannot make UTS namespaces (unshare -u)"))
struct SharedNothingTests {
    /// Photos of each of the four channels: uploads, direct uploads, the drop folder, the import.
    static let perChannel = 150

    @Test func photosOfEveryChannelArePicturesOnceThroughAKilledWipedMachineAndABucketOutage() throws {
        // A gateway of its own: it is stopped mid-run, which other tests must not see.
        let gateway = try RadosGateway.start()
        defer { gateway.stop() }
        let bucket = try gateway.freshBucket(prefix: "nothing")
        let location = try SharedCluster.freshDatabase()
        let token = "shared-nothing-\(UUID().uuidString)"
        let environment = ["DARKROOM_CATALOG_URL": location.description, "DARKROOM_API_TOKEN": token,
                           "AWS_ACCESS_KEY_ID": gateway.accessKey, "AWS_SECRET_ACCESS_KEY": gateway.secretKey]
        let library = (url: "s3://\(bucket)/lib", endpoint: gateway.endpoint.absoluteString)
        let spaces = try (0..<3).map { _ in try Workspace(leaseSeconds: 30, concurrency: 1, scanInterval: 0.2, bucket: library) }
        let ports = [try TemporaryCluster.freePort(), try TemporaryCluster.freePort()]
        let base = LibraryTree.sample("Landscape_6.jpg")
        let importFolder = spaces[1].root + "/old-library"
        try FileManager.default.createDirectory(atPath: importFolder, withIntermediateDirectories: true)
        for index in 0..<Self.perChannel {
            _ = FileManager.default.createFile(atPath: importFolder + "/imp-\(index).jpg", contents: Data(base + Array("imp-\(index)".utf8)))
        }
        let machines = [
            Machine(name: "n1", space: spaces[0], environment: environment, commands: [["serve", "--port", "\(ports[0])"]]),
            Machine(name: "n2", space: spaces[1], environment: environment,
                    commands: [["serve", "--port", "\(ports[1])"], ["import", importFolder, "--progress", "none"]]),
            Machine(name: "n3", space: spaces[2], environment: environment, commands: [["run", "--no-progress"]]),
        ]
        for machine in machines { try machine.start() }
        defer { for machine in machines { machine.kill() } }
        for port in ports { #expect(Machine.waitForHTTP(port: port, token: token), "the server on port \(port) answers") }

        var accepted = 0
        var refused = 0
        var direct = 0
        var directRefusals = 0
        var killed = false
        var outage = false
        for index in 0..<Self.perChannel {
            // A direct upload, its bytes straight into the bucket, to whichever server answers:
            // each step (presign, PUT, complete) sent again until it is taken.
            let port = ports[killed ? 1 : (index + 1) % 2]
            let (id, refusals) = Machine.directUpload(base + Array("direct-\(index)".utf8), port: port, token: token)
            directRefusals += refusals
            if id != nil { direct += 1 }
            // An upload is 202 only once it is staged in the bucket and its job recorded; while
            // the bucket is down it is refused (503), and the client sends it again.
            for attempt in 0..<60 {
                let machine = (index + attempt) % 2
                if killed == false || machine == 1,
                   Machine.upload(base + Array("up-\(index)".utf8), port: ports[machine], token: token) != nil {
                    accepted += 1
                    break
                }
                refused += 1
                usleep(500_000)
            }
            try spaces[2].drop(bytes: base + Array("drop-\(index)".utf8), as: "drop-\(index).jpg")
            if index == Self.perChannel / 3 {
                // A serving machine dies with photos in hand, and its disk is wiped.
                machines[0].kill()
                try FileManager.default.removeItem(atPath: spaces[0].spool)
                killed = true
                try machines[0].start()
                #expect(Machine.waitForHTTP(port: ports[0], token: token), "the wiped machine serves again")
                killed = false
            }
            if index == Self.perChannel / 2 && !outage {
                // The bucket's gateway goes away for 20 s while photos keep arriving.
                outage = true
                try gateway.stopGateway()
                Thread {
                    Thread.sleep(forTimeInterval: 20)
                    try? gateway.startGateway()
                }.start()
            }
        }
        #expect(accepted == Self.perChannel, "every upload was accepted in the end (\(refused) refusals on the way)")
        #expect(direct == Self.perChannel, "every direct upload was completed in the end (\(directRefusals) refusals on the way)")
        #expect(refused + directRefusals > 0, "uploads met the bucket's outage and were refused, not hung")
        #expect(gateway.isGatewayRunning, "the gateway is back")
        let expected = accepted + direct + 2 * Self.perChannel
        let deadline = Date().addingTimeInterval(600)
        var states: [String: Int] = [:]
        while Date() < deadline {
            states = try SeveralMachinesTests.queueStates(location)
            if try DatabaseFaultTests.pictures(location) >= expected, states["queued", default: 0] == 0, states["running", default: 0] == 0,
               machines[1].importFinished { break }
            usleep(500_000)
        }
        print("shared nothing: \(expected) photos, \(refused) upload and \(directRefusals) direct-upload refusals during the outages, queue \(states)")
        #expect(try DatabaseFaultTests.pictures(location) == expected, "every photo is a picture")
        let failures = try DatabaseFaultTests.failures(location)
        #expect(failures.isEmpty, "no photo failed: \(failures.prefix(5))")
        #expect(try DatabaseFaultTests.count("SELECT count(*) FROM jobs WHERE outcome = 'duplicate'", location) == 0, "none twice")
        #expect(states["failed", default: 0] == 0 && states["queued", default: 0] == 0 && states["running", default: 0] == 0, "\(states)")

        // Nothing staged is left: what a removal cut short by the outage left goes with the
        // reconciliation (every half lease, for objects quiet for twice a lease at most).
        let drained = Date()
        var staged: [String] = []
        repeat {
            staged = try Self.keys(gateway, bucket, prefix: "lib/staging/") + Self.keys(gateway, bucket, prefix: "lib/direct/")
            if !staged.isEmpty { usleep(1_000_000) }
        } while !staged.isEmpty && Date().timeIntervalSince(drained) < 4 * 30
        print("shared nothing: staging area empty \(String(format: "%.1f", Date().timeIntervalSince(drained))) s after the queue drained")
        #expect(staged.isEmpty, "staged objects left: \(staged.prefix(5))")
        // Every picture's objects are in the bucket.
        // Folder by folder: each holds fewer than the 1,000 keys of one listing page.
        let stored = Set(try ["originals/", "variants/thumb/", "variants/preview/", "variants/mobile/", "variants/feed/"]
            .flatMap { try Self.keys(gateway, bucket, prefix: "lib/" + $0) })
        let pool = try PostgresPool(location: location, maximumConnections: 1)
        defer { pool.close() }
        let paths = try pool.withSession { session in
            try session.values("SELECT original_path FROM pictures UNION ALL SELECT path FROM variants", as: String.self)
        }
        let unlisted = paths.filter { !stored.contains("lib/" + $0) }
        let heads = try unlisted.prefix(3).map { try gateway.signedRequest("HEAD", "/\(bucket)/lib/\($0)").status }
        #expect(paths.count > expected && unlisted.isEmpty,
                "missing from the bucket's listing (\(stored.count) keys listed): \(unlisted.count), \(unlisted.prefix(5)); HEAD of them: \(heads)")
        // No library file on any machine's disk.
        #expect(spaces.allSatisfy { $0.files(under: $0.library).isEmpty })

        // Every variant URL of the API answers the variant's bytes.
        let pictures = try pool.withSession { session in try session.values("SELECT id FROM pictures ORDER BY id LIMIT 10", as: Int64.self) }
        for id in pictures {
            let head = "GET /v1/pictures/\(id) HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(token)\r\nConnection: close\r\n\r\n"
            let answer = try #require(Machine.exchange(port: ports[1], head: head, timeout: 30))
            let object = try #require(try JSONSerialization.jsonObject(with: Data(answer.body.utf8)) as? [String: Any])
            let variants = try #require(object["variants"] as? [String: String], "\(answer.body.prefix(300))")
            for (_, url) in variants {
                let media = "GET \(url) HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(token)\r\nConnection: close\r\n\r\n"
                let served = try #require(Machine.exchangeBytes(port: ports[1], head: media, timeout: 30))
                let key = "lib/" + url.dropFirst("/v1/media/".count)
                let original = try gateway.signedRequest("GET", "/\(bucket)/\(key)")
                #expect(served.status == 200 && served.body == [UInt8](original.body), "\(url)")
            }
        }
        let check = try spaces[1].run(["library", "check"], environment: environment)
        print("library check: \(check.stdout.split(separator: "\n").suffix(2).joined(separator: " / "))")
        #expect(check.status == 0, "library check finds no orphan and nothing missing: \(check.stdout.suffix(600)) \(check.stderr.suffix(600))")
        let rebuild = try spaces[1].run(["moments", "rebuild", "--check"], environment: environment)
        #expect(rebuild.status == 0, "moments rebuild --check: \(rebuild.stdout) \(rebuild.stderr)")
        for machine in machines { machine.stop() }
    }

    /// Every key under `prefix` in the bucket, page after page (each page starts after the last
    /// key of the one before). The harness signs the query as given: a `start-after` key holding
    /// a `/` is refused by the gateway, so keep each prefix under 1,000 keys.
    static func keys(_ gateway: RadosGateway, _ bucket: String, prefix: String) throws -> [String] {
        var keys: [String] = []
        let encode = { (text: String) in text.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? text }
        while true {
            let after = keys.last.map { "&start-after=\(encode($0))" } ?? ""
            let answer = try gateway.signedRequest("GET", "/\(bucket)?list-type=2&prefix=\(encode(prefix))\(after)")
            let text = String(decoding: answer.body, as: UTF8.self)
            let page = text.components(separatedBy: "<Key>").dropFirst().compactMap { $0.components(separatedBy: "</Key>").first }
            keys += page
            // A full page (1,000 keys, the most one answer holds) may have more after it.
            guard page.count >= 1000 || text.lowercased().contains("<istruncated>true</istruncated>"), !page.isEmpty else { return keys }
        }
    }
}

import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif
import ChildProcesses
@testable import GatewayHarness

/// The S3 server the object-storage tests run against: Ceph's RADOS Gateway on a one-node
/// cluster in a temporary directory. These check the harness itself, with curl-signed requests
/// (not Darkroom's S3 client): it starts, stores and returns bytes, checks signatures, survives
/// a gateway outage with its objects, and leaves nothing behind.
@Suite("RADOS Gateway harness", .enabled(if: SharedGateway.available, Comment(rawValue: SharedGateway.skipReason)))
struct GatewayHarnessTests {
    @Test("the shared gateway starts, and a bucket is created in it")
    func startsAndCreatesABucket() throws {
        let gateway = try SharedGateway.gateway.get()
        let phases = gateway.startupPhases.map { "\($0.name) \(String(format: "%.2f", $0.seconds)) s" }.joined(separator: ", ")
        print("GatewayHarness: the gateway started in \(String(format: "%.1f", gateway.startupSeconds)) s (\(phases)); "
              + "\(gateway.residentBytes() / 1_048_576) MB resident; endpoint \(gateway.endpoint.absoluteString)")
        #expect(gateway.endpoint.absoluteString == "http://127.0.0.1:\(gateway.port)")
        #expect(gateway.directory.path.utf8.count < 40)

        let bucket = try SharedGateway.freshBucket()
        let listing = try gateway.signedRequest("GET", "/")
        #expect(listing.status == 200)
        #expect(listing.text.contains("<Name>\(bucket)</Name>"))
        #expect(try gateway.signedRequest("HEAD", "/\(bucket)").status == 200)
        #expect(try gateway.signedRequest("HEAD", "/no-such-bucket-\(UUID().uuidString.prefix(8).lowercased())").status == 404)
    }

    @Test("an object put is got back byte for byte, and listed")
    func putThenGet() throws {
        let gateway = try SharedGateway.gateway.get()
        let bucket = try SharedGateway.freshBucket()
        // Past 1 MiB, where curl would otherwise wait for a 100 Continue.
        let bytes = Data((0..<1_500_000).map { UInt8(truncatingIfNeeded: $0 &* 2_654_435_761 >> 7) })
        let key = "originals/2024/photo-1.jpg"
        let put = try gateway.signedRequest("PUT", "/\(bucket)/\(key)", body: bytes, headers: ["Content-Type": "image/jpeg"])
        #expect(put.status == 200, "\(put.text)")
        #expect(put.headers["etag"]?.isEmpty == false)

        let got = try gateway.signedRequest("GET", "/\(bucket)/\(key)")
        #expect(got.status == 200)
        #expect(got.body == bytes)
        #expect(got.headers["content-type"] == "image/jpeg")
        let head = try gateway.signedRequest("HEAD", "/\(bucket)/\(key)")
        #expect(head.headers["content-length"] == "\(bytes.count)")
        #expect(head.headers["etag"] == put.headers["etag"])

        // A signed query string (ListObjectsV2), parameters in order.
        let listing = try gateway.signedRequest("GET", "/\(bucket)?list-type=2&prefix=originals%2F")
        #expect(listing.status == 200, "\(listing.text)")
        #expect(listing.text.contains("<Key>\(key)</Key>"))

        #expect(try gateway.signedRequest("DELETE", "/\(bucket)/\(key)").status == 204)
        #expect(try gateway.signedRequest("GET", "/\(bucket)/\(key)").status == 404)
    }

    @Test("a request signed with a wrong secret or an unknown key is refused")
    func wrongSignatureIsRefused() throws {
        let gateway = try SharedGateway.gateway.get()
        let bucket = try SharedGateway.freshBucket()
        #expect(try gateway.signedRequest("PUT", "/\(bucket)/kept", body: Data("kept".utf8)).status == 200)

        let wrongSecret = try gateway.signedRequest("GET", "/\(bucket)/kept", secretKey: String(gateway.secretKey.reversed()))
        #expect(wrongSecret.status == 403)
        #expect(wrongSecret.text.contains("<Code>SignatureDoesNotMatch</Code>"), "\(wrongSecret.text)")

        let refusedPut = try gateway.signedRequest("PUT", "/\(bucket)/forged", body: Data("forged".utf8), secretKey: "not-the-secret")
        #expect(refusedPut.status == 403)
        #expect(try gateway.signedRequest("GET", "/\(bucket)/forged").status == 404)

        let unknownKey = try gateway.signedRequest("GET", "/\(bucket)/kept", accessKey: "DRNOSUCHKEY0000000000")
        #expect(unknownKey.status == 403)
        #expect(unknownKey.text.contains("<Code>InvalidAccessKeyId</Code>"), "\(unknownKey.text)")
    }

    @Test("the gateway stopped refuses connections; started again, it has the object still; stop() leaves nothing")
    func outageThenTeardown() throws {
        let gateway = try RadosGateway.start()
        defer { gateway.stop() }
        let directory = gateway.directory.path
        print("GatewayHarness: a second gateway started in \(String(format: "%.1f", gateway.startupSeconds)) s")
        let bucket = try gateway.freshBucket(prefix: "outage")
        let bytes = Data("the photo's bytes".utf8)
        #expect(try gateway.signedRequest("PUT", "/\(bucket)/photo", body: bytes).status == 200)

        var begin = Date()
        try gateway.stopGateway()
        let stopping = Date().timeIntervalSince(begin)
        #expect(!gateway.isGatewayRunning)
        #expect(ChildSpawning.refusesConnections(port: gateway.port))
        #expect(throws: RadosGateway.Unavailable.self) { try gateway.signedRequest("GET", "/\(bucket)/photo", timeout: 5) }
        #expect(gateway.daemonProcesses()["ceph-osd"] != nil)

        begin = Date()
        try gateway.startGateway()
        let starting = Date().timeIntervalSince(begin)
        let got = try gateway.signedRequest("GET", "/\(bucket)/photo")
        #expect(got.status == 200)
        #expect(got.body == bytes)
        let cpu = gateway.serverCPUSeconds()
        #expect(cpu > 0)

        // As a crash: SIGKILL, and back again.
        try gateway.stopGateway(kill: true)
        try gateway.startGateway()
        #expect(try gateway.signedRequest("GET", "/\(bucket)/photo").body == bytes)
        print("GatewayHarness: stopGateway took \(String(format: "%.2f", stopping)) s, startGateway \(String(format: "%.2f", starting)) s; "
              + "the daemons used \(String(format: "%.1f", gateway.serverCPUSeconds())) CPU s, \(gateway.residentBytes() / 1_048_576) MB resident")

        let daemons = gateway.daemonProcesses()
        #expect(Set(daemons.keys) == ["ceph-mon", "ceph-osd", "radosgw"])
        #expect(!processes(naming: directory).isEmpty)
        begin = Date()
        gateway.stop()
        print("GatewayHarness: stop() took \(String(format: "%.2f", Date().timeIntervalSince(begin))) s")
        #expect(processes(naming: directory).isEmpty)
        #expect(!FileManager.default.fileExists(atPath: directory))
        #expect(ChildSpawning.refusesConnections(port: gateway.port))
        #expect(throws: RadosGateway.Unavailable.self) { try gateway.startGateway() }
    }

    @Test("when its owner is gone, the watchdog kills the daemons and removes the directory")
    func watchdogCleansUp() throws {
        let gateway = try RadosGateway.start()
        defer { gateway.stop() }
        let directory = gateway.directory.path
        #expect(processes(naming: directory).count >= 3)
        // The daemons hold no descriptor of this process's but their own: none keeps the
        // watchdog's socket open after this process is gone.
        #expect(ChildSpawning.closesInheritedDescriptors)
        gateway.simulateOwnerDeath()
        let deadline = Date().addingTimeInterval(30)
        while !processes(naming: directory).isEmpty || FileManager.default.fileExists(atPath: directory) {
            guard Date() < deadline else { break }
            usleep(50_000)
        }
        #expect(processes(naming: directory).isEmpty)
        #expect(!FileManager.default.fileExists(atPath: directory))
    }

    @Test("a gateway that cannot start says why, with its log, and leaves nothing")
    func failedStartSaysWhy() throws {
        // Something else listens on the gateway's port: radosgw exits at once (status 98).
        let (listener, port) = try #require(LoopbackPort.socket(listening: true))
        defer { close(listener) }

        var directory = ""
        let begin = Date()
        let error = #expect(throws: RadosGateway.Unavailable.self) {
            let gateway = try RadosGateway.start(storeBytes: 1 << 30, gatewayPort: port, directoryMade: { directory = $0 })
            gateway.stop()
        }
        print("GatewayHarness: a start on a taken port failed in \(String(format: "%.1f", Date().timeIntervalSince(begin))) s: "
              + "\(error?.description.prefix(300) ?? "")")
        // Status 98 is EADDRINUSE; the log lines quoted after it vary with what the gateway
        // printed last, so only the exit is held to. radosgw sometimes crashes on its way out
        // instead (a clean-clone run saw "radosgw was killed by signal 11"): the harness says
        // that just as plainly.
        let description = error?.description ?? ""
        #expect(description.contains("radosgw exited with status 98") || description.contains("radosgw was killed by signal"),
                "\(description.prefix(200))")
        #expect(!directory.isEmpty)
        #expect(processes(naming: directory).isEmpty)
        #expect(!FileManager.default.fileExists(atPath: directory))
    }
}

/// Live processes whose command line names `directory` (zombies have an empty one).
private func processes(naming directory: String) -> [String] {
    var found: [String] = []
    for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] where Int32(entry) != nil {
        guard let raw = FileManager.default.contents(atPath: "/proc/\(entry)/cmdline"), !raw.isEmpty else { continue }
        let line = String(decoding: raw.map { $0 == 0 ? 0x20 : $0 }, as: UTF8.self)
        if line.contains(directory + "/") { found.append("\(entry): \(line.prefix(120))") }
    }
    return found
}

import Foundation
import GatewayHarness
import PostgresHarness
import PostgresStore
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Direct uploads against a real `serve` on a PostgreSQL catalog with its library in the RADOS
/// Gateway: the photo's bytes go from the client to the bucket through a presigned PUT, never
/// through the server, and `complete` makes them a job.
@Suite("Direct uploads through presigned URLs",
       .enabled(if: SharedCluster.available, Comment(rawValue: SharedCluster.skipReason)),
       .enabled(if: SharedGateway.available, Comment(rawValue: SharedGateway.skipReason)))
struct DirectUploadTests {
    @Test func aPresignedPutCompletedBecomesAPictureAndLeavesNothingBehind() throws {
        let server = try Server(name: "d1")
        defer { server.machine.kill() }
        let (gateway, bucket, location, port, token) = (server.gateway, server.bucket, server.location, server.port, server.token)
        let photo = LibraryTree.sample("Landscape_6.jpg") + Array("direct-1".utf8)

        // Granted: the answer says where to put exactly these many bytes, and the status says so.
        let grant = try #require(Machine.presign(size: photo.count, port: port, token: token,
                                                 fields: ["author_id": "alice", "title": "From the phone"]))
        #expect(grant.status == 201, "\(grant.body)")
        let id = try #require(grant.object["id"] as? String)
        let url = try #require(grant.object["upload_url"] as? String)
        let headers = try #require(grant.object["headers"] as? [String: String])
        #expect(headers["Content-Length"] == "\(photo.count)")
        #expect(Machine.status(id, port: port, token: token)?["status"] as? String == "presigned")

        // Completing before the bytes are there is refused, and changes nothing.
        #expect(Machine.complete(id, port: port, token: token)?.status == 409)
        // The bucket refuses other bytes than those granted: a size the URL was not signed for.
        #expect(Machine.put(photo + [0], to: url, contentType: "image/jpeg")?.status == 403, "a PUT of another size is refused")
        #expect(Machine.put(photo, to: url, contentType: "image/jpeg")?.status == 200, "the granted PUT is taken")

        let completed = try #require(Machine.complete(id, port: port, token: token))
        #expect(completed.status == 202, "\(completed.body)")
        let done = try #require(Machine.status(id, port: port, token: token, wait: 60))
        #expect(done["status"] as? String == "done", "\(done)")
        #expect(done["picture_id"] != nil)
        // Completing again answers the upload's state instead of queueing it twice.
        let again = try #require(Machine.complete(id, port: port, token: token))
        #expect(again.status == 200 && again.body.contains("\"done\""), "\(again.body)")

        // The fields given at the presign are the picture's.
        let pictureId = try #require(done["picture_id"] as? Int)
        let head = "GET /v1/pictures/\(pictureId) HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(token)\r\nConnection: close\r\n\r\n"
        let picture = try #require(Machine.exchange(port: port, head: head))
        #expect(picture.status == 200 && picture.body.contains("From the phone"), "\(picture.body.prefix(300))")

        // Nothing is left of the upload: no staged photo, no direct object, no grant.
        #expect(try SharedNothingTests.keys(gateway, bucket, prefix: "lib/staging/").isEmpty)
        #expect(try SharedNothingTests.keys(gateway, bucket, prefix: "lib/direct/").isEmpty)
        #expect(try DatabaseFaultTests.pictures(location) == 1)
    }

    @Test func bytesThatAreNotAPhotoAreRefusedAtCompletionAndRemoved() throws {
        let server = try Server(name: "d2")
        defer { server.machine.kill() }
        let (gateway, bucket, port, token) = (server.gateway, server.bucket, server.port, server.token)

        let text = Array("this is a shopping list, not a photo\n".utf8)
        let grant = try #require(Machine.presign(size: text.count, port: port, token: token))
        let id = try #require(grant.object["id"] as? String)
        let url = try #require(grant.object["upload_url"] as? String)
        #expect(Machine.put(text, to: url, contentType: "image/jpeg")?.status == 200, "the bucket takes any bytes of the granted size")
        let completed = try #require(Machine.complete(id, port: port, token: token))
        #expect(completed.status == 415, "\(completed.body)")
        #expect(try SharedNothingTests.keys(gateway, bucket, prefix: "lib/direct/").isEmpty, "the refused bytes are removed")
        #expect(Machine.complete(id, port: port, token: token)?.status == 404, "a refused upload cannot be completed again")

        // Field and size problems are refused before anything is granted.
        #expect(Machine.presign(size: 0, port: port, token: token)?.status == 400)
        #expect(Machine.presign(size: 10, port: port, token: token, fields: ["colour": "red"])?.status == 400)
        #expect(Machine.presign(size: 1 << 40, port: port, token: token)?.status == 413)
        #expect(try SharedNothingTests.keys(gateway, bucket, prefix: "lib/direct/").isEmpty)
    }
}

extension DirectUploadTests {
    /// `serve` on a fresh PostgreSQL database and a fresh bucket of the tests' gateway, started
    /// and answering.
    struct Server {
        let gateway: RadosGateway
        let bucket: String
        let location: PostgresLocation
        let token: String
        let port: Int
        let machine: Machine

        init(name: String) throws {
            gateway = try SharedGateway.gateway.get()
            bucket = try gateway.freshBucket(prefix: "direct")
            location = try SharedCluster.freshDatabase()
            token = "direct-\(UUID().uuidString)"
            let environment = ["DARKROOM_CATALOG_URL": location.description, "DARKROOM_API_TOKEN": token,
                               "AWS_ACCESS_KEY_ID": gateway.accessKey, "AWS_SECRET_ACCESS_KEY": gateway.secretKey]
            let space = try Workspace(leaseSeconds: 30, concurrency: 1, scanInterval: 0.2,
                                      bucket: (url: "s3://\(bucket)/lib", endpoint: gateway.endpoint.absoluteString))
            port = try TemporaryCluster.freePort()
            machine = Machine(name: name, space: space, environment: environment, commands: [["serve", "--port", "\(port)"]])
            try machine.start()
            #expect(Machine.waitForHTTP(port: port, token: token), "the server answers")
        }
    }
}

extension Machine {
    /// `POST /v1/uploads/presign` for a photo of `size` bytes: the status, the answer and its JSON.
    static func presign(size: Int, port: Int, token: String, fields: [String: String] = [:]) -> (status: Int, body: String, object: [String: Any])? {
        let request: [String: Any] = ["size": size, "content_type": "image/jpeg", "fields": fields]
        guard let body = try? JSONSerialization.data(withJSONObject: request) else { return nil }
        let head = "POST /v1/uploads/presign HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(token)\r\n"
            + "Content-Type: application/json\r\nContent-Length: \(body.count)\r\nConnection: close\r\n\r\n"
        guard let answer = exchange(port: port, head: head, body: [UInt8](body)) else { return nil }
        let object = (try? JSONSerialization.jsonObject(with: Data(answer.body.utf8)) as? [String: Any]) ?? [:]
        return (answer.status, answer.body, object)
    }

    /// `POST /v1/uploads/{id}/complete`.
    static func complete(_ id: String, port: Int, token: String) -> (status: Int, body: String)? {
        let head = "POST /v1/uploads/\(id)/complete HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(token)\r\n"
            + "Content-Length: 0\r\nConnection: close\r\n\r\n"
        return exchange(port: port, head: head)
    }

    /// `GET /v1/uploads/{id}` (with `?wait=`), as JSON.
    static func status(_ id: String, port: Int, token: String, wait: Int = 0) -> [String: Any]? {
        let head = "GET /v1/uploads/\(id)?wait=\(wait) HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(token)\r\nConnection: close\r\n\r\n"
        guard let answer = exchange(port: port, head: head, timeout: wait + 30) else { return nil }
        return try? JSONSerialization.jsonObject(with: Data(answer.body.utf8)) as? [String: Any]
    }

    /// A PUT of `bytes` to a presigned URL on loopback, as a client outside the servers sends it.
    /// nil when the bucket's server does not answer.
    static func put(_ bytes: [UInt8], to url: String, contentType: String) -> (status: Int, body: String)? {
        guard let parsed = URLComponents(string: url), let port = parsed.port else { return nil }
        let target = parsed.percentEncodedPath + (parsed.percentEncodedQuery.map { "?" + $0 } ?? "")
        let head = "PUT \(target) HTTP/1.1\r\nHost: \(parsed.host ?? "127.0.0.1"):\(port)\r\nContent-Type: \(contentType)\r\n"
            + "Content-Length: \(bytes.count)\r\nConnection: close\r\n\r\n"
        return exchange(port: port, head: head, body: bytes, timeout: 30)
    }
}

extension Machine {
    /// A direct upload as a patient client makes it: presign, PUT, complete, each step sent again
    /// (every half second, for up to a minute each) while it is refused or unanswered. The id
    /// (nil when a step never succeeded) and how many tries were refused on the way.
    static func directUpload(_ photo: [UInt8], port: Int, token: String) -> (id: String?, refusals: Int) {
        var refusals = 0
        func retried<T>(_ step: () -> T?) -> T? {
            for _ in 0..<120 {
                if let done = step() { return done }
                refusals += 1
                usleep(500_000)
            }
            return nil
        }
        guard let grant = retried({ () -> (id: String, url: String)? in
            guard let answer = presign(size: photo.count, port: port, token: token), answer.status == 201,
                  let id = answer.object["id"] as? String, let url = answer.object["upload_url"] as? String else { return nil }
            return (id, url)
        }) else { return (nil, refusals) }
        guard retried({ put(photo, to: grant.url, contentType: "image/jpeg")?.status == 200 ? true : nil }) != nil,
              retried({ [202, 200].contains(complete(grant.id, port: port, token: token)?.status ?? 0) ? true : nil }) != nil
        else { return (nil, refusals) }
        return (grant.id, refusals)
    }
}

import AsyncHTTPClient
import Foundation
import Testing
@testable import HTTPService
import Settings

@Suite("Load")
struct LoadTests {
    static let uploads = 200

    @Test func twoHundredConcurrentUploadsAreAllAcceptedAndAllProcessed() async throws {
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool = .init(idleTimeout: .seconds(30), concurrentHTTP1ConnectionsPerHostSoftLimit: Self.uploads)
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        do {
            try await uploadAll(through: client)
        } catch {
            try await client.shutdown()
            throw error
        }
        try await client.shutdown()
    }

    private func uploadAll(through client: HTTPClient) async throws {
        try await TestService.with { service in
            let base = try Samples.hopper()
            let ids = try await withThrowingTaskGroup(of: (Int, String?).self) { group in
                for index in 0..<Self.uploads {
                    group.addTask {
                        let photo = Samples.distinct(base, "load \(index)")
                        let answer = try await service.request(.POST, "/v1/uploads?author_id=load", body: photo,
                                                               headers: [("Content-Type", "image/jpeg")], client: client)
                        return (answer.status, (try? answer.object())?["id"] as? String)
                    }
                }
                var ids: [String] = []
                for try await (status, id) in group {
                    #expect(status == 202)
                    if let id { ids.append(id) }
                }
                return ids
            }
            #expect(ids.count == Self.uploads)
            #expect(Set(ids).count == Self.uploads)

            var pictures = Set<Int>()
            for id in ids {
                let state = try await service.settled(id, timeout: 120)
                #expect(state["status"] as? String == "done", "\(id): \(state)")
                if let picture = state["picture_id"] as? Int { pictures.insert(picture) }
            }
            #expect(pictures.count == Self.uploads)
            #expect(try service.catalog().counts(now: Date()).pictures == Self.uploads)
            #expect(service.files(under: service.configuration.spoolRoot).isEmpty)
        }
    }
}

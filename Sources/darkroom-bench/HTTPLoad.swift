import AsyncHTTPClient
import BenchInputs
import BenchKit
import Foundation
import SeededRandom

/// The benchmark's clients: uploads to a running `darkroom serve`, back to back, at a paced
/// rate, or one at a time.
struct HTTPLoad: Sendable {
    let port: Int
    let token: String
    let photos: [[UInt8]]
    let client: HTTPClient

    /// One POST as the client saw it.
    struct Post: Sendable {
        let index: Int
        let status: Int
        let uploadId: String?
        /// Wall-clock time it was due to be sent (comparable with the catalog's job times).
        let sentAt: Double
        /// From when it was due to its whole answer: for a paced upload, a wait for a free
        /// client counts too (no coordinated omission).
        let seconds: Double

        var milliseconds: Double { seconds * 1000 }
        var answeredAt: Double { sentAt + seconds }
    }

    /// `count` uploads by `clients` clients posting back to back, each taking the next photo.
    func burst(count: Int, firstIndex: Int, clients: Int) async throws -> [Post] {
        let counter = Schedule((0..<count).map { (index: firstIndex + $0, offset: 0.0) })
        return try await run(counter, clients: clients, origin: nil)
    }

    /// Uploads arriving at random (a Poisson process) at `rate` per second for `seconds`,
    /// taken by `clients` clients: an upload due while every client is busy waits for one,
    /// and its latency counts that wait.
    func paced(rate: Double, seconds: Double, firstIndex: Int, clients: Int) async throws -> [Post] {
        var random = SplitMix64(seed: UInt64(rate * 1000))
        var arrivals: [(index: Int, offset: Double)] = []
        var offset = random.exponential(mean: 1 / rate)
        while offset < seconds {
            arrivals.append((firstIndex + arrivals.count, offset))
            offset += random.exponential(mean: 1 / rate)
        }
        return try await run(Schedule(arrivals), clients: clients, origin: (Machine.now(), Date().timeIntervalSince1970))
    }

    /// `count` uploads by one client, `pause` seconds apart.
    func oneAtATime(count: Int, firstIndex: Int, pause: Double) async throws -> [Post] {
        var posts: [Post] = []
        for number in 0..<count {
            posts.append(try await post(index: firstIndex + number, due: nil))
            try await Task.sleep(for: .seconds(pause))
        }
        return posts
    }

    /// Runs the schedule's uploads on `clients` clients. Without an origin each is sent when a
    /// client takes it; with one, at its offset from the origin (monotonic and wall clock).
    private func run(_ schedule: Schedule, clients: Int, origin: (monotonic: Double, wall: Double)?) async throws -> [Post] {
        try await withThrowingTaskGroup(of: [Post].self) { group in
            for _ in 0..<clients {
                group.addTask {
                    var posts: [Post] = []
                    while let next = await schedule.next() {
                        let due = origin.map { (monotonic: $0.monotonic + next.offset, wall: $0.wall + next.offset) }
                        if let due {
                            let wait = due.monotonic - Machine.now()
                            if wait > 0 { try await Task.sleep(for: .seconds(wait)) }
                        }
                        posts.append(try await post(index: next.index, due: due))
                    }
                    return posts
                }
            }
            var all: [Post] = []
            for try await posts in group { all += posts }
            return all.sorted { $0.index < $1.index }
        }
    }

    /// One upload of photo `index` (one of the generated photos made distinct), timed from
    /// `due` (or from now) to the whole answer.
    func post(index: Int, due: (monotonic: Double, wall: Double)?) async throws -> Post {
        var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)/v1/uploads?author_id=bench")
        request.method = .POST
        request.headers.add(name: "Authorization", value: "Bearer \(token)")
        request.headers.add(name: "Content-Type", value: "image/jpeg")
        request.body = .bytes(PhotoSet.distinct(photos[index % photos.count], index: index))
        let start = due ?? (Machine.now(), Date().timeIntervalSince1970)
        let response = try await client.execute(request, timeout: .seconds(120))
        let body = try await response.body.collect(upTo: 1 << 20)
        let seconds = Machine.now() - start.monotonic
        let object = try? JSONSerialization.jsonObject(with: Data(body.readableBytesView)) as? [String: Any]
        return Post(index: index, status: Int(response.status.code), uploadId: object?["id"] as? String,
                    sentAt: start.wall, seconds: seconds)
    }

    /// Hands out the uploads to send, each once, in order.
    actor Schedule {
        private var items: [(index: Int, offset: Double)]
        private var position = 0

        init(_ items: [(index: Int, offset: Double)]) { self.items = items }

        func next() -> (index: Int, offset: Double)? {
            guard position < items.count else { return nil }
            defer { position += 1 }
            return items[position]
        }
    }
}

import Foundation
import Testing
@testable import HTTPService

/// `server.worker_niceness`: in `darkroom serve`, the spool workers' threads run at a lower CPU
/// priority than the threads that accept uploads, read from the kernel's own record of each thread.
@Suite("Worker priority")
struct WorkerPriorityTests {
    @Test func theWorkersThreadsAloneRunAtTheConfiguredNiceness() async throws {
        try await TestService.with(configure: { $0.server.workerNiceness = 7 }) { service in
            let photo = Samples.distinct(try Samples.hopper(), "priority")
            let answer = try await service.upload(photo)
            #expect(answer.status == 202)
            let state = try await service.settled(try #require(try answer.object()["id"] as? String))
            #expect(state["status"] as? String == "done")

            let threads = Self.threads()
            let workers = threads.filter { $0.name.hasPrefix("worker-") }
            #expect(workers.count == service.configuration.effectiveConcurrency, "threads: \(threads)")
            #expect(workers.allSatisfy { $0.nice == 7 }, "workers: \(workers)")
            // The event loops that accept and answer requests, and the pools that write uploads
            // and read the catalog for them, keep the process's priority.
            let process = threads.first { $0.id == getpid() }?.nice
            let serving = threads.filter { $0.name.hasPrefix("NIO-") || $0.name.contains("TP-#") }
            #expect(serving.count >= service.configuration.server.uploadThreads + 1, "threads: \(threads)")
            #expect(serving.allSatisfy { $0.nice == process }, "serving threads: \(serving), process: \(String(describing: process))")
        }
    }

    /// This process's threads: name and nice value, from `/proc/self/task`.
    static func threads() -> [(id: Int32, name: String, nice: Int)] {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        return tasks.compactMap { task -> (id: Int32, name: String, nice: Int)? in
            guard let comm = try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8),
                  let stat = try? String(contentsOfFile: "/proc/self/task/\(task)/stat", encoding: .utf8),
                  let close = stat.lastIndex(of: ")") else { return nil }
            // After "pid (comm) ", the fields run from the 3rd (state); nice is the 19th.
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            guard fields.count > 16, let nice = Int(fields[16]) else { return nil }
            return (Int32(task) ?? 0, comm.trimmingCharacters(in: .whitespacesAndNewlines), nice)
        }
    }
}

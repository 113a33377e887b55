import Foundation
import Logging
import ServiceLifecycle
import Ingest

/// The spool workers as a service of `darkroom serve`: `Worker.run` blocks, so it runs on a
/// thread of its own; a graceful shutdown (or cancellation) stops it, and the service ends once
/// the photos in hand are finished.
public struct WorkerService: Service {
    let worker: Worker
    let logger: Logger

    public init(worker: Worker, logger: Logger) {
        self.worker = worker
        self.logger = logger
    }

    public func run() async {
        let worker = worker
        await withTaskCancellationOrGracefulShutdownHandler {
            await withCheckedContinuation { (finished: CheckedContinuation<Void, Never>) in
                Thread.named("spool-scanner") {
                    _ = worker.run(RunOptions(once: false, progress: false, niceness: worker.configuration.server.workerNiceness))
                    finished.resume()
                }.start()
            }
        } onCancelOrGracefulShutdown: {
            worker.stop()
        }
        logger.info("spool workers stopped")
    }
}

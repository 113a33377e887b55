import Foundation

/// One gateway for a whole test process, started on first use and stopped when the process
/// exits (a watchdog stops it if the process is killed instead); each caller takes a fresh
/// bucket of its own in it. Tests that stop the gateway (outages) start a `RadosGateway` of
/// their own instead: this one is shared by tests that run at the same time.
public enum SharedGateway {
    /// Whether Ceph's programs are installed (tests skip with `skipReason` when not).
    public static let available = RadosGateway.missingPrograms().isEmpty
    /// What a skipped test says.
    public static let skipReason = "Ceph's RADOS Gateway is not installed (ceph-mon, ceph-osd, radosgw, curl in /usr/bin): run make deps"

    /// The gateway, or why it could not be started.
    public static let gateway: Result<RadosGateway, any Error> = {
        let result = Result { try RadosGateway.start() }
        atexit {
            if case .success(let gateway) = SharedGateway.gateway { gateway.stop() }
        }
        return result
    }()

    /// A new, empty bucket in the shared gateway: its name.
    public static func freshBucket(prefix: String = "test") throws -> String {
        try gateway.get().freshBucket(prefix: prefix)
    }
}

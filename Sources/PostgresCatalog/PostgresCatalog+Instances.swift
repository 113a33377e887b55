import Catalog
import Foundation
import PostgresNIO
import PostgresStore

/// The processes of a shared queue, each known by its instance name (`host.pid.instance`, random
/// at its start), with a heartbeat that its lease renewer writes: whether a holder of photos is
/// alive is read here, never from a process table of another machine.
extension PostgresCatalog {
    static let instanceHeartbeats = PostgresMigrations.Migration("catalog-instances", [
        """
        CREATE TABLE darkroom_instances (
            name text PRIMARY KEY,
            host text NOT NULL,
            pid integer NOT NULL,
            machine text NOT NULL,
            started_at timestamptz NOT NULL DEFAULT now(),
            heartbeat_at timestamptz NOT NULL DEFAULT now(),
            stopped_at timestamptz
        )
        """,
        "CREATE INDEX darkroom_instances_by_heartbeat ON darkroom_instances (heartbeat_at)",
    ])

    /// The database's availability as this process sees it; probing starts on the first ask.
    public var availability: any CatalogAvailability {
        monitor.start()
        return monitor
    }

    /// Also refuses new connections at once while the outage lasts (as this process's probe
    /// sees it): a worker's retry during the stop fails at once instead of waiting out a
    /// connection's deadline, and the photo it held is given back as a stop gives it back.
    public func interruptWaits() {
        let monitor = monitor
        let stillOut: @Sendable () -> Bool = { monitor.currentOutage != nil }
        pool.dropAll(refusingNewWhile: stillOut)
        leasePool.dropAll(refusingNewWhile: stillOut)
    }

    public func heartbeat(_ instance: InstanceRecord) throws(CatalogError) {
        try leased { session in
            try session.execute("""
                INSERT INTO darkroom_instances (name, host, pid, machine) VALUES (\(instance.name), \(instance.host), \(instance.pid), \(instance.machine))
                ON CONFLICT (name) DO UPDATE SET heartbeat_at = now(), stopped_at = NULL
                """)
        }
    }

    public func instanceStopped(_ name: String) throws(CatalogError) {
        try leased { session in
            try session.execute("UPDATE darkroom_instances SET stopped_at = now(), heartbeat_at = now() WHERE name = \(name)")
        }
    }

    public func releaseClaims(ofInstances instances: [String]) throws(CatalogError) -> Int {
        guard !instances.isEmpty else { return 0 }
        // Their leases end now: the next claim anywhere takes each over (its attempt counted,
        // as for any lapsed lease, so that a photo that kills its workers still ends failed).
        return try leased { session in
            let released = try session.value("""
                WITH released AS (
                    UPDATE queue_jobs SET lease_expires_at = now() - interval '1 second'
                    WHERE state = 'running' AND lease_owner = ANY(\(instances)) RETURNING 1)
                SELECT count(*) FROM released
                """, as: Int64.self) ?? 0
            try session.execute("UPDATE darkroom_instances SET stopped_at = coalesce(stopped_at, heartbeat_at) WHERE name = ANY(\(instances))")
            return Int(released)
        }
    }

    public func instances(recent: Double) throws(CatalogError) -> [InstanceRecord] {
        try readOne { session in
            try session.rows("""
                SELECT i.name, i.host, i.pid, i.machine, extract(epoch FROM i.started_at)::float8, extract(epoch FROM i.heartbeat_at)::float8,
                       extract(epoch FROM i.stopped_at)::float8, coalesce(h.holding, 0)
                FROM darkroom_instances AS i
                LEFT JOIN (SELECT lease_owner, count(*) AS holding FROM queue_jobs WHERE state = 'running' GROUP BY lease_owner) AS h
                    ON h.lease_owner = i.name
                WHERE h.holding > 0 OR i.heartbeat_at > now() - make_interval(secs => \(recent))
                ORDER BY i.host, i.started_at
                """).map { row in
                let (name, host, pid, machine, started, heartbeat, stopped, holding) =
                    try row.decode((String, String, Int32, String, Double, Double, Double?, Int64).self)
                return InstanceRecord(name: name, host: host, pid: pid, machine: machine, startedAt: Date(timeIntervalSince1970: started),
                                      heartbeatAt: Date(timeIntervalSince1970: heartbeat),
                                      stoppedAt: stopped.map { Date(timeIntervalSince1970: $0) }, holding: Int(holding))
            }
        }
    }
}

extension PostgresAvailability: CatalogAvailability {
    public var outage: CatalogOutage? {
        currentOutage.map { CatalogOutage(since: $0.since, reason: $0.reason) }
    }
}

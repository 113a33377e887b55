/// How long Darkroom waits on PostgreSQL before it gives up on a connection: every wait has a
/// deadline, so that a server that stopped answering (a restart, a failover, a network path
/// that silently drops everything) fails the call instead of freezing the thread that made it.
public struct PostgresDeadlines: Sendable, Equatable {
    /// Making a connection, TLS and the start-up handshake included.
    public var connect: Double
    /// One statement, from the moment it is sent until its last row has arrived.
    public var statement: Double
    /// One transaction (or one borrowed session), from BEGIN to COMMIT.
    public var transaction: Double
    /// TCP keepalive: seconds of silence on an idle connection before the kernel probes it; a
    /// path that stopped answering is noticed after this and three unanswered probes a second apart.
    public var keepaliveIdle: Int

    public init(connect: Double = 5, statement: Double = 10, transaction: Double = 30, keepaliveIdle: Int = 5) {
        self.connect = connect
        self.statement = statement
        self.transaction = transaction
        self.keepaliveIdle = keepaliveIdle
    }

    /// What the worker, the server and the commands use unless the configuration says otherwise.
    public static let standard = PostgresDeadlines()

    /// For work whose one statement or transaction may rightly take long: migrations, a
    /// rebuild of every moment, a copy of a whole catalog. A lost connection still fails at once.
    public static let maintenance = PostgresDeadlines(connect: 5, statement: 3600, transaction: 6 * 3600)

    /// For the availability probe: a second in all, so that an outage shows within one.
    public static let probe = PostgresDeadlines(connect: 0.7, statement: 0.7, transaction: 0.7, keepaliveIdle: 1)
}

import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A TCP proxy between a test's clients and a server, on a free 127.0.0.1 port, that fails on
/// demand as a network does: a path that silently stops answering (`blackhole()`), connections
/// reset (`cutAll()`), and a failover behind the same address (`retarget(_:)`). Every call
/// takes effect before it returns and may come from any thread; `close()` (or the proxy going
/// away) ends its thread and every connection.
public final class FaultProxy: Sendable {
    /// Why the proxy could not start: the message names the call that failed.
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// The port clients connect to.
    public let port: Int
    private let loop: ProxyLoop

    /// A proxy on a free loopback port forwarding to 127.0.0.1:`target`.
    public init(target: Int) throws {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard listener >= 0 else { throw Failure(description: "cannot open the proxy's socket: \(String(cString: strerror(errno)))") }
        var address = loopback(port: 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let listening = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(listener, $0, length) == 0 && listen(listener, 128) == 0 && getsockname(listener, $0, &length) == 0
            }
        }
        guard listening else {
            let reason = String(cString: strerror(errno))
            Glibc.close(listener)
            throw Failure(description: "cannot listen on a loopback port for the proxy: \(reason)")
        }
        var wake: [Int32] = [0, 0]
        guard pipe(&wake) == 0 else {
            let reason = String(cString: strerror(errno))
            Glibc.close(listener)
            throw Failure(description: "cannot make the proxy's wake-up pipe: \(reason)")
        }
        for socket in wake { unblock(socket) }
        port = Int(UInt16(bigEndian: address.sin_port))
        loop = ProxyLoop(listener: listener, wakeRead: wake[0], wakeWrite: wake[1], target: target)
        let loop = self.loop
        // Named for ps and /proc/PID/task (15 characters at most).
        let name = "proxy \(port)"
        Thread {
            Thread.current.name = name
            loop.run()
        }.start()
    }

    deinit { loop.stop() }

    /// Stops listening and closes every connection; the proxy's thread ends. Once; later calls do nothing.
    public func close() { loop.stop() }

    /// Stops forwarding in both directions without closing anything: open connections stay
    /// open and their bytes wait unread and unwritten; new connections are accepted but not
    /// served. A network path that silently stopped answering.
    public func blackhole() { loop.perform(.blackhole) }

    /// Forwards again: the connections still open resume where they stopped, and those accepted
    /// meanwhile are connected to the target.
    public func restore() { loop.perform(.restore) }

    /// New connections go to 127.0.0.1:`port` from now on; open ones keep their server.
    public func retarget(_ port: Int) { loop.perform(.retarget(port)) }

    /// Resets every current connection (RST to both ends, SO_LINGER 0), those waiting to be
    /// accepted included.
    public func cutAll() { loop.perform(.cutAll) }

    /// Connections open through the proxy now (each client's, served or waiting).
    public var connectionCount: Int { loop.perform(.none) }
}

/// 127.0.0.1:`port` as a socket address.
private func loopback(port: Int) -> sockaddr_in {
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = in_port_t(UInt16(port).bigEndian)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    return address
}

/// Makes `socket` non-blocking and closed on exec (Glibc's pipe2 and accept4 are not visible to Swift).
private func unblock(_ socket: Int32) {
    _ = fcntl(socket, F_SETFL, fcntl(socket, F_GETFL) | O_NONBLOCK)
    _ = fcntl(socket, F_SETFD, fcntl(socket, F_GETFD) | FD_CLOEXEC)
}

/// Closes `socket` with a reset rather than an orderly end.
private func reset(_ socket: Int32) {
    var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
    setsockopt(socket, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
    Glibc.close(socket)
}

/// The proxy's thread: one poll loop over the listener, a wake-up pipe and every connection.
/// Commands from other threads go through `commands`; the caller waits until the loop has
/// carried them out.
private final class ProxyLoop: @unchecked Sendable {  // safe: `commands`, `issued`, `handled`, `count`, `finished` and writes to `wakeWrite` are under `condition`; the rest only on the loop's thread
    enum Command { case none, blackhole, restore, retarget(Int), cutAll, stop }

    private let listener: Int32
    private let wakeRead: Int32
    private let wakeWrite: Int32
    private let condition = NSCondition()
    private var commands: [Command] = []
    private var issued = 0
    private var handled = 0
    private var count = 0
    private var finished = false

    private var target: Int
    private var blackholed = false
    private var connections: [Connection] = []

    init(listener: Int32, wakeRead: Int32, wakeWrite: Int32, target: Int) {
        self.listener = listener
        self.wakeRead = wakeRead
        self.wakeWrite = wakeWrite
        self.target = target
    }

    /// Hands `command` to the loop and waits until it is carried out; returns the number of
    /// connections then. Nothing once the loop has ended.
    @discardableResult
    func perform(_ command: Command) -> Int {
        condition.lock()
        defer { condition.unlock() }
        guard !finished else { return 0 }
        commands.append(command)
        issued += 1
        let mine = issued
        var byte: UInt8 = 1
        _ = write(wakeWrite, &byte, 1)  // a full pipe already wakes the loop
        while handled < mine && !finished { condition.wait() }
        return count
    }

    func stop() { perform(.stop) }

    /// One client's connection and its server's, with the bytes read from each side and not
    /// yet written to the other.
    private final class Connection {
        let client: Int32
        var server: Int32 = -1
        var connecting = false
        var toServer = Pending()
        var toClient = Pending()
        var clientDone = false  // the client ended its side: nothing more to read from it
        var serverDone = false
        var serverShut = false  // its end passed on (shutdown for writing)
        var clientShut = false
        var dead = false

        init(client: Int32) { self.client = client }
    }

    /// Bytes waiting to be written.
    private struct Pending {
        var bytes: [UInt8] = []
        var offset = 0
        var isEmpty: Bool { offset == bytes.count }
        /// Read at most this much ahead of the other side.
        static let window = 64 * 1024
    }

    func run() {
        var running = true
        while running {
            // What to wait for: the wake-up pipe, the listener, and, unless blackholed, the connections.
            var fds = [pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0),
                       pollfd(fd: listener, events: Int16(POLLIN), revents: 0)]
            var owners: [(Connection, Bool)] = []  // (connection, is the client side) per fd after the first two
            if !blackholed {
                for connection in connections where connection.server >= 0 {
                    if connection.connecting {
                        fds.append(pollfd(fd: connection.server, events: Int16(POLLOUT), revents: 0))
                        owners.append((connection, false))
                        continue
                    }
                    var clientEvents: Int32 = 0
                    if !connection.clientDone && connection.toServer.isEmpty { clientEvents |= Int32(POLLIN) }
                    if !connection.toClient.isEmpty { clientEvents |= Int32(POLLOUT) }
                    var serverEvents: Int32 = 0
                    if !connection.serverDone && connection.toClient.isEmpty { serverEvents |= Int32(POLLIN) }
                    if !connection.toServer.isEmpty { serverEvents |= Int32(POLLOUT) }
                    if clientEvents != 0 {
                        fds.append(pollfd(fd: connection.client, events: Int16(clientEvents), revents: 0))
                        owners.append((connection, true))
                    }
                    if serverEvents != 0 {
                        fds.append(pollfd(fd: connection.server, events: Int16(serverEvents), revents: 0))
                        owners.append((connection, false))
                    }
                }
            }
            let ready = poll(&fds, nfds_t(fds.count), -1)
            if ready < 0 {
                if errno == EINTR { continue }
                // Not expected with valid descriptors; end rather than spin.
                finish()
                return
            }
            for (index, (connection, isClient)) in owners.enumerated() where fds[index + 2].revents != 0 && !connection.dead {
                serve(connection, isClient: isClient, revents: Int32(fds[index + 2].revents))
            }
            if fds[1].revents != 0 { acceptAll(resetting: false) }
            connections.removeAll { $0.dead }
            if fds[0].revents != 0 { running = handleCommands() }
        }
        finish()
    }

    /// Carries out the commands waiting; false after `stop`.
    private func handleCommands() -> Bool {
        var byte = [UInt8](repeating: 0, count: 256)
        while read(wakeRead, &byte, byte.count) > 0 {}
        condition.lock()
        let waiting = commands
        commands.removeAll()
        condition.unlock()
        var running = true
        for command in waiting {
            switch command {
            case .none: break
            case .blackhole: blackholed = true
            case .restore:
                blackholed = false
                for connection in connections where connection.server < 0 { connectServer(connection) }
            case .retarget(let port): target = port
            case .cutAll:
                for connection in connections { abort(connection) }
                acceptAll(resetting: true)
            case .stop: running = false
            }
        }
        connections.removeAll { $0.dead }
        condition.lock()
        handled += waiting.count
        count = connections.count
        condition.broadcast()
        condition.unlock()
        return running
    }

    /// Closes everything and wakes every waiting caller.
    private func finish() {
        for connection in connections { abort(connection) }
        connections.removeAll()
        Glibc.close(listener)
        Glibc.close(wakeRead)
        condition.lock()
        finished = true
        count = 0
        Glibc.close(wakeWrite)
        condition.broadcast()
        condition.unlock()
    }

    /// Accepts every connection waiting in the listener's queue: served (or held, while
    /// blackholed), or reset at once when `resetting`.
    private func acceptAll(resetting: Bool) {
        while true {
            let client = accept(listener, nil, nil)
            if client < 0 {
                if errno == EINTR || errno == ECONNABORTED { continue }
                return
            }
            unblock(client)
            if resetting {
                reset(client)
                continue
            }
            noDelay(client)
            let connection = Connection(client: client)
            connections.append(connection)
            if !blackholed { connectServer(connection) }
        }
    }

    /// Starts the connection to the target; a refused one closes the client's.
    private func connectServer(_ connection: Connection) {
        let server = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard server >= 0 else {
            abort(connection)
            return
        }
        noDelay(server)
        connection.server = server
        var address = loopback(port: target)
        let started = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(server, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        if started == 0 { return }
        if errno == EINPROGRESS {
            connection.connecting = true
        } else {
            close(connection)
        }
    }

    /// Moves the bytes `revents` allows on one side of `connection`.
    private func serve(_ connection: Connection, isClient: Bool, revents: Int32) {
        if connection.connecting {
            var failure: Int32 = 0
            var length = socklen_t(MemoryLayout<Int32>.size)
            getsockopt(connection.server, SOL_SOCKET, SO_ERROR, &failure, &length)
            connection.connecting = false
            if failure != 0 { close(connection) }
            return
        }
        let hangUp = revents & (Int32(POLLHUP) | Int32(POLLERR)) != 0
        if isClient {
            if revents & Int32(POLLOUT) != 0 || hangUp, !flush(&connection.toClient, to: connection.client) { return abort(connection) }
            if revents & Int32(POLLIN) != 0 || hangUp, !connection.clientDone {
                switch fill(&connection.toServer, from: connection.client) {
                case .failed: return abort(connection)
                case .ended: connection.clientDone = true
                case .read: break
                }
            }
        } else {
            if revents & Int32(POLLOUT) != 0 || hangUp, !flush(&connection.toServer, to: connection.server) { return abort(connection) }
            if revents & Int32(POLLIN) != 0 || hangUp, !connection.serverDone {
                switch fill(&connection.toClient, from: connection.server) {
                case .failed: return abort(connection)
                case .ended: connection.serverDone = true
                case .read: break
                }
            }
        }
        // An end passes on once what came before it is written.
        if connection.clientDone && connection.toServer.isEmpty && !connection.serverShut {
            connection.serverShut = true
            shutdown(connection.server, Int32(SHUT_WR))
        }
        if connection.serverDone && connection.toClient.isEmpty && !connection.clientShut {
            connection.clientShut = true
            shutdown(connection.client, Int32(SHUT_WR))
        }
        if connection.serverShut && connection.clientShut { close(connection) }
    }

    private enum Filled { case read, ended, failed }

    /// Reads what `socket` has (up to the window) into `pending`.
    private func fill(_ pending: inout Pending, from socket: Int32) -> Filled {
        if pending.isEmpty { pending = Pending() }
        var chunk = [UInt8](repeating: 0, count: Pending.window)
        let got = recv(socket, &chunk, chunk.count, 0)
        if got > 0 {
            pending.bytes.append(contentsOf: chunk[0..<got])
            return .read
        }
        if got == 0 { return .ended }
        return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? .read : .failed
    }

    /// Writes what `socket` takes of `pending`; false when the socket failed.
    private func flush(_ pending: inout Pending, to socket: Int32) -> Bool {
        while !pending.isEmpty {
            let sent = pending.bytes.withUnsafeBytes { buffer in
                send(socket, buffer.baseAddress.map { $0 + pending.offset }, buffer.count - pending.offset, Int32(MSG_NOSIGNAL))
            }
            if sent > 0 {
                pending.offset += sent
                continue
            }
            return sent < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
        }
        return true
    }

    /// Ends a connection in order (FIN to both ends).
    private func close(_ connection: Connection) {
        guard !connection.dead else { return }
        connection.dead = true
        Glibc.close(connection.client)
        if connection.server >= 0 { Glibc.close(connection.server) }
    }

    /// Ends a connection with a reset to both ends.
    private func abort(_ connection: Connection) {
        guard !connection.dead else { return }
        connection.dead = true
        reset(connection.client)
        if connection.server >= 0 { reset(connection.server) }
    }

    private func noDelay(_ socket: Int32) {
        var one: Int32 = 1
        setsockopt(socket, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
    }
}

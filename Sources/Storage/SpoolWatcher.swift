import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Wakes the daemon when something changes in `incoming/` (inotify, folders included), with a
/// periodic scan as the fallback: `wait` returns on an event, on stop, or after the timeout.
public final class SpoolWatcher: @unchecked Sendable {
    // @unchecked: used by the one scanning thread only; the descriptor never changes after init.
    private let descriptor: Int32
    private let directory: String
    private let wake: StopSignal
    private var watched: Set<String> = []

    public init(directory: String, wake: StopSignal) {
        self.directory = directory
        self.wake = wake
        descriptor = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        addWatches()
    }

    deinit {
        if descriptor >= 0 { close(descriptor) }
    }

    private func addWatches() {
        guard descriptor >= 0 else { return }
        var folders = [directory]
        if let walker = FileManager.default.enumerator(atPath: directory) {
            while let relative = walker.nextObject() as? String {
                var isDirectory: ObjCBool = false
                if FileManager.default.fileExists(atPath: directory + "/" + relative, isDirectory: &isDirectory), isDirectory.boolValue {
                    folders.append(directory + "/" + relative)
                }
            }
        }
        let mask = UInt32(IN_CLOSE_WRITE | IN_MOVED_TO | IN_CREATE | IN_ATTRIB)
        for folder in folders where !watched.contains(folder) {
            if inotify_add_watch(descriptor, folder, mask) >= 0 { watched.insert(folder) }
        }
    }

    /// Reads every pending event; true when one is about a folder or reports lost events.
    private func drainEvents() -> Bool {
        var folder = false
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        // struct inotify_event: wd, mask, cookie, len (four 32-bit fields), then len bytes of name.
        let header = 16
        while true {
            let count = read(descriptor, &buffer, buffer.count)
            guard count > 0 else { break }
            buffer.withUnsafeBytes { bytes in
                var offset = 0
                while offset + header <= count {
                    let mask = bytes.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self)
                    let length = bytes.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self)
                    if mask & UInt32(IN_ISDIR) != 0 || mask & UInt32(IN_Q_OVERFLOW) != 0 { folder = true }
                    offset += header + Int(length)
                }
            }
        }
        return folder
    }

    /// Blocks until a change in `incoming/`, a stop, or `timeout` seconds.
    public func wait(timeout: Double) {
        var fds = [pollfd(fd: wake.readDescriptor, events: Int16(POLLIN), revents: 0)]
        if descriptor >= 0 { fds.append(pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)) }
        _ = poll(&fds, nfds_t(fds.count), Int32(timeout * 1000))
        if descriptor >= 0, fds.count > 1, fds[1].revents != 0 {
            // New folders need watches of their own; looking for them walks all of `incoming/`,
            // which behind a backlog of thousands cost more than the photos while a copy poured
            // files in (an event per file). So the walk runs only when an event names a folder,
            // or when the kernel dropped events (its queue overflowed).
            if drainEvents() { addWatches() }
        }
    }
}

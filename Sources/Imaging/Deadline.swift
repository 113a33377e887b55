import CDeadline
import Foundation

/// The calling thread's deadline for the photo in hand, which the decoders check while they run
/// (libjpeg's progress monitor, libpng's reads) and the renderer checks between its steps: work
/// past it stops with `ImagingError.pastDeadline` instead of running to its end.
public enum Deadline {
    /// Runs `body` with `deadline` set for this thread (none when nil), then clears it.
    public static func during<T>(_ deadline: Date?, _ body: () throws -> T) rethrows -> T {
        guard let deadline else { return try body() }
        let remaining = max(deadline.timeIntervalSinceNow, 0)
        // 1 ns at least: 0 would mean "no deadline".
        darkroom_set_deadline(darkroom_monotonic_ns() &+ max(UInt64(remaining * 1e9), 1))
        defer { darkroom_set_deadline(0) }
        return try body()
    }

    /// Throws when this thread's deadline has passed.
    static func check() throws {
        if darkroom_past_deadline() != 0 { throw ImagingError.pastDeadline }
    }
}

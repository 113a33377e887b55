import Foundation

#if canImport(Glibc)
import Glibc
#endif

extension Process {
    /// Waits for the process to end, for at most `seconds`. Past that it is killed (SIGKILL),
    /// given a few seconds more to be reaped, and the answer is false: a test that waits on a
    /// child that never ends fails, instead of holding up the whole run.
    @discardableResult
    public func waitForExit(within seconds: Double = 300) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while isRunning {
            guard Date() < deadline else {
                let name = executableURL?.lastPathComponent ?? "a child process"
                FileHandle.standardError.write(Data("\(name) (pid \(processIdentifier), \(arguments ?? [])) did not end within \(seconds) s; killed\n".utf8))
                kill(processIdentifier, SIGKILL)
                let grace = Date().addingTimeInterval(10)
                while isRunning && Date() < grace { usleep(20_000) }
                return false
            }
            usleep(5_000)
        }
        return true
    }
}

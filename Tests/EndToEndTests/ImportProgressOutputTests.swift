import ChildProcesses
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The progress of an import as a person sees it on a terminal, and as a log reads it.
@Suite("Import: progress output", .serialized)
struct ImportProgressOutputTests {
    static func library(in space: Workspace, photos: Int = 16) throws -> LibraryTree {
        let tree = LibraryTree(space.root + "/lib")
        for i in 0..<photos {
            try tree.write("p\(i).jpg", LibraryTree.hopper("progress-\(i)"))
        }
        try tree.write("broken.jpg", Array(LibraryTree.sample("Landscape_6.jpg").prefix(2000)))
        return tree
    }

    @Test func withoutATerminalProgressIsALogLineEveryFewSeconds() throws {
        let space = try Workspace(concurrency: 1)
        let tree = try Self.library(in: space)
        let run = try space.run(["import", tree.root, "--progress-interval", "0.05"])
        let lines = run.stderr.split(separator: "\n").filter { $0.contains("import progress") }
        #expect(lines.count >= 2, "\(run.stderr)")
        #expect(lines.last?.contains("done=17/17") == true)
        #expect(lines.last?.contains("failed=1") == true)
        #expect(lines.allSatisfy { $0.contains("photos_per_second=") && $0.contains("eta=") })
        #expect(!run.stderr.contains("\u{1B}[2K"), "no bar drawn on a file")
        #expect(run.stdout.contains("import finished"))
    }

    @Test func onATerminalProgressIsALiveBar() throws {
        let space = try Workspace(concurrency: 1)
        let tree = try Self.library(in: space)
        let output = try Self.runOnTerminal(space, ["import", tree.root])
        #expect(output.contains("\r\u{1B}[2K["), "the bar is redrawn in place")
        #expect(output.contains("] 17/17  "), "\(output.suffix(500))")
        #expect(output.contains(" photos/s  ETA "))
        #expect(output.contains("  failed 1"))
        #expect(!output.contains("import progress"), "no progress log lines on a terminal")
        #expect(output.contains("outcome=failed"), "log lines still appear above the bar")
    }

    @Test func theBarCanBeForcedAndProgressSilenced() throws {
        let space = try Workspace(concurrency: 1)
        let tree = try Self.library(in: space, photos: 6)
        let bar = try space.run(["import", tree.root, "--progress", "bar"])
        #expect(bar.stderr.contains("\r\u{1B}[2K[############################] 7/7  "), "\(bar.stderr)")
        #expect(!bar.stderr.contains("import progress"))
        let other = try Workspace(concurrency: 1)
        let quiet = try other.run(["import", try Self.library(in: other, photos: 6).root, "--progress", "none"])
        #expect(!quiet.stderr.contains("import progress") && !quiet.stderr.contains("\u{1B}[2K"))
        #expect(quiet.stdout.contains("imported             6"))
        let invalid = try other.run(["import", tree.root, "--progress", "sometimes"])
        #expect(invalid.status != 0 && invalid.stderr.contains("--progress"))
    }

    /// Runs darkroom with standard error on a pseudo-terminal and returns what it drew there.
    static func runOnTerminal(_ space: Workspace, _ arguments: [String]) throws -> String {
        let pty = try #require(PseudoTerminal.functions(), "the C library's pseudo-terminal functions")
        let master = pty.open(O_RDWR | O_NOCTTY)
        #expect(master >= 0 && pty.grant(master) == 0 && pty.unlock(master) == 0)
        defer { close(master) }
        let name = try #require(pty.name(master).map { String(cString: $0) })
        let slave = open(name, O_RDWR | O_NOCTTY)
        try #require(slave >= 0)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Workspace.binary)
        process.arguments = arguments + ["--config", space.configPath]
        process.standardOutput = FileHandle(forWritingAtPath: "/dev/null")
        process.standardError = FileHandle(fileDescriptor: slave, closeOnDealloc: false)
        // Drain the terminal while darkroom writes, or it would block on a full buffer.
        let collected = Collected()
        let reader = Thread {
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let n = buffer.withUnsafeMutableBytes { read(master, $0.baseAddress, 4096) }
                if n <= 0 { break }
                collected.append(buffer.prefix(n))
            }
        }
        reader.start()
        try process.run()
        close(slave)
        process.waitForExit()
        while !reader.isFinished { usleep(10_000) }
        return String(decoding: collected.bytes, as: UTF8.self)
    }

    /// posix_openpt, grantpt, unlockpt and ptsname, which the Glibc module does not export.
    struct PseudoTerminal {
        typealias IntFunction = @convention(c) (Int32) -> Int32
        typealias NameFunction = @convention(c) (Int32) -> UnsafeMutablePointer<CChar>?
        var open: IntFunction
        var grant: IntFunction
        var unlock: IntFunction
        var name: NameFunction

        static func functions() -> PseudoTerminal? {
            let library = dlopen(nil, RTLD_NOW)
            func symbol<T>(_ name: String, as type: T.Type) -> T? {
                dlsym(library, name).map { unsafeBitCast($0, to: type) }
            }
            guard let open = symbol("posix_openpt", as: IntFunction.self), let grant = symbol("grantpt", as: IntFunction.self),
                  let unlock = symbol("unlockpt", as: IntFunction.self), let name = symbol("ptsname", as: NameFunction.self)
            else { return nil }
            return PseudoTerminal(open: open, grant: grant, unlock: unlock, name: name)
        }
    }

    final class Collected: @unchecked Sendable {
        // @unchecked: appended by the one reader thread, read after it has finished.
        private(set) var bytes: [UInt8] = []
        func append(_ more: ArraySlice<UInt8>) { bytes += more }
    }
}

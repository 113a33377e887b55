import Foundation
import Storage
import Testing

/// A process's identity: its instance tells it apart from every other process, also from one on
/// another machine with the same host name; only a process of this machine and PID namespace is
/// ever judged dead from here.
@Suite struct WorkerIdentityTests {
    @Test func aNameCarriesHostPidAndInstanceAndReadsBack() throws {
        let me = WorkerIdentity.current
        let instance = try #require(me.instance)
        #expect(instance.count == 16 && instance.allSatisfy(\.isHexDigit))
        #expect(me.machine == WorkerIdentity.machineKey)
        #expect(me.name == "\(me.host).\(me.pid).\(instance)")
        #expect(WorkerIdentity(name: me.name) == me)
        // A host name with dots, and a name written before instances existed.
        let dotted = try #require(WorkerIdentity(name: "db.example.org.42.0123456789abcdef"))
        #expect(dotted.host == "db.example.org" && dotted.pid == 42 && dotted.instance == "0123456789abcdef")
        let legacy = try #require(WorkerIdentity(name: "db.example.org.42"))
        #expect(legacy.host == "db.example.org" && legacy.pid == 42 && legacy.instance == nil)
        #expect(WorkerIdentity(name: "no-pid-here") == nil)
    }

    @Test func twoProcessesOfOneHostNameHaveDifferentNames() {
        // The same host name and even the same pid (two containers, each its own PID namespace).
        let a = WorkerIdentity(host: "worker", pid: 7, instance: WorkerIdentity.machineKey + "00000001")
        let b = WorkerIdentity(host: "worker", pid: 7, instance: "ffffffff" + "00000001")
        #expect(a.name != b.name)
    }

    @Test func onlyAProcessOfThisMachineAndPIDNamespaceIsJudgedDead() {
        let host = WorkerIdentity.current.host
        // A process id that cannot be running: pid_max is far below Int32.max.
        let gonePid = Int32.max - 1
        let here = WorkerIdentity(host: host, pid: gonePid, instance: WorkerIdentity.machineKey + "12345678")
        #expect(here.isKnownDead, "a process of this machine that no longer exists")
        let otherNamespace = WorkerIdentity(host: host, pid: gonePid,
                                            instance: String(WorkerIdentity.machineKey.reversed()) + "12345678")
        if otherNamespace.machine != WorkerIdentity.machineKey {
            #expect(!otherNamespace.isKnownDead, "a container with this host name is not judged by this process table")
        }
        let otherHost = WorkerIdentity(host: host + "-other", pid: gonePid, instance: WorkerIdentity.machineKey + "12345678")
        #expect(!otherHost.isKnownDead)
        let alive = WorkerIdentity(host: host, pid: getpid(), instance: WorkerIdentity.machineKey + "87654321")
        #expect(!alive.isKnownDead, "a running process")
        #expect(!WorkerIdentity.current.isKnownDead)
    }

    @Test func aTemporaryFileOfASameNamedHostElsewhereIsNotSweptAtOnce() throws {
        let root = NSTemporaryDirectory() + "identity-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: root) }
        let me = WorkerIdentity.current
        // The same host name and pid as this process, on another machine (another machine key).
        var elsewhere = me
        elsewhere.instance = (me.machine == "00000000" ? "11111111" : "00000000") + "abcdef01"
        let theirs = root + "/" + FileSystem.temporaryPrefix + elsewhere.name + "-" + UUID().uuidString
        var dead = me
        dead.pid = Int32.max - 1
        let deadFile = root + "/" + FileSystem.temporaryPrefix + dead.name + "-" + UUID().uuidString
        _ = FileManager.default.createFile(atPath: theirs, contents: Data([1]))
        _ = FileManager.default.createFile(atPath: deadFile, contents: Data([1]))
        #expect(FileSystem.sweepTemporaries(under: root, olderThan: 3600) == 1)
        #expect(FileManager.default.fileExists(atPath: theirs), "its writer may be alive on its own machine")
        #expect(!FileManager.default.fileExists(atPath: deadFile))
    }
}

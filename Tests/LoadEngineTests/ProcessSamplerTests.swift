import Foundation
import LoadResults
import Testing

@testable import LoadEngine

#if canImport(Glibc)
import Glibc
#endif

/// `/proc` parsing with recorded lines, and the process sampler against real child processes:
/// CPU of a busy one, a restart followed by name, an exit that becomes a gap.
@Suite(.serialized) struct ProcessSamplerTests {
    @Test func statLinesParseWhateverTheCommHolds() throws {
        // A real line of a Prosody (lua5.4) process, and a comm with spaces and parentheses.
        let line =
            "25938 (lua5.4) S 1 25937 25937 0 -1 4194560 3131 0 0 0 37 12 0 0 20 0 1 0 252201 35930112 3404 18446744073709551615 1 1 0 0 0 0 0 4096 17475 0 0 0 17 1 0 0 0 0 0 0 0 0 0 0 0 0 0"
        let stat = try #require(ProcStat(Substring(line)))
        #expect(stat.pid == 25938 && stat.comm == "lua5.4" && stat.state == "S")
        #expect(stat.userTicks == 37 && stat.systemTicks == 12 && stat.threads == 1 && stat.startTime == 252201 && stat.rssPages == 3404)
        let odd = try #require(
            ProcStat(Substring("7 (a (b) c) R " + Array(repeating: "0", count: 10).joined(separator: " ") + " 5 6 0 0 0 0 3 0 99 0 10")))
        #expect(odd.comm == "a (b) c" && odd.userTicks == 5 && odd.systemTicks == 6 && odd.threads == 3 && odd.startTime == 99 && odd.rssPages == 10)
        #expect(ProcStat(Substring("12 (cut")) == nil)
        #expect(ProcStat(Substring("12 (x) S 1 2")) == nil)
    }

    @Test func statusGivesSwitchesAndTheCPUsAllowed() {
        let status = ProcStatus(
            Substring("Name:\tlua5.4\nThreads:\t1\nCpus_allowed_list:\t0-3,8,10-11\nvoluntary_ctxt_switches:\t15\nnonvoluntary_ctxt_switches:\t25\n"))
        #expect(status.voluntarySwitches == 15 && status.involuntarySwitches == 25 && status.allowedCPUs == 7)
        #expect(ProcStatus.schedstatWait("185043834 25185064 432\n") == 25_185_064)
        #expect(ProcStatus.schedstatWait("1") == nil)
        #expect(ProcStatus.countCPUs("0") == 1)
        #expect(ProcStatus.countCPUs("3-1") == nil)
    }

    struct Name: Sendable, CustomStringConvertible {
        var name: String
        var comm: String
        var exe: String?
        var arguments: [String]
        var matches: Bool
        var description: String { "\(name) vs \(comm) \(arguments)" }
    }

    static let names: [Name] = [
        Name(name: "prosody", comm: "lua5.4", exe: "/usr/bin/lua5.4", arguments: ["lua5.4", "/usr/bin/prosody", "--config"], matches: true),
        Name(name: "prosody", comm: "prosody", exe: nil, arguments: [], matches: true),
        Name(name: "beam.smp", comm: "beam.smp", exe: "/usr/lib/erlang/erts-13/bin/beam.smp", arguments: [], matches: true),
        Name(name: "jabberd2-router", comm: "jabberd2-router", exe: nil, arguments: [], matches: true),
        Name(name: "a-very-long-server-name", comm: "a-very-long-ser", exe: nil, arguments: [], matches: true),
        Name(name: "java", comm: "java", exe: "/usr/lib/jvm/bin/java", arguments: ["java", "-jar", "openfire.jar"], matches: true),
        // Not an interpreter: its first argument is not the program.
        Name(name: "prosody", comm: "sleep", exe: "/usr/bin/sleep", arguments: ["sleep", "prosody"], matches: false),
        Name(name: "prosody", comm: "lua5.4", exe: "/usr/bin/lua5.4", arguments: ["lua5.4", "-e", "x"], matches: false),
        Name(name: "prosody", comm: "prosodyctl", exe: nil, arguments: ["lua5.4", "/usr/bin/prosodyctl"], matches: false),
    ]

    @Test(arguments: names) func namesMatchCommExecutableOrScript(_ row: Name) {
        #expect(ProcessReader.matches(row.name, comm: row.comm, exe: row.exe, arguments: row.arguments.map { Substring($0) }) == row.matches)
    }

    /// A copy of dash under a name no other process has, so a name lookup finds only our children.
    static func uniqueShell() throws -> (path: String, name: String) {
        let name = "xlmon\(UInt32.random(in: 100_000...999_999))"
        let path = FileManager.default.temporaryDirectory.appendingPathComponent(name).path
        try FileManager.default.copyItem(atPath: "/bin/dash", toPath: path)
        return (path, name)
    }

    static func spawn(_ path: String, _ script: String) throws -> pid_t {
        var pid: pid_t = 0
        let argv: [UnsafeMutablePointer<CChar>?] = [strdup(path), strdup("-c"), strdup(script), nil]
        defer { argv.forEach { free($0) } }
        let status = posix_spawn(&pid, path, nil, nil, argv, environ)
        guard status == 0 else { throw POSIXError(POSIXErrorCode(rawValue: status) ?? .EINVAL) }
        return pid
    }

    static func stop(_ pid: pid_t) {
        kill(pid, SIGKILL)
        var status: Int32 = 0
        waitpid(pid, &status, 0)
    }

    static func now() -> UInt64 { UInt64(DispatchTime.now().uptimeNanoseconds) }

    static func take(_ sampler: inout ProcessSampler, at: Double) -> (reading: MonitorReading, events: [MonitorEvent])? {
        sampler.sample(now: now(), at: at)
    }

    @Test func aBusyProcessByIDShowsItsCPUAndItsExitIsAGap() throws {
        let shell = try Self.uniqueShell()
        defer { try? FileManager.default.removeItem(atPath: shell.path) }
        let pid = try Self.spawn(shell.path, "while :; do :; done")
        var stopped = false
        defer { if !stopped { Self.stop(pid) } }
        var sampler = ProcessSampler(label: "busy", target: .pid(pid))
        #expect(Self.take(&sampler, at: 0).map { _ in true } == nil)  // the first read only sets the counters
        usleep(1_000_000)
        let (reading, events) = try #require(Self.take(&sampler, at: 1))
        let sample = try #require(reading.process)
        #expect(events.isEmpty)
        #expect(sample.pids == [pid] && sample.name == shell.name)
        #expect(sample.seconds > 0.9 && sample.seconds < 2)
        // A spinning shell: most of a core, unless this shared machine starves it.
        #expect(sample.cpuPercent > 10 && sample.cpuPercent < 110)
        #expect(abs(sample.cpuPercent - sample.userPercent - sample.systemPercent) < 0.001)
        #expect(sample.threads == 1 && sample.usableCores == 1)
        #expect(sample.busiestThreadPercent.map { abs($0 - sample.cpuPercent) < 5 } == true)
        #expect(sample.rssBytes > 0 && (sample.openFDs ?? 0) >= 3)
        // Running plus waiting for a CPU is at most the wall time of its one thread.
        let waited = try #require(sample.runQueueWaitPercent)
        #expect(waited >= 0 && sample.cpuPercent + waited < 110)
        Self.stop(pid)
        stopped = true
        let (gone, exitEvents) = try #require(Self.take(&sampler, at: 2))
        #expect(gone.gap?.reason == .exited)
        #expect(exitEvents.map(\.kind) == [.exited])
        // Never zeros afterwards either.
        #expect(Self.take(&sampler, at: 3)?.reading.gap?.reason == .exited)
        var missing = ProcessSampler(label: "x", target: .pid(Int32.max - 1))
        _ = Self.take(&missing, at: 0)
        #expect(Self.take(&missing, at: 1)?.reading.gap == MonitorGap(.notFound, "no process \(Int32.max - 1)"))
    }

    @Test func aProcessByNameIsSummedAndFollowedThroughARestart() throws {
        let shell = try Self.uniqueShell()
        defer { try? FileManager.default.removeItem(atPath: shell.path) }
        var sampler = ProcessSampler(label: "server", target: .name(shell.name))
        #expect(Self.take(&sampler, at: 0).map { _ in true } == nil)
        #expect(Self.take(&sampler, at: 1)?.reading.gap == MonitorGap(.notFound, "no process named \(shell.name)"))
        let first = try Self.spawn(shell.path, "sleep 30")
        let second = try Self.spawn(shell.path, "sleep 30")
        var alive = [first, second]
        defer { alive.forEach(Self.stop) }
        usleep(200_000)
        let (appeared, appearedEvents) = try #require(Self.take(&sampler, at: 2))
        #expect(appeared.process?.pids == [first, second].sorted())
        #expect(appeared.process?.partial == true)
        #expect(appearedEvents.map(\.kind) == [.appeared])
        usleep(200_000)
        let steady = try #require(Self.take(&sampler, at: 3)?.reading.process)
        #expect(steady.partial == nil && steady.threads == 2)
        // A restart: both old processes gone, a new one there.
        Self.stop(first)
        Self.stop(second)
        let successor = try Self.spawn(shell.path, "sleep 30")
        alive = [successor]
        usleep(200_000)
        let (restarted, events) = try #require(Self.take(&sampler, at: 4))
        #expect(restarted.process?.pids == [successor])
        #expect(restarted.process?.partial == true)
        #expect(events == [MonitorEvent(at: 4, source: "server", kind: .restarted, before: [first, second].sorted(), after: [successor])])
        Self.stop(successor)
        alive = []
        let (gone, goneEvents) = try #require(Self.take(&sampler, at: 5))
        #expect(gone.gap == MonitorGap(.exited, "no process named \(shell.name) any more"))
        #expect(goneEvents.map(\.kind) == [.exited])
    }
}

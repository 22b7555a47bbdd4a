import LoadResults

#if canImport(Glibc)
import Glibc
#endif

/// One read of a process's counters from `/proc` (cumulative values; `ProcessSampler` turns two reads
/// into rates). Blocking file reads: call it off the event loops (the monitor's own thread does).
struct ProcessSnapshot: Sendable, Equatable {
    var stat: ProcStat
    /// CPUs the process may run on (its affinity); nil when unknown.
    var allowedCPUs: Int?
    /// Context switches summed over the threads read.
    var voluntarySwitches: UInt64
    var involuntarySwitches: UInt64
    /// CPU ticks per thread id; nil when the threads were not read (more than the limit).
    var threadTicks: [Int32: UInt64]?
    /// Nanoseconds the threads spent runnable but waiting for a CPU (`/proc/PID/task/*/schedstat`'s
    /// second field), summed; nil when the threads were not read or the kernel keeps no schedstat.
    var runQueueWait: UInt64?
    /// Open descriptors; nil when `/proc/PID/fd` is not readable.
    var openFDs: Int?
    /// Monotonic nanoseconds when read.
    var takenAt: UInt64
}

/// Reads processes from `/proc`: one by id (`read`), or every one of a name (`pids(named:)`).
enum ProcessReader {
    /// Why a read failed.
    enum Failure: Error, Sendable, Equatable {
        /// No such process (it exited, or never was).
        case gone
        /// The kernel refused (another user's process without the right to read it).
        case unreadable(String)
    }

    /// Reads `pid`; threads one by one up to `threadLimit` (more: `threadTicks` is nil and the context
    /// switches count the first `threadLimit` threads).
    static func read(
        pid: Int32, root: String = "/proc", threadLimit: Int = ProcessSample.threadReadLimit, now: UInt64
    )
        -> Result<ProcessSnapshot, Failure>
    {
        let base = "\(root)/\(pid)"
        let statText: String
        switch readSmallFile("\(base)/stat") {
        case .success(let text): statText = text
        case .failure(let failure): return .failure(failure)
        }
        guard let stat = ProcStat(Substring(statText)) else { return .failure(.gone) }
        var leaderStatus: ProcStatus?
        if case .success(let text) = readSmallFile("\(base)/status") { leaderStatus = ProcStatus(Substring(text)) }
        var voluntary: UInt64 = 0
        var involuntary: UInt64 = 0
        var threadTicks: [Int32: UInt64]? = [:]
        var runQueueWait: UInt64? = 0
        let tids = listNumericEntries("\(base)/task", limit: threadLimit + 1)
        if let tids, !tids.isEmpty {
            if tids.count > threadLimit {
                threadTicks = nil
                runQueueWait = nil
            }
            for tid in tids.prefix(threadLimit) {
                if runQueueWait != nil {
                    if case .success(let text) = readSmallFile("\(base)/task/\(tid)/schedstat"),
                        let waited = ProcStatus.schedstatWait(Substring(text))
                    {
                        runQueueWait! += waited
                    } else {
                        runQueueWait = nil
                    }
                }
                if threadTicks != nil, case .success(let text) = readSmallFile("\(base)/task/\(tid)/stat"), let thread = ProcStat(Substring(text)) {
                    threadTicks?[tid] = thread.cpuTicks
                }
                if case .success(let text) = readSmallFile("\(base)/task/\(tid)/status") {
                    let status = ProcStatus(Substring(text))
                    voluntary += status.voluntarySwitches
                    involuntary += status.involuntarySwitches
                }
            }
        } else {
            threadTicks = nil
            runQueueWait = nil
            voluntary = leaderStatus?.voluntarySwitches ?? 0
            involuntary = leaderStatus?.involuntarySwitches ?? 0
        }
        let fds = listNumericEntries("\(base)/fd", limit: Int.max)?.count
        // The process may have exited between the reads: a second look at its stat says so.
        if case .failure = readSmallFile("\(base)/stat") { return .failure(.gone) }
        return .success(
            ProcessSnapshot(
                stat: stat, allowedCPUs: leaderStatus?.allowedCPUs, voluntarySwitches: voluntary, involuntarySwitches: involuntary,
                threadTicks: threadTicks, runQueueWait: runQueueWait, openFDs: fds, takenAt: now))
    }

    /// Every process whose name is `name` (see `matches`), ascending by id. Reads each process's
    /// `comm`, and its `exe` link and `cmdline` only when the comm does not already decide.
    static func pids(named name: String, root: String = "/proc") -> [Int32] {
        guard let all = listNumericEntries(root, limit: Int.max) else { return [] }
        var found: [Int32] = []
        for pid in all {
            guard case .success(let comm) = readSmallFile("\(root)/\(pid)/comm") else { continue }
            let trimmed = comm.hasSuffix("\n") ? String(comm.dropLast()) : comm
            if matches(name, comm: trimmed, exe: nil, arguments: []) {
                found.append(pid)
                continue
            }
            let exe = readLink("\(root)/\(pid)/exe")
            var arguments: [Substring] = []
            if case .success(let text) = readSmallFile("\(root)/\(pid)/cmdline", limit: 4096) {
                arguments = text.split(separator: "\0", maxSplits: 2, omittingEmptySubsequences: false).prefix(2).map { $0 }
            }
            if matches(name, comm: trimmed, exe: exe, arguments: arguments) { found.append(pid) }
        }
        return found.sorted()
    }

    /// Whether a process is called `name`: its `comm` (the kernel keeps 15 characters, so a longer
    /// name matches on its first 15), its executable's base name, its `argv[0]`'s base name, or —
    /// when that is an interpreter (`lua5.4`, `python3`, `perl`, `ruby`, `node`, a shell) — its script's
    /// base name (`argv[1]`): Prosody runs as `lua5.4 /usr/bin/prosody`.
    static func matches(_ name: String, comm: String, exe: String?, arguments: [Substring]) -> Bool {
        if comm == name || (name.utf8.count > 15 && comm == String(decoding: name.utf8.prefix(15), as: UTF8.self)) { return true }
        func base(_ path: Substring) -> Substring { path.split(separator: "/").last ?? path }
        if let exe, base(Substring(exe)) == name || base(Substring(exe)) == name + " (deleted)" { return true }
        guard let first = arguments.first else { return false }
        let program = base(first)
        if program == name { return true }
        let interpreters = ["lua", "luajit", "python", "perl", "ruby", "node", "nodejs", "sh", "bash", "dash"]
        let isInterpreter = interpreters.contains {
            program == $0 || (program.hasPrefix($0) && program.dropFirst($0.count).allSatisfy { $0.isNumber || $0 == "." })
        }
        if isInterpreter, arguments.count > 1, !arguments[1].hasPrefix("-"), base(arguments[1]) == name { return true }
        return false
    }

    /// Reads a small file whole (at most `limit` bytes: /proc files report size 0, so no stat).
    static func readSmallFile(_ path: String, limit: Int = 65_536) -> Result<String, Failure> {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            let code = errno
            return .failure(code == EACCES || code == EPERM ? .unreadable(path) : .gone)
        }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while bytes.count < limit {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, min(4096, limit - bytes.count)) }
            if count < 0 {
                let code = errno
                if code == EINTR { continue }
                return .failure(code == EACCES || code == EPERM ? .unreadable(path) : .gone)
            }
            if count == 0 { break }
            bytes.append(contentsOf: chunk[0..<count])
        }
        return .success(String(decoding: bytes, as: UTF8.self))
    }

    /// Where a `dirent`'s name starts.
    private static let nameOffset = MemoryLayout<dirent>.offset(of: \dirent.d_name)!

    /// The numeric entries of a directory (process, thread or descriptor numbers), at most `limit`;
    /// nil when the directory cannot be read.
    ///
    /// The name is read in place, never by loading `entry.pointee`: glibc packs the records
    /// (`d_reclen`, often 24-32 bytes) in its getdents buffer, so copying a whole 280-byte `dirent`
    /// reads past the last record — and past the buffer's end when that record is at its end, which
    /// crashed a two-hour soak (SIGSEGV in this function reading /proc/PID/fd of a Prosody that was
    /// taking 3,000 reconnects).
    static func listNumericEntries(_ path: String, limit: Int) -> [Int32]? {
        guard let directory = opendir(path) else { return nil }
        defer { closedir(directory) }
        var entries: [Int32] = []
        while entries.count < limit, let entry = readdir(directory) {
            let name = (UnsafeRawPointer(entry) + nameOffset).assumingMemoryBound(to: CChar.self)
            if let number = parseNumber(name) { entries.append(number) }
        }
        return entries
    }

    /// A NUL-terminated all-digit name as a number (nil for `.`, `..` or anything else).
    private static func parseNumber(_ name: UnsafePointer<CChar>) -> Int32? {
        var value: Int32 = 0
        var index = 0
        while name[index] != 0 {
            let digit = Int32(name[index]) - 48
            guard (0...9).contains(digit), index < 10 else { return nil }
            let (times, overflowTimes) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflowSum) = times.addingReportingOverflow(digit)
            guard !overflowTimes, !overflowSum else { return nil }
            value = sum
            index += 1
        }
        return index > 0 ? value : nil
    }

    static func readLink(_ path: String) -> String? {
        var buffer = [CChar](repeating: 0, count: 4096)
        let count = readlink(path, &buffer, 4096)
        guard count > 0 else { return nil }
        return String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// The fields xmppload reads from Linux's `/proc/PID/stat` (or `/proc/PID/task/TID/stat`), parsed
/// from the file's one line. Times are in clock ticks (`sysconf(_SC_CLK_TCK)`, 100 on Linux);
/// `startTime` is ticks since boot, which with the id tells a process from a later one that reused
/// its id. `comm` may hold spaces and parentheses, so the fields are counted from its last `)`.
struct ProcStat: Sendable, Equatable {
    var pid: Int32
    var comm: String
    var state: Character
    var userTicks: UInt64
    var systemTicks: UInt64
    var threads: Int
    var startTime: UInt64
    var rssPages: UInt64

    /// Parses a stat line; nil when it is not one (a truncated read, a kernel thread's odd line).
    init?(_ line: Substring) {
        guard let open = line.firstIndex(of: "("), let close = line.lastIndex(of: ")"), open < close,
            let pid = Int32(line[..<open].trimmingSpaces)
        else { return nil }
        let fields = line[line.index(after: close)...].split(separator: " ", omittingEmptySubsequences: true)
        // After the comm: state is field 3 of the whole line, so field N is fields[N - 3].
        guard fields.count >= 22, let state = fields[0].first,
            let user = UInt64(fields[11]), let system = UInt64(fields[12]), let threads = Int(fields[17]),
            let start = UInt64(fields[19]), let rss = Int64(fields[21])
        else { return nil }
        self.pid = pid
        comm = String(line[line.index(after: open)..<close])
        self.state = state
        userTicks = user
        systemTicks = system
        self.threads = threads
        startTime = start
        rssPages = UInt64(max(0, rss))
    }

    var cpuTicks: UInt64 { userTicks + systemTicks }
}

/// The fields read from `/proc/PID/status`: context switches (of that task only; a process's are
/// the sum over `/proc/PID/task/*/status`) and the CPUs it may run on.
struct ProcStatus: Sendable, Equatable {
    var voluntarySwitches: UInt64 = 0
    var involuntarySwitches: UInt64 = 0
    /// CPUs in `Cpus_allowed_list` (e.g. `0-3,8` → 5); nil when the line is missing.
    var allowedCPUs: Int?

    init(_ text: Substring) {
        for line in text.split(separator: "\n") {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let key = line[..<colon]
            let value = line[line.index(after: colon)...].trimmingSpaces
            switch key {
            case "voluntary_ctxt_switches": voluntarySwitches = UInt64(value) ?? 0
            case "nonvoluntary_ctxt_switches": involuntarySwitches = UInt64(value) ?? 0
            case "Cpus_allowed_list": allowedCPUs = Self.countCPUs(value)
            default: break
            }
        }
    }

    /// The run-queue wait of a `schedstat` line (`run_ns wait_ns timeslices`), in nanoseconds.
    static func schedstatWait(_ line: Substring) -> UInt64? {
        let fields = line.split(separator: " ")
        guard fields.count >= 2 else { return nil }
        return UInt64(fields[1].trimmingSpaces.filter { $0 != "\n" })
    }

    /// Counts a CPU list (`0-3,8`); nil when malformed.
    static func countCPUs(_ list: Substring) -> Int? {
        var count = 0
        for part in list.split(separator: ",") {
            let bounds = part.split(separator: "-")
            guard let low = Int(bounds[0]) else { return nil }
            let high = bounds.count > 1 ? Int(bounds[1]) : low
            guard let high, high >= low, bounds.count <= 2 else { return nil }
            count += high - low + 1
        }
        return count > 0 ? count : nil
    }
}

extension Substring {
    /// Without leading and trailing spaces and tabs.
    var trimmingSpaces: Substring {
        var result = self
        while let first = result.first, first == " " || first == "\t" { result = result.dropFirst() }
        while let last = result.last, last == " " || last == "\t" { result = result.dropLast() }
        return result
    }
}

import LoadResults

#if canImport(Glibc)
import Glibc
#endif

/// Samples one `process:` monitor: each call reads the process(es) from `/proc` and turns the change
/// since the last call into a `ProcessSample`, or a gap.
///
/// - By id: the process is the one with that id *and* start time; once it exited (or its id went to
///   another process) every later interval is a gap (`exited`) — never zeros.
/// - By name: every process of the name is summed; the set is looked up again at every sample, so a
///   restart (old ids gone, new ones there) is followed and reported as a `MonitorEvent`, and that
///   interval's sample is marked `partial` (the old processes' last CPU is lost, the new ones count
///   from their start). No process of the name: a gap (`not-found`, or `exited` after there was one).
///
/// Not thread-safe; owned by one monitor thread. Reads are blocking file reads of a few KiB.
struct ProcessSampler {
    let label: String
    let target: MonitorSource.ProcessTarget
    let root: String
    private let ticksPerSecond: Double
    private let pageSize: UInt64
    private let machineCPUs: Int
    /// The last read, by process id (identity: id and start time).
    private var previous: [Int32: ProcessSnapshot] = [:]
    private var previousTime: UInt64?
    /// A process given by id that exited: gaps from now on.
    private var exited = false
    private var everSeen = false

    init(label: String, target: MonitorSource.ProcessTarget, root: String = "/proc") {
        self.label = label
        self.target = target
        self.root = root
        ticksPerSecond = Double(max(1, sysconf(Int32(_SC_CLK_TCK))))
        pageSize = UInt64(max(1, sysconf(Int32(_SC_PAGESIZE))))
        machineCPUs = max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))))
    }

    /// Reads the processes now and returns the interval since the previous call (`now`: monotonic
    /// nanoseconds; `at`: seconds since the run's start, for events). The first call only records
    /// where the counters stand and returns nil.
    mutating func sample(now: UInt64, at: Double) -> (reading: MonitorReading, events: [MonitorEvent])? {
        let (current, failure) = readCurrent(now: now)
        defer {
            previous = current
            previousTime = now
            if !current.isEmpty { everSeen = true }
        }
        guard let previousTime else { return nil }
        let seconds = Double(now &- previousTime) / 1e9
        var events: [MonitorEvent] = []
        let before = previous.keys.sorted()
        let after = current.keys.sorted()
        let survivors = current.filter { pid, snapshot in previous[pid]?.stat.startTime == snapshot.stat.startTime }
        let gone = previous.filter { pid, snapshot in current[pid]?.stat.startTime != snapshot.stat.startTime }
        let new = current.filter { pid, snapshot in previous[pid]?.stat.startTime != snapshot.stat.startTime }
        if case .name = target {
            if !gone.isEmpty && !new.isEmpty {
                events.append(MonitorEvent(at: at, source: label, kind: .restarted, before: before, after: after))
            } else if !gone.isEmpty {
                events.append(MonitorEvent(at: at, source: label, kind: .exited, before: before, after: after))
            } else if !new.isEmpty {
                events.append(MonitorEvent(at: at, source: label, kind: .appeared, before: before, after: after))
            }
        }
        if case .pid(let pid) = target, !gone.isEmpty {
            events.append(MonitorEvent(at: at, source: label, kind: .exited, before: [pid], after: []))
        }
        if current.isEmpty {
            if let failure { return (.gap(failure), events) }
            switch target {
            case .pid(let pid):
                return (.gap(everSeen || exited ? MonitorGap(.exited, "pid \(pid) exited") : MonitorGap(.notFound, "no process \(pid)")), events)
            case .name(let name):
                return (
                    .gap(everSeen ? MonitorGap(.exited, "no process named \(name) any more") : MonitorGap(.notFound, "no process named \(name)")),
                    events
                )
            }
        }
        guard seconds > 0 else { return (.gap(MonitorGap(.late, "two samples at the same instant")), events) }
        // A process not seen by the previous sample started after it (that sample looked it up and
        // did not find it), so all of its CPU belongs to this interval.
        var userTicks: UInt64 = 0
        var systemTicks: UInt64 = 0
        var voluntary: UInt64 = 0
        var involuntary: UInt64 = 0
        var busiest: UInt64?
        var threadsRead = true
        var waited: UInt64? = 0
        for (pid, snapshot) in current {
            let old = survivors[pid] != nil ? previous[pid] : nil
            userTicks += snapshot.stat.userTicks &- (old?.stat.userTicks ?? 0)
            systemTicks += snapshot.stat.systemTicks &- (old?.stat.systemTicks ?? 0)
            voluntary += snapshot.voluntarySwitches &- min(old?.voluntarySwitches ?? 0, snapshot.voluntarySwitches)
            involuntary += snapshot.involuntarySwitches &- min(old?.involuntarySwitches ?? 0, snapshot.involuntarySwitches)
            if let now = snapshot.runQueueWait, let before = old.map({ $0.runQueueWait }) ?? 0, waited != nil {
                waited! += now &- min(before, now)
            } else {
                waited = nil
            }
            if let threads = snapshot.threadTicks, old == nil || old?.threadTicks != nil {
                for (tid, ticks) in threads {
                    let earlier = old?.threadTicks?[tid] ?? (old == nil ? 0 : nil)
                    guard let earlier, ticks >= earlier else { continue }
                    busiest = max(busiest ?? 0, ticks - earlier)
                }
            } else {
                threadsRead = false
            }
        }
        let threads = current.values.map(\.stat.threads).reduce(0, +)
        let allowed = current.values.compactMap(\.allowedCPUs).max() ?? machineCPUs
        let fds = current.values.map(\.openFDs)
        let ticksPerSecond = self.ticksPerSecond
        let percent = { (ticks: UInt64) -> Double in Double(ticks) / ticksPerSecond / seconds * 100 }
        let first = current[after[0]]!
        let sample = ProcessSample(
            name: first.stat.comm, pids: after, seconds: seconds, cpuPercent: percent(userTicks + systemTicks),
            userPercent: percent(userTicks), systemPercent: percent(systemTicks), usableCores: min(max(1, threads), allowed),
            busiestThreadPercent: threadsRead ? busiest.map(percent) : nil,
            runQueueWaitPercent: waited.map { Double($0) / 1e9 / seconds * 100 },
            rssBytes: current.values.map { $0.stat.rssPages * pageSize }.reduce(0, +), threads: threads,
            openFDs: fds.contains(nil) ? nil : fds.compactMap { $0 }.reduce(0, +),
            voluntarySwitchesPerSecond: Double(voluntary) / seconds, involuntarySwitchesPerSecond: Double(involuntary) / seconds,
            partial: gone.isEmpty && new.isEmpty ? nil : true)
        return (.process(sample), events)
    }

    /// The processes now, by id; and why there are none when the kernel refused.
    private mutating func readCurrent(now: UInt64) -> ([Int32: ProcessSnapshot], MonitorGap?) {
        let pids: [Int32]
        switch target {
        case .pid(let pid):
            if exited { return ([:], nil) }
            pids = [pid]
        case .name(let name):
            pids = ProcessReader.pids(named: name, root: root)
        }
        var current: [Int32: ProcessSnapshot] = [:]
        var refused: String?
        for pid in pids {
            switch ProcessReader.read(pid: pid, root: root, now: now) {
            case .success(let snapshot): current[pid] = snapshot
            case .failure(.unreadable(let path)): refused = path
            case .failure(.gone): break
            }
        }
        if case .pid(let pid) = target {
            if let old = previous[pid], let new = current[pid], old.stat.startTime != new.stat.startTime {
                current = [:]  // the id now belongs to another process
            }
            if everSeen && current.isEmpty { exited = true }
        }
        if current.isEmpty, let refused { return ([:], MonitorGap(.unreadable, "cannot read \(refused) (another user's process?)")) }
        return (current, nil)
    }
}

/// What one monitored process (or every process of one name, summed) used over one interval, read
/// from `/proc`.
///
/// CPU is user + system time over the interval's `seconds`, in percent of one core (200 = two cores
/// busy); `usableCores` is how many cores the process can keep busy at once: its thread count, at
/// most the CPUs it may run on (its affinity mask). A single-threaded server is saturated at 100 %
/// of one core however many the machine has, so `cpuPercentOfUsable` near 100 is the saturation
/// signal; `busiestThreadPercent` shows one hot thread (an event loop) in a process of many.
/// Memory and counts are the values at the interval's end. A process that exited is never a sample
/// of zeros: it is a gap (`MonitorGap`).
public struct ProcessSample: Sendable, Equatable, Codable {
    /// The process's name (`comm`) — of the first process when several are summed.
    public var name: String
    /// The processes summed, ascending.
    public var pids: [Int32]
    /// The span the rates are measured over, in seconds (between the two reads).
    public var seconds: Double
    /// User + system CPU over `seconds`, in percent of one core.
    public var cpuPercent: Double
    public var userPercent: Double
    public var systemPercent: Double
    /// Cores the process can use at once: min(threads, CPUs in its affinity mask), at least 1.
    public var usableCores: Int
    /// The busiest thread's CPU in percent of one core; nil when the threads were not read (more
    /// than `threadReadLimit` threads).
    public var busiestThreadPercent: Double?
    /// Time the threads spent runnable but waiting for a CPU, in percent of the interval, summed over
    /// threads (a single-threaded server at 70 % CPU with 28 % waiting wanted 98 % of its core: the
    /// host's CPUs are oversubscribed). nil when not read (more than `threadReadLimit` threads, or a
    /// kernel without schedstat).
    public var runQueueWaitPercent: Double?
    /// Resident memory at the interval's end, in bytes.
    public var rssBytes: UInt64
    public var threads: Int
    /// Open file descriptors at the interval's end; nil when `/proc/PID/fd` could not be read (another
    /// user's process).
    public var openFDs: Int?
    /// Voluntary and involuntary context switches per second, over all threads.
    public var voluntarySwitchesPerSecond: Double
    public var involuntarySwitchesPerSecond: Double
    /// True when a process of the set started or exited within the interval (a restart): the CPU
    /// counts only what the processes alive at the interval's end used, so it may be low.
    public var partial: Bool?

    /// Most threads read one by one for `busiestThreadPercent`.
    public static let threadReadLimit = 1024

    public init(
        name: String, pids: [Int32], seconds: Double, cpuPercent: Double, userPercent: Double, systemPercent: Double,
        usableCores: Int, busiestThreadPercent: Double?, runQueueWaitPercent: Double? = nil, rssBytes: UInt64, threads: Int, openFDs: Int?,
        voluntarySwitchesPerSecond: Double, involuntarySwitchesPerSecond: Double, partial: Bool? = nil
    ) {
        self.name = name
        self.pids = pids
        self.seconds = seconds
        self.cpuPercent = cpuPercent
        self.userPercent = userPercent
        self.systemPercent = systemPercent
        self.usableCores = max(1, usableCores)
        self.busiestThreadPercent = busiestThreadPercent
        self.runQueueWaitPercent = runQueueWaitPercent
        self.rssBytes = rssBytes
        self.threads = threads
        self.openFDs = openFDs
        self.voluntarySwitchesPerSecond = voluntarySwitchesPerSecond
        self.involuntarySwitchesPerSecond = involuntarySwitchesPerSecond
        self.partial = partial
    }

    /// CPU in percent of the cores the process can use (100 = all of them busy).
    public var cpuPercentOfUsable: Double { cpuPercent / Double(max(1, usableCores)) }

    /// CPU the process ran plus the time it waited for one, in percent of its usable cores: what it
    /// asked of the machine. At or near 100 the process is CPU-bound whether or not it got the CPU.
    public var demandPercentOfUsable: Double { (cpuPercent + (runQueueWaitPercent ?? 0)) / Double(max(1, usableCores)) }

    /// CPU seconds used over the interval.
    public var cpuSeconds: Double { cpuPercent / 100 * seconds }

    enum CodingKeys: String, CodingKey {
        case name, pids, seconds
        case cpuPercent = "cpu_percent"
        case userPercent = "user_percent"
        case systemPercent = "system_percent"
        case usableCores = "usable_cores"
        case busiestThreadPercent = "busiest_thread_percent"
        case runQueueWaitPercent = "run_queue_wait_percent"
        case rssBytes = "rss_bytes"
        case threads
        case openFDs = "open_fds"
        case voluntarySwitchesPerSecond = "voluntary_switches_per_s"
        case involuntarySwitchesPerSecond = "involuntary_switches_per_s"
        case partial
    }
}

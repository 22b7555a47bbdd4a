import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Reads the generator process's own resource use (measurement rule 7): CPU time, resident memory and
/// open file descriptors. Linux: getrusage(2) and /proc/self. Cheap enough to call every interval.
enum ProcessProbe {
    /// User + system CPU time of the whole process, in seconds.
    static func cpuSeconds() -> Double {
        var usage = rusage()
        getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
        func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1_000_000 }
        return seconds(usage.ru_utime) + seconds(usage.ru_stime)
    }

    /// Resident set size now, in bytes (from /proc/self/statm).
    static func residentBytes() -> UInt64 {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
        let fields = text.split(separator: " ")
        guard fields.count > 1, let pages = UInt64(fields[1]) else { return 0 }
        return pages * UInt64(sysconf(Int32(_SC_PAGESIZE)))
    }

    /// Peak resident set size of the process so far, in bytes (VmHWM).
    static func peakResidentBytes() -> UInt64 {
        guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
        for line in text.split(separator: "\n") where line.hasPrefix("VmHWM:") {
            let digits = line.split(separator: " ").dropFirst().first.flatMap { UInt64($0) } ?? 0
            return digits * 1024
        }
        return 0
    }

    /// Number of open file descriptors.
    static func openFileDescriptors() -> Int {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? 0
    }
}

/// The file-descriptor limit: raised to the hard limit at start, so 10,000 sessions fit.
public enum FileDescriptorLimit {
    /// Raises the soft limit to the hard limit; returns the soft limit in force afterwards.
    @discardableResult
    public static func raiseToHardLimit() -> Int {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 1024 }
        if limit.rlim_cur < limit.rlim_max {
            limit.rlim_cur = limit.rlim_max
            _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
            _ = getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        }
        return Int(clamping: limit.rlim_cur)
    }
}

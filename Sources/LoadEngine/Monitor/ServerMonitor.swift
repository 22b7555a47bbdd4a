import Dispatch
import Foundation
import LoadResults
import NIOCore
import Synchronization

/// Watches the server under test beside the load: every `--monitor` source is sampled on the run's
/// interval grid, each on a thread of its own, and the results come back as one `MonitorInterval`
/// per interval of the run.
///
/// Contract:
/// - `start(origin:)` takes each source's first reading (where the counters stand) and starts its
///   thread; source *i*'s sample for interval *k* is taken at `origin + k × interval`. Nothing runs
///   on an event loop: `/proc` reads and HTTP scrapes block only their own thread, so a slow or
///   hostile source delays only itself (and a scrape is bounded by `ScrapeLimits`).
/// - `take(now:)` never blocks: it returns the intervals whose every source has reported, or whose
///   end is more than `grace` ago (a missing source is then a `late` gap). Intervals come in order,
///   each once.
/// - `finish(at:)` has each source take a last sample for the partial interval ending `at` (when
///   the run did not end on the grid), stops the threads (waiting at most `grace`) and returns every
///   interval not yet taken, the last one ending at `at`.
/// - `takeWarnings()` returns at most one warning per source in the whole run: its first gap or its
///   first dropped series. Every later gap is still marked in its interval.
/// - Memory: the intervals not yet taken (one per source per interval) and each source's sampler
///   state (bounded by `ScrapeLimits`).
public final class ServerMonitor: Sendable {
    public let sources: [MonitorSource]
    /// The grid's step.
    public let interval: Duration
    public let limits: ScrapeLimits
    /// How long after an interval's end a source may still report for it.
    public var grace: Duration { .milliseconds(Int64(limits.timeout * 1000) + 500) }

    private struct Board: ~Copyable {
        var origin: NIODeadline?
        /// Readings by interval number (1-based) and source label.
        var readings: [Int: [String: MonitorReading]] = [:]
        var events: [Int: [MonitorEvent]] = [:]
        /// The highest interval each source has reported.
        var reported: [String: Int] = [:]
        /// The next interval `take` returns.
        var next = 1
        /// Set by `finish`: the last interval and where it ends (seconds since the origin).
        var last: (number: Int, end: Double)?
        var stopped = false
        var running = 0
        var warned: Set<String> = []
        var warnings: [String] = []
    }

    private let board = Mutex(Board())
    private let wakeups: [DispatchSemaphore]

    public init(sources: [MonitorSource], interval: Duration, limits: ScrapeLimits = .standard) {
        self.sources = sources
        self.interval = interval
        self.limits = limits
        wakeups = sources.map { _ in DispatchSemaphore(value: 0) }
    }

    private var intervalSeconds: Double { Double(interval.components.seconds) + Double(interval.components.attoseconds) / 1e18 }

    /// Starts sampling on the grid `origin + k × interval` (`origin`: the run's start).
    public func start(origin: NIODeadline) {
        board.withLock {
            $0.origin = origin
            $0.running = sources.count
        }
        for (index, source) in sources.enumerated() {
            let thread = Thread { [self] in self.runSource(source, wakeup: self.wakeups[index], origin: origin) }
            thread.name = "xmppload-monitor-\(source.label)"
            thread.start()
        }
    }

    /// The intervals complete by `now` (see the type's contract).
    public func take(now: NIODeadline = .now()) -> [MonitorInterval] {
        let step = intervalSeconds
        let graceSeconds = Double(grace.components.seconds) + Double(grace.components.attoseconds) / 1e18
        return board.withLock { board in
            guard let origin = board.origin else { return [] }
            let elapsed = Double((now - origin).nanoseconds) / 1e9
            var done: [MonitorInterval] = []
            while true {
                let number = board.next
                if let last = board.last, number > last.number { break }
                let end = board.last.map { number == $0.number ? $0.end : Double(number) * step } ?? Double(number) * step
                let everyone = sources.allSatisfy { (board.reported[$0.label] ?? 0) >= number }
                guard everyone || elapsed >= end + graceSeconds else { break }
                done.append(Self.assemble(&board, number: number, start: Double(number - 1) * step, end: end, sources: sources))
            }
            return done
        }
    }

    /// Warnings since the last call (at most one per source over the run).
    public func takeWarnings() -> [String] {
        board.withLock { board in
            defer { board.warnings = [] }
            return board.warnings
        }
    }

    /// Ends the monitoring at `end` (see the type's contract).
    public func finish(at end: NIODeadline = .now()) async -> [MonitorInterval] {
        let step = intervalSeconds
        let started = board.withLock { board -> Bool in
            guard let origin = board.origin else { return false }
            let seconds = max(0, Double((end - origin).nanoseconds) / 1e9)
            let number = max(Int((seconds / step).rounded(.up)), 1)
            // Every interval up to `end` already taken: nothing more to sample.
            board.last = number < board.next ? (board.next - 1, Double(board.next - 1) * step) : (number, seconds)
            board.stopped = true
            return true
        }
        guard started else { return [] }
        for wakeup in wakeups { wakeup.signal() }
        let deadline = NIODeadline.now() + TimeAmount(grace)
        while board.withLock({ $0.running > 0 }) && NIODeadline.now() < deadline {
            try? await Task.sleep(for: .milliseconds(20))
        }
        return board.withLock { board in
            var done: [MonitorInterval] = []
            guard let last = board.last else { return done }
            while board.next <= last.number {
                let number = board.next
                let end = number == last.number ? last.end : Double(number) * step
                done.append(Self.assemble(&board, number: number, start: Double(number - 1) * step, end: end, sources: sources))
            }
            return done
        }
    }

    /// Takes interval `number` off the board; a source without a reading is a `late` gap.
    private static func assemble(_ board: inout Board, number: Int, start: Double, end: Double, sources: [MonitorSource]) -> MonitorInterval {
        var readings = board.readings.removeValue(forKey: number) ?? [:]
        for source in sources where readings[source.label] == nil {
            readings[source.label] = .gap(MonitorGap(.late, "no sample in time (the monitor was busy with an earlier one)"))
        }
        let events = board.events.removeValue(forKey: number)
        board.next = number + 1
        return MonitorInterval(start: start, end: max(start, end), sources: readings, events: events)
    }

    // MARK: - A source's thread

    private func runSource(_ source: MonitorSource, wakeup: DispatchSemaphore, origin: NIODeadline) {
        defer { board.withLock { $0.running -= 1 } }
        var sampler = SourceSampler(source: source, limits: limits)
        _ = sampler.sample(at: 0)  // where the counters stand
        let step = Int64(intervalSeconds * 1e9)
        var number = 1
        while true {
            let due = origin + .nanoseconds(step * Int64(number))
            let stop = waitUntil(due, wakeup: wakeup)
            if stop {
                let last = board.withLock { $0.last?.number } ?? number
                // A stop that came after this interval's tick: take it first, then the last one.
                if number <= last {
                    let at = Double((NIODeadline.now() - origin).nanoseconds) / 1e9
                    publish(source, number: last, sampler.sample(at: at))
                }
                return
            }
            let at = Double((NIODeadline.now() - origin).nanoseconds) / 1e9
            publish(source, number: number, sampler.sample(at: at))
            // Ticks missed while sampling (a slow scrape) are skipped: those intervals are `late`.
            let now = NIODeadline.now()
            number = max(number + 1, Int((now - origin).nanoseconds / max(step, 1)) + 1)
        }
    }

    /// Sleeps until `due`; true when woken to stop.
    private func waitUntil(_ due: NIODeadline, wakeup: DispatchSemaphore) -> Bool {
        while true {
            // A tick that is due is taken even when a stop came meanwhile (it belongs to the run).
            let remaining = (due - NIODeadline.now()).nanoseconds
            if remaining <= 0 { return false }
            if board.withLock({ $0.stopped }) { return true }
            _ = wakeup.wait(timeout: .now() + .nanoseconds(Int(remaining)))
        }
    }

    private func publish(_ source: MonitorSource, number: Int, _ result: (reading: MonitorReading, events: [MonitorEvent])?) {
        guard let result else { return }
        board.withLock { board in
            guard number >= board.next else { return }  // already assembled as late
            board.readings[number, default: [:]][source.label] = result.reading
            if !result.events.isEmpty { board.events[number, default: []] += result.events }
            board.reported[source.label] = max(board.reported[source.label] ?? 0, number)
            guard !board.warned.contains(source.label) else { return }
            if let gap = result.reading.gap {
                board.warned.insert(source.label)
                board.warnings.append(
                    "monitor \(source.label): \(gap.detail) — its intervals are marked as gaps until it answers (warned once)")
            } else if let dropped = result.reading.series?.dropped {
                board.warned.insert(source.label)
                board.warnings.append(
                    "monitor \(source.label): \(dropped) selected series not kept (at most \(limits.maxKeptSeries) series, \(limits.maxSeriesPerFamily) per family); narrow keep= (warned once)"
                )
            }
        }
    }
}

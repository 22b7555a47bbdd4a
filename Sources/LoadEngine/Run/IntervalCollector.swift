import LoadResults
import NIOCore

/// Gathers one snapshot per interval from every event loop, merges them, adds generator health and
/// the message ledger's findings, and keeps the run's running total.
///
/// Runs on the orchestrating task; each loop's recorder is read on its own loop (`submit`), so no
/// locks are involved anywhere. Sessions-online and connecting gauges are read from the loop contexts
/// at the same moment.
struct IntervalCollector {
    private let contexts: [NIOLoopBound<LoopContext>]
    private let loops: [any EventLoop]
    private let clockOrigin: NIODeadline
    private var lastEnd: Double = 0
    private var lastCPU: Double
    private(set) var cumulative = IntervalSnapshot()
    /// Generator health per interval (small values; the snapshots themselves are not kept).
    private(set) var healths: [GeneratorHealth] = []
    private(set) var ledger = MessageLedger()
    /// When the lost messages were sent (for the outage windows in the summary).
    private(set) var lossClock = MessageLossClock()
    private(set) var peakConcurrent: Int64 = 0

    init(contexts: [NIOLoopBound<LoopContext>], loops: [any EventLoop], clockOrigin: NIODeadline, cpuAtStart: Double) {
        self.contexts = contexts
        self.loops = loops
        self.clockOrigin = clockOrigin
        self.lastCPU = cpuAtStart
    }

    /// Takes the interval ending now.
    mutating func collect(runStart: NIODeadline, peakLive: Int) async throws -> IntervalSnapshot {
        let now = NIODeadline.now()
        let end = max(0, Double((now - runStart).nanoseconds) / 1e9)
        let start = lastEnd
        var merged = IntervalSnapshot(start: start, end: end)
        for (index, loop) in loops.enumerated() {
            let bound = contexts[index]
            let snapshot = try await loop.submit { () -> IntervalSnapshot in
                let context = bound.value
                context.recorder.setGauge(.online, Int64(context.gauges.online))
                context.recorder.setGauge(.connecting, Int64(context.gauges.connecting))
                context.recorder.setGauge(.live, Int64(context.liveSessionCount))
                return context.recorder.takeSnapshot(start: start, end: end)
            }.get()
            merged.merge(snapshot)
        }
        merged.start = start
        merged.end = end
        peakConcurrent = max(peakConcurrent, Int64(peakLive))

        let cpu = ProcessProbe.cpuSeconds()
        let wall = max(end - start, 0.001)
        merged.health = GeneratorHealth(
            cpuPercent: (cpu - lastCPU) / wall * 100, cpuSeconds: cpu - lastCPU,
            rssBytes: ProcessProbe.residentBytes(), openFileDescriptors: ProcessProbe.openFileDescriptors(),
            loopLagP99Milliseconds: merged.loopLag.milliseconds(atPercentile: 99),
            loopLagMaxMilliseconds: Double(merged.loopLag.maxMicroseconds) / 1000, cores: System.coreCount)
        merged.health?.peakRSSBytes = ProcessProbe.peakResidentBytes()  // VmHWM, for the summary's peak
        lastCPU = cpu
        merged.ledger = ledger.apply(merged.messageEvents)
        lossClock.record(merged.messageEvents, start: start, end: end)
        merged.messageEvents = MessageEvents()
        lastEnd = end
        cumulative.accumulate(merged)
        if let health = merged.health { healths.append(health) }
        return merged
    }

    /// The run is over: messages still missing are lost.
    mutating func finishLedger() -> LedgerCounts {
        let final = ledger.finish()
        cumulative.ledger.lost += final.lost
        return ledger.totals
    }
}

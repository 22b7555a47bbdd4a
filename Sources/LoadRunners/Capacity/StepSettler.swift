import Foundation
import LoadEngine
import LoadResults
import Synchronization

/// Waits between `capacity` steps until the server has settled (`StepSettling`): it looks about
/// once a second at the monitored server (`ServerIdleProbe`, the run's first process monitor, else
/// its first monitor) and at how fast a new connection is answered (`ServerAnswerProbe`, plain TCP
/// endpoints), and the next step starts when both are back near the levels measured before the
/// first step — or after `StepSettling.Rules.timeoutSeconds` anyway, recorded as not settled.
///
/// Every look blocks (a `/proc` read, a scrape, a connection with a time limit) and runs on a thread
/// of its own, never on the concurrency pool or an event loop. The probes' state is behind a `Mutex`;
/// one look runs at a time.
public final class StepSettler: Sendable {
    private struct Probes {
        var server: ServerIdleProbe?
    }

    private let probes: Mutex<Probes>
    private let answer: ServerAnswerProbe?
    private let monitored: Bool
    public let rules: StepSettling.Rules
    private let idle = Mutex<(cpu: Double?, connections: Double?, answer: Double?)>((nil, nil, nil))

    public init(configuration: RunConfiguration, rules: StepSettling.Rules = StepSettling.Rules()) {
        let source = configuration.monitors.first { $0.kind == "process" } ?? configuration.monitors.first
        probes = Mutex(Probes(server: source.map { ServerIdleProbe(source: $0) }))
        monitored = source != nil
        answer = ServerAnswerProbe(configuration: configuration)
        self.rules = rules
    }

    /// Looks of the idle level before the first step (the first server look only primes its CPU).
    public static let idleLooks = 4

    /// Measures the idle level (medians of `idleLooks` looks a second apart) and returns the first
    /// step's start state.
    public func measureIdle() async -> StepStartState {
        let began = Date()
        _ = await look()
        var cpu: [Double] = []
        var connections: [Double] = []
        var answers: [Double] = []
        for _ in 0..<Self.idleLooks {
            try? await Task.sleep(for: .seconds(1))
            let seen = await look()
            if let value = seen.cpu { cpu.append(value) }
            if let value = seen.connections { connections.append(value) }
            if let value = seen.answer { answers.append(value) }
        }
        let level = (StepSettling.idleLevel(cpu), StepSettling.idleLevel(connections), StepSettling.idleLevel(answers))
        idle.withLock { $0 = (level.0, level.1, level.2) }
        var parts = ["before the first step"]
        if let value = level.0 { parts.append(String(format: "server CPU %.1f %% of a core", value)) }
        if let value = level.1 { parts.append(String(format: "%.0f connections", value)) }
        if let value = level.2 { parts.append(String(format: "a new connection answered in %.1f ms", value)) }
        return StepStartState(
            settled: true, waitedSeconds: Date().timeIntervalSince(began), generatorSessions: 0, serverCPUPercent: level.0,
            idleCPUPercent: level.0, serverConnections: level.1, answerMilliseconds: level.2, idleAnswerMilliseconds: level.2,
            reason: "idle level measured " + parts.joined(separator: ", "))
    }

    /// Waits until the server settled (or the rules' time limit passed) and returns the state the
    /// next step starts in. `stopped` ends the wait early (the search was interrupted).
    public func settle(stopped: @Sendable () -> Bool) async -> StepStartState {
        let level = idle.withLock { $0 }
        var settling = StepSettling(
            monitored: monitored, idleCPUPercent: level.cpu, idleConnections: level.connections, idleAnswerMilliseconds: level.answer,
            rules: rules)
        let began = Date()
        _ = await look(answer: false)  // the server's CPU since the step ran is no idle reading
        while true {
            try? await Task.sleep(for: .seconds(1))
            let seen = await look()
            let observation = StepSettling.Observation(
                at: Date().timeIntervalSince(began), generatorSessions: 0, serverCPUPercent: seen.cpu, serverConnections: seen.connections,
                answerMilliseconds: seen.answer)
            if case .start(let state) = settling.observe(observation) { return state }
            if stopped() {
                return StepStartState(
                    settled: false, waitedSeconds: observation.at, generatorSessions: 0, serverCPUPercent: seen.cpu,
                    idleCPUPercent: level.cpu, serverConnections: seen.connections, answerMilliseconds: seen.answer,
                    idleAnswerMilliseconds: level.answer, reason: "the search was stopped while the server settled")
            }
        }
    }

    /// One look at the server and at a new connection's answer, on a thread of its own.
    private func look(answer probeAnswer: Bool = true) async -> (cpu: Double?, connections: Double?, answer: Double?) {
        await withCheckedContinuation { continuation in
            Thread { [self] in
                let server = probes.withLock { probes -> (cpuPercent: Double?, connections: Double?) in
                    guard probes.server != nil else { return (nil, nil) }
                    return probes.server!.look()
                }
                let answered = probeAnswer ? answer?.look() : nil
                continuation.resume(returning: (server.cpuPercent, server.connections, answered))
            }.start()
        }
    }
}

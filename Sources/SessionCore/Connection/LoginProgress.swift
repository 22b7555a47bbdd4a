// A login in progress: its LoginMachine and the time spent in each phase, and what a login records.
import LoadResults
import XMPPCore

/// A login in progress: the `LoginMachine` and how long each phase took so far. Exists only while
/// the session logs in (`SessionMachine.Stage.loggingIn`; an online session pays one enum tag, not the
/// login's ~350 bytes); the phases are recorded once it succeeded — or, when it failed, those it
/// completed (`failureEffects`).
final class LoginProgress {
    var machine: LoginMachine
    /// When the current phase began.
    private(set) var phaseStart: SessionInstant
    private(set) var currentPhase: LoginPhase?
    /// Nanoseconds per phase, indexed like `LoginPhase.allCases` (a phase entered twice adds up).
    private(set) var phaseNanos = [UInt64](repeating: 0, count: LoginPhase.allCases.count)
    /// Bit i set: the login went through `LoginPhase.allCases[i]` (recorded even if it took 0 ns).
    private(set) var phasesVisited: UInt32 = 0
    /// The account was registered on a stream now closed; the next connection authenticates.
    var awaitsFreshConnection = false

    init(machine: LoginMachine, now: SessionInstant) {
        self.machine = machine
        phaseStart = now
    }

    /// Ends the current phase at `now` and begins `next` (nil: none).
    func enter(_ next: LoginPhase?, now: SessionInstant) {
        if let currentPhase { record(currentPhase, nanos: now.nanoseconds(since: phaseStart)) }
        currentPhase = next
        phaseStart = now
    }

    func record(_ phase: LoginPhase, nanos: UInt64) {
        guard let index = LoginPhase.allCases.firstIndex(of: phase) else { return }
        phaseNanos[index] &+= nanos
        phasesVisited |= 1 << index
    }

    /// Appends one `login.<phase>` latency per phase the login went through (`metrics.phases`), also
    /// for `node` (without a service latency: a phase's equals its corrected one).
    func appendPhases(_ metrics: FixedMetrics, node: ServerNode?, to actions: inout [SessionAction]) {
        for (index, nanos) in phaseNanos.enumerated() where phasesVisited & (1 << index) != 0 {
            actions.append(.record(.latency(metrics.phases[index], corrected: nanos, service: nanos, node: node, keepServiceForNode: false)))
        }
    }
}

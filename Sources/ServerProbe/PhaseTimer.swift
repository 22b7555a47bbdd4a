// Times the probe's login phases.

import LoadEngine
import NIOCore
import XMPPCore

/// Times the login's phases as the machine enters them (monotonic clock, ms).
struct PhaseTimer {
    private(set) var phases: [ProbeReport.PhaseTime]
    private var current: (phase: String, since: NIODeadline)?

    init(connectMilliseconds: Double) {
        phases = [ProbeReport.PhaseTime(phase: LoginPhase.connect.rawValue, milliseconds: connectMilliseconds)]
    }

    /// `phase` begins now; the one before it, if any, ends now.
    mutating func enter(_ phase: String) {
        end()
        current = (phase, .now())
    }

    mutating func end() {
        if let current {
            phases.append(ProbeReport.PhaseTime(phase: current.phase, milliseconds: Self.milliseconds(from: current.since, to: .now())))
        }
        current = nil
    }

    static func milliseconds(from start: NIODeadline, to end: NIODeadline) -> Double {
        Double((end - start).nanoseconds) / 1e6
    }
}

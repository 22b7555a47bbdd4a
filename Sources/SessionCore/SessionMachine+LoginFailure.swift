// What a failed login leaves in the results: its phase, the phases it completed, and when a session rests.
import LoadResults
import XMPPCore

extension SessionMachine {
    /// The login phase of a session in `stage`: `connect` while connecting, the login's current phase
    /// while logging in (`connect` before its first phase began); nil otherwise.
    static func loginPhase(of stage: Stage) -> LoginPhase? {
        switch stage {
        case .connecting: return .connect
        case .loggingIn(let progress): return progress.currentPhase ?? .connect
        case .idle, .running, .loggingOut, .awaitingReconnect, .ended: return nil
        }
    }

    /// The login phase the session is in now (`loginPhase(of:)` of its stage); nil when not logging in.
    public var loginPhase: LoginPhase? { Self.loginPhase(of: stage) }

    /// A login failed with `error` while the session was in `stage`: counts the failure under its phase
    /// and kind (`login_failures` in summary.json) and records the latencies of the phases the login did
    /// complete into the usual `login.<phase>` histograms — those phases ended as they would have in a
    /// login that succeeded; the phase it failed in and `login` itself are not recorded. Returns the
    /// phase; nil (nothing recorded) when the session was not connecting or logging in.
    func loginFailed(_ error: SessionError, in stage: Stage) -> LoginPhase? {
        guard let phase = Self.loginPhase(of: stage) else { return nil }
        host.recorder.recordLoginFailure(phase: phase.rawValue, kind: error.kind)
        if case .loggingIn(let progress) = stage {
            for (index, nanos) in progress.phaseNanos.enumerated() where progress.phasesVisited & (1 << index) != 0 {
                host.recorder.recordLatency(
                    settings.metrics.phases[index], correctedNanoseconds: nanos, serviceNanoseconds: nanos,
                    node: identity.node, keepServiceForNode: false)
            }
        }
        return phase
    }

    /// When the session's clock starts: its arrival's intended start (the origin of its login latency).
    public var sessionStart: SessionInstant { intendedStart }

    /// True while the session rests for a while: logged in with nothing to do but stay online, or in a
    /// think time that lasts at least `minimum` more. The engine lets go of per-session buffers then.
    public func isResting(atLeast minimum: Duration) -> Bool {
        guard case .running = stage else { return false }
        switch waiting {
        case .stayOnline:
            return true
        case .timer:
            if case .think(let due) = wake { return due >= now + minimum }
            return false
        default:
            return false
        }
    }
}

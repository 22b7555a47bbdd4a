/// Where a session stands at a point of a profile, for the order checks `ProfileDecoder` makes while
/// it walks the steps: a stanza step needs `loggedIn`; nothing runs once the session has `ended`.
///
/// This mirrors what the engine does: `logout` ends the session; `stay_online` and
/// `repeat: {forever: true}` last until the load stops, and then the session logs out.
enum SessionFlow: Equatable {
    case loggedOut
    case loggedIn
    /// The session ends here; `by` names the step that ends it (`logout`, `stay_online`, `repeat`).
    case ended(by: String)

    var hasEnded: Bool {
        if case .ended = self { return true }
        return false
    }

    /// Where the session stands after a `choose`, given where each branch left it: branches that end
    /// the session do not continue; of the others, one that may still be logged out makes the whole
    /// choice "maybe logged out", which the order check treats as logged out.
    static func merging(_ branches: [SessionFlow], from start: SessionFlow) -> SessionFlow {
        let continuing = branches.filter { !$0.hasEnded }
        guard !branches.isEmpty else { return start }
        guard !continuing.isEmpty else { return branches[0] }
        return continuing.contains(.loggedOut) ? .loggedOut : .loggedIn
    }

    /// The problem to report at the first step after the session ended `by` a step.
    static func unreachable(after ending: String) -> (message: String, hint: String) {
        switch ending {
        case "logout":
            return (
                "this step never runs: the session ends at 'logout'",
                "move it before the logout (with `repeat: forever` at the top, a closed-model user starts a new session after it)"
            )
        case "stay_online":
            return (
                "this step never runs: 'stay_online' lasts until the load stops, then the session logs out",
                "move it before stay_online"
            )
        default:
            return (
                "this step never runs: a repeat with 'forever: true' lasts until the load stops, then the session logs out",
                "give the repeat a count or a duration"
            )
        }
    }
}

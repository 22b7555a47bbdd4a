// Multi-user chat as a session feature: joining, nick changes, leaving, the room's occupancy.
import LoadProfile
import LoadResults
import XMPPCore

/// The session's MUC room (XEP-0045): the `muc_join`, `muc_nick`, `muc_send` and `muc_leave` steps,
/// what answers a join (self-presence, a locked room to retry, an instant room to unlock), and the
/// occupants the room announces (for the fan-out's expected receipts). The room lives in a box
/// (`RoomMembership`, with its join-retry timer) only while the session is in one: most sessions
/// never are.
struct MUCFeature {
    private(set) var room: RoomMembership?
    /// A join (or nick change) waits for its answer.
    private var joining = false

    /// What starting a MUC step does.
    enum Start: Equatable {
        /// The step's outcome.
        case outcome(StepOutcome)
        /// Send a stamped groupchat message to the room (`MessagingFeature.send`), then complete.
        case groupchat(room: String, occupants: Int, body: MessageBody)
    }

    mutating func start(_ action: MUCAction, timeout: Duration, tools: inout StepTools, _ s: inout SessionShared) -> Start {
        if case .join(let roomTemplate, let service, let nick, let history) = action {
            let joining = RoomMembership(
                room: tools.render(roomTemplate, s), service: service.map { tools.render($0, s) } ?? "conference.\(s.settings.domain)",
                nick: nick.map { tools.render($0, s) } ?? s.identity.username)
            room = joining
            self.joining = true
            s.send(joining.joinPresence(history: history))
            return .outcome(.waiting(timeout: timeout))
        }
        guard let current = room else { return .outcome(.failed(.mucNotJoined)) }
        switch action {
        case .send(let body, _, _):
            return .groupchat(room: current.jid, occupants: current.occupants.count, body: body)
        case .changeNick(let template):
            s.send(current.changeNick(to: tools.render(template, s)))
            joining = true
            return .outcome(.waiting(timeout: timeout))
        case .leave:
            s.send(current.leavePresence())
            room = nil
            return .outcome(.completed(measured: false))
        case .join:
            return .outcome(.failed(.mucNotJoined))
        }
    }

    /// What an arriving stanza does to the join (or nick change) waiting for its answer.
    mutating func answer(_ stanza: XMLElement, _ s: inout SessionShared) -> StepOutcome? {
        guard joining, let room, let answer = room.joinAnswer(stanza) else { return nil }
        switch answer {
        case .joined:
            joining = false
            return .completed(measured: true)
        case .unlock(let configuration):
            s.send(configuration)
            return nil
        case .retryLater:
            room.retryAt = s.now + RoomMembership.joinRetryDelay
            return nil
        case .failed(let error):
            joining = false
            room.retryAt = nil
            return .failed(error)
        }
    }

    /// The precise timer: a locked room's next join.
    var wake: SessionInstant? { room?.retryAt }

    /// The retry is due: join the locked room again.
    func retryDue(_ s: inout SessionShared) {
        guard let room, let due = room.retryAt, due <= s.now else { return }
        room.retryAt = nil
        s.send(room.joinPresence())
    }

    /// Keeps the occupant list as the room announces it.
    func observe(_ stanza: XMLElement) { room?.observe(stanza) }

    /// The join's timeout came: the step fails.
    mutating func timedOut(step name: String) -> StepOutcome {
        joining = false
        room?.retryAt = nil
        return .failed(.stepTimeout(step: name))
    }

    /// A fresh login: the lost stream's room is gone.
    mutating func forget() {
        room = nil
        joining = false
    }
}

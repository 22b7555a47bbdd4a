import Testing

@testable import SessionCore

/// What an idle session's machine costs inline (bytes): the budget docs/ARCHITECTURE.md states, so a
/// field added to the context or a part is a decision, not an accident. The boxes (login, stream
/// management, room, probe) are one pointer each.
@Suite struct MachineSizeTests {
    @Test func theMachineStaysWithinItsInlineBudget() {
        let size = MemoryLayout<SessionMachine>.size
        #expect(size <= 480, "SessionMachine is \(size) bytes inline")
        // Every feature inline, the shared part and the router's two armed instants: nothing else.
        let features =
            MemoryLayout<ConnectionFeature>.size + MemoryLayout<LoginFeature>.size + MemoryLayout<ReconnectFeature>.size
            + MemoryLayout<KeepAliveFeature>.size + MemoryLayout<ProgramFeature>.size + MemoryLayout<PresenceFeature>.size
            + MemoryLayout<RosterFeature>.size + MemoryLayout<QueryFeature>.size + MemoryLayout<MessagingFeature>.size
            + MemoryLayout<MUCFeature>.size + MemoryLayout<SessionShared>.size + 4 * 8
        #expect(features <= size + 96, "features \(features) B for a machine of \(size) B")
    }
}

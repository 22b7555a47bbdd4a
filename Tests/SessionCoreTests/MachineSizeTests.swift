import Testing

@testable import SessionCore

/// What an idle session's machine costs inline (bytes): the budget docs/ARCHITECTURE.md states, so a
/// field added to the context or a part is a decision, not an accident. The boxes (login, stream
/// management, room, probe) are one pointer each.
@Suite struct MachineSizeTests {
    @Test func theMachineStaysWithinItsInlineBudget() {
        let size = MemoryLayout<SessionMachine>.size
        #expect(size <= 480, "SessionMachine is \(size) bytes inline")
        #expect(MemoryLayout<ConnectionLife>.size + MemoryLayout<StepRunner>.size + MemoryLayout<SessionContext>.size <= size + 32)
    }
}

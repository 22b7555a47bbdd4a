import LoadResults
import Testing

@testable import SessionCore

/// `to: next` and `${prev_index}`/`${next_index}` ring over the whole run's accounts, so in a
/// `--segment` run the last account of one generator's block messages the next generator's first.
@Suite struct WholeRunRingTests {
    static func settings(block: ClosedRange<Int>, run: ClosedRange<Int>?) -> SessionSettings {
        var registry = MetricRegistry()
        return SessionSettings(
            domain: "load.test", accounts: block, runAccounts: run, password: "secret", runID: "run-1",
            metrics: FixedMetrics(registry: &registry))
    }

    @Test(
        arguments: [
            // (this generator's block, the whole run's accounts, an account, the next account's JID)
            (4...6, 1...9, 4, "user5@load.test"),
            (4...6, 1...9, 6, "user7@load.test"),  // the next generator's first account
            (7...9, 1...9, 9, "user1@load.test"),  // the run's last account is followed by its first
            (1...10, nil, 10, "user1@load.test"),  // one generator: its own accounts
        ] as [(ClosedRange<Int>, ClosedRange<Int>?, Int, String)])
    func theNextAccountSpansTheRun(block: ClosedRange<Int>, run: ClosedRange<Int>?, account: Int, next: String) {
        let settings = Self.settings(block: block, run: run)
        #expect(settings.bareJID(slot: settings.nextSlot(after: account)) == next)
    }

    @Test func aMessageToNextAndTheRingVariablesCrossIntoTheNextGeneratorsBlock() throws {
        let yaml = """
            name: ring
            login: {sasl: PLAIN, tls: none, resource: r1}
            steps:
              - login
              - message: {to: next, body: "from ${index} to ${next_index} after ${prev_index}"}
              - logout
            """
        // Account 6, the last of this generator's block 4...6 of a run over 1...9.
        var driver = try MachineDriver(profile: yaml, slot: 2, accounts: 4...6, runAccounts: 1...9)
        try driver.logIn()
        let message = try #require(driver.sent().first { $0.name == "message" })
        #expect(message.attribute("to") == "user7@load.test")
        #expect(message.firstChild(named: "body")?.text == "from 6 to 7 after 5")
    }
}

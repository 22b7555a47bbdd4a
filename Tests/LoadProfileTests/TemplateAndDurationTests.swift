import Testing

@testable import LoadProfile

@Suite struct TemplateAndDurationTests {
    static let values = ["index": "137", "domain": "load.test", "user": "user137"]

    @Test(arguments: [
        ("user${index}@${domain}", "user137@load.test"),
        ("room-${index/50}", "room-2"),
        ("shard${index%4}", "shard1"),
        ("cost $$5", "cost $5"),
        ("${ user }", "user137"),
        ("plain", "plain"),
        ("${missing}!", "!"),
    ])
    func renders(text: String, expected: String) throws {
        #expect(try Template(parsing: text).render { Self.values[$0] } == expected)
    }

    @Test(arguments: ["${", "$x", "${a b}", "${index/0}", "${index%-2}", "${}"])
    func rejectsMalformed(text: String) {
        #expect(throws: TemplateError.self) { try Template(parsing: text) }
    }

    @Test func listsVariables() throws {
        #expect(try Template(parsing: "${a}-${b/2}-${a}").variables == ["a", "b", "a"])
    }

    @Test(arguments: [
        ("500ms", Duration.milliseconds(500)), ("90s", .seconds(90)), ("2m", .seconds(120)),
        ("1h30m", .seconds(5400)), ("1.5s", .milliseconds(1500)), ("12", .seconds(12)), ("0", .zero), ("1d", .seconds(86400)),
    ])
    func parsesDurations(text: String, expected: Duration) {
        #expect(DurationText.parse(text) == expected)
    }

    @Test(arguments: ["", "-5s", "5x", "s", "1h30", "abc"])
    func rejectsBadDurations(text: String) {
        #expect(DurationText.parse(text) == nil)
    }

    @Test func formatsDurations() {
        #expect(DurationText.format(.seconds(90)) == "1m30s")
        #expect(DurationText.format(.milliseconds(250)) == "250ms")
        #expect(DurationText.format(.seconds(3600)) == "1h")
    }
}

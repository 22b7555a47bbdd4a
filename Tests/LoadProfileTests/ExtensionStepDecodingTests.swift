import Testing

@testable import LoadProfile

/// The feature steps in the profile language (`FeatureStepKind.rows`): `carbons`, `csi`, `mam`, `pep`
/// — their forms, their metric names, and every mistake reported where it is. One decoder serves
/// every row by its form.
@Suite struct ExtensionStepDecodingTests {
    static func step(_ line: String) throws -> Step {
        let definition = try ProfileLoader.load(yaml: "name: e\nsteps:\n  - login\n  - \(line)\n", file: "e.yaml")
        // The step after login (the loader appends the implicit logout).
        let steps = try #require(definition.profiles.first?.profile.steps)
        return try #require(steps.count > 1 ? steps[1] : nil)
    }

    @Test(arguments: [
        ("carbons", FeatureStep(feature: "carbons", operation: "enable"), "carbons.enable"),
        ("carbons: enable", FeatureStep(feature: "carbons", operation: "enable"), "carbons.enable"),
        ("carbons: disable", FeatureStep(feature: "carbons", operation: "disable"), "carbons.disable"),
        ("csi: inactive", FeatureStep(feature: "csi", operation: "inactive"), "csi.inactive"),
        ("csi: active", FeatureStep(feature: "csi", operation: "active"), "csi.active"),
        ("mam", FeatureStep(feature: "mam", operation: "query", settings: ["max": .number(20)]), "mam.query"),
        ("mam: {max: 50}", FeatureStep(feature: "mam", operation: "query", settings: ["max": .number(50)]), "mam.query"),
        (
            "pep", FeatureStep(feature: "pep", operation: "publish", settings: ["node": .text("urn:xmppload:load:0"), "payload_size": .number(128)]),
            "pep.publish"
        ),
        (
            "pep: {node: 'urn:example:mood', payload_size: 0}",
            FeatureStep(feature: "pep", operation: "publish", settings: ["node": .text("urn:example:mood"), "payload_size": .number(0)]),
            "pep.publish"
        ),
    ])
    func eachFormDecodesWithItsMetric(line: String, expected: FeatureStep, metric: String) throws {
        let step = try Self.step(line)
        #expect(step.action == .feature(expected))
        #expect(step.name == metric)
    }

    @Test func aMAMFilterIsATemplate() throws {
        let step = try Self.step("mam: {max: 5, with: 'user${index}@${domain}'}")
        guard case .feature(let decoded) = step.action, let with = decoded.template("with") else {
            Issue.record("\(step.action)")
            return
        }
        #expect(decoded.number("max") == 5 && with.variables.contains("index") && with.variables.contains("domain"))
    }

    @Test(arguments: [
        ("carbons: on", 4, 14, "carbons must be one of enable, disable, got 'on'"),
        ("csi", 4, 5, "step 'csi' needs settings"),
        ("csi: ~", 4, 5, "csi needs one of active, inactive"),
        ("csi: idle", 4, 10, "csi must be one of active, inactive"),
        ("mam: {max: 0}", 4, 16, "mam.max must be at least 1"),
        ("mam: {max: 5000}", 4, 16, "mam.max must be at most 1000"),
        ("mam: {page: 5}", 4, 11, "unknown key 'page' in mam"),
        ("pep: {payload_size: 100000}", 4, 25, "pep.payload_size must be at most 65536"),
        ("pep: {node: ''}", 4, 17, "pep.node must not be empty"),
    ])
    func mistakesAreReportedWhereTheyAre(line: String, row: Int, column: Int, message: String) {
        do {
            _ = try ProfileLoader.load(yaml: "name: e\nsteps:\n  - login\n  - \(line)\n", file: "e.yaml")
            Issue.record("'\(line)' accepted")
        } catch {
            let found = error.problems.first { $0.message.contains(message) }
            #expect(found != nil, "\(error.problems.map(\.message))")
            #expect(found?.location.line == row && found?.location.column == column, "\(error)")
        }
    }

    @Test func beforeLoginTheyAreRefused() {
        #expect(throws: (any Error).self) {
            _ = try ProfileLoader.load(yaml: "name: e\nsteps: [carbons, login]\n", file: "e.yaml")
        }
    }

    @Test func theirMetricsAreKnownToThresholds() throws {
        let definition = try ProfileLoader.load(
            yaml: "name: e\nsteps: [login, carbons, mam, pep, {csi: inactive}]\n", file: "e.yaml")
        let names = MetricCatalog(definition).names
        for metric in ["carbons.enable", "mam.query", "pep.publish", "pep.notify", "csi.inactive"] {
            #expect(names.contains(metric), "\(metric)")
        }
    }
}

/// The blocking steps' rows (XEP-0191): forms, metrics and mistakes.
@Suite struct BlockingStepDecodingTests {
    @Test(arguments: [
        (
            "block: user2@load.test",
            FeatureStep(feature: "blocking", operation: "block", settings: ["jid": .template(Template(literal: "user2@load.test"))]), "blocking.block"
        ),
        (
            "block: {jid: x@y}", FeatureStep(feature: "blocking", operation: "block", settings: ["jid": .template(Template(literal: "x@y"))]),
            "blocking.block"
        ),
        ("unblock", FeatureStep(feature: "blocking", operation: "unblock"), "blocking.unblock"),
        (
            "unblock: x@y", FeatureStep(feature: "blocking", operation: "unblock", settings: ["jid": .template(Template(literal: "x@y"))]),
            "blocking.unblock"
        ),
        ("blocklist", FeatureStep(feature: "blocking", operation: "list"), "blocking.list"),
    ])
    func eachFormDecodesWithItsMetric(line: String, expected: FeatureStep, metric: String) throws {
        let step = try ExtensionStepDecodingTests.step(line)
        #expect(step.action == .feature(expected))
        #expect(step.name == metric)
    }

    @Test(arguments: [
        ("block", "step 'block' needs settings"),
        ("block: {who: x@y}", "unknown key 'who' in block"),
        ("block: {}", "block needs jid"),
    ])
    func mistakesAreReported(line: String, message: String) {
        do {
            _ = try ProfileLoader.load(yaml: "name: e\nsteps:\n  - login\n  - \(line)\n", file: "e.yaml")
            Issue.record("'\(line)' accepted")
        } catch {
            #expect(error.problems.contains { $0.message.contains(message) }, "\(error.problems.map(\.message))")
        }
    }
}

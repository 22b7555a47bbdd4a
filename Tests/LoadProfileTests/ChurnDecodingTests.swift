import Testing

@testable import LoadProfile

/// `churn:` in the run's file (a plain profile or a mix file): deliberate drops per second across the
/// run, as `run --churn` takes them (the flag replaces the key).
@Suite struct ChurnDecodingTests {
    @Test(arguments: [
        ("churn: 5", 5.0),
        ("churn: 5/s", 5.0),
        ("churn: 300/m", 5.0),
        ("churn: 18000/h", 5.0),
        ("churn: {rate: 0.5/s}", 0.5),
    ])
    func aRateIsDropsPerSecond(line: String, perSecond: Double) throws {
        let definition = try ProfileLoader.load(yaml: "name: c\n\(line)\nsteps: [login, stay_online]\n", file: "c.yaml")
        #expect(definition.churn?.perSecond == perSecond)
    }

    @Test(arguments: [("churn: 5/s", 1.0), ("churn: {rate: 5/s, resume: 60%}", 0.6), ("churn: {rate: 5/s, resume: 0%}", 0.0)])
    func aShareOfChurnedSessionsResumes(line: String, share: Double) throws {
        let definition = try ProfileLoader.load(yaml: "name: c\n\(line)\nsteps: [login, stay_online]\n", file: "c.yaml")
        #expect(definition.churn?.resumeShare == share)
    }

    @Test func noKeyNoChurn() throws {
        #expect(try ProfileLoader.load(yaml: "name: c\nsteps: [login]\n", file: "c.yaml").churn == nil)
    }

    @Test(arguments: [
        ("churn: 0/s", 2, 8, "churn rate must be a positive rate"),
        ("churn: 5/d", 2, 8, "got '5/d'"),
        ("churn: 200000/s", 2, 8, "at most 100000/s"),
        ("churn: {rate: fast}", 2, 15, "got 'fast'"),
        ("churn: {rat: 5/s}", 2, 9, "unknown key 'rat' in churn"),
        ("churn: [5/s]", 2, 8, "churn rate must be a single value"),
        ("churn: {rate: 5/s, resume: 120%}", 2, 28, "churn resume must be a percentage from 0% to 100%, got '120%'"),
        ("churn: {rate: 5/s, resume: 0.5}", 2, 28, "got '0.5'"),
    ])
    func aBadRateIsReportedWhereItIs(line: String, row: Int, column: Int, message: String) {
        do {
            _ = try ProfileLoader.load(yaml: "name: c\n\(line)\nsteps: [login]\n", file: "c.yaml")
            Issue.record("'\(line)' accepted")
        } catch {
            let found = error.problems.first { $0.message.contains(message) }
            #expect(found?.location.line == row && found?.location.column == column, "\(error)")
        }
    }

    @Test func aMixFileCarriesItsChurn() throws {
        let directory = try TemporaryDirectory()
        _ = try directory.write("a.yaml", "name: a\nsteps: [login, stay_online]\n")
        let mix = try directory.write("mix.yaml", "name: m\nchurn: 2/s\nmix:\n  - {profile: a.yaml, weight: 1}\n")
        let definition = try ProfileLoader.load(path: mix)
        #expect(definition.churn?.perSecond == 2)
    }
}

import Foundation
import Testing

@testable import LoadProfile

/// The `servers:` key (the run's endpoints in the `--server` syntax, with the file's variables) and
/// the per-profile `transport:` key: good tables, and every problem at once at its file:line:column.
@Suite struct ServersAndTransportDecodingTests {
    static func profile(servers: String, variables: String = "") -> String {
        """
        name: s
        \(variables)
        servers:
        \(servers)
        steps: [login]
        """
    }

    @Test(arguments: [
        ("  - 127.0.0.1:5222", ["127.0.0.1:5222"]),
        ("  - 127.0.0.1:5222,weight=3\n  - ws://127.0.0.1:5280/xmpp-websocket", ["127.0.0.1:5222,weight=3", "ws://127.0.0.1:5280/xmpp-websocket"]),
        ("  - {server: 'http://127.0.0.1:5280/http-bind', weight: 2}", ["http://127.0.0.1:5280/http-bind,weight=2"]),
        ("  - {server: '[::1]:5222'}\n  - wss://h/ws", ["[::1]:5222", "wss://h:443/ws"]),
    ])
    func goodServersParseLikeTheServerFlag(servers: String, expected: [String]) throws {
        let definition = try ProfileLoader.load(yaml: Self.profile(servers: servers), file: "s.yaml")
        let endpoints = try definition.serverEndpoints()
        #expect(endpoints.map(\.description) == expected)
        #expect(endpoints == expected.map { try! WeightedEndpoint.parse($0).get() })
    }

    @Test func variablesFillServersAndVarOverridesThem() throws {
        let yaml = Self.profile(
            servers: "  - ${tcp}\n  - {server: '${web}', weight: '${web_weight}'}",
            variables: "variables: {tcp: '127.0.0.1:5222', web: 'ws://127.0.0.1:5280/ws', web_weight: '2'}")
        let definition = try ProfileLoader.load(yaml: yaml, file: "s.yaml")
        #expect(try definition.serverEndpoints().map(\.description) == ["127.0.0.1:5222", "ws://127.0.0.1:5280/ws,weight=2"])
        let moved = try definition.overriding(VariableOverrides(parsing: ["tcp=127.0.0.2:5300", "web=http://127.0.0.2:5281/http-bind"]))
        #expect(try moved.serverEndpoints().map(\.description) == ["127.0.0.2:5300", "http://127.0.0.2:5281/http-bind,weight=2"])
        // A --var that makes an entry bad is reported at the entry, naming the template.
        let broken = try definition.overriding(VariableOverrides(parsing: ["tcp=127.0.0.1", "web_weight=0"]))
        do {
            _ = try broken.serverEndpoints()
            Issue.record("bad overrides accepted")
        } catch {
            #expect(error.problems.map(\.location.line) == [4, 5])
            #expect(error.problems[0].message.contains("'127.0.0.1' is not HOST:PORT") && error.problems[0].message.contains("(from '${tcp}')"))
            #expect(error.problems[1].message.contains("weight must be an integer 1...10000, got '0'"))
        }
    }

    /// Every bad entry at once, each at its own line and column.
    @Test func everyBadServerEntryIsReportedAtOnce() {
        let yaml = """
            name: s
            variables: {host: 127.0.0.1}
            servers:
              - 127.0.0.1:0
              - ftp://h/x
              - h:5222,weight=0
              - {server: 'h:5222', weight: -1}
              - ${hots}:5222
              - {server: 'h:5222', wieght: 2}
              - {weight: 2}
              - h:5222,weight=2,weight=3
              - [a, b]
              - ${host
            steps: [login]
            """
        do {
            _ = try ProfileLoader.load(yaml: yaml, file: "s.yaml")
            Issue.record("bad servers accepted")
        } catch {
            let found = error.problems.map { ($0.location.line, $0.location.column, $0.message) }
            let expected: [(Int, Int, String)] = [
                (4, 5, "'127.0.0.1:0' is not HOST:PORT[,weight=W] with a port 1-65535"),
                (5, 5, "unknown scheme 'ftp'"),
                (6, 5, "weight must be an integer 1...10000, got '0'"),
                (7, 14, "weight must be an integer 1...10000, got '-1'"),
                (8, 5, "undefined variable '${hots}'"),
                (9, 24, "unknown key 'wieght' in a servers entry"),
                (10, 5, "a servers entry needs 'server'"),
                (11, 5, "'h:5222,weight=2,weight=3': the weight is given more than once"),
                (12, 5, "a servers entry is HOST:PORT[,weight=W], a URL, or {server: …, weight: W}"),
                (13, 5, "'$' must start '${name}'"),
            ]
            #expect(found.count == expected.count, "\(error)")
            for (got, want) in zip(found, expected) {
                #expect(got.0 == want.0 && got.1 == want.1 && got.2.contains(want.2), "\(got) is not \(want)")
            }
            #expect(error.problems[4].hint == "did you mean '${host}'?")
        }
    }

    @Test func anEmptyOrMisshapenServersListIsAProblem() {
        for (servers, message) in [("servers: []", "servers is empty"), ("servers: 127.0.0.1:5222", "servers must be a list")] {
            do {
                _ = try ProfileLoader.load(yaml: "name: s\n\(servers)\nsteps: [login]\n", file: "s.yaml")
                Issue.record("'\(servers)' accepted")
            } catch {
                #expect(error.problems.count == 1 && error.problems[0].message == message && error.problems[0].location.line == 2, "\(error)")
            }
        }
    }

    @Test(arguments: [
        ("", ProfileTransport.any),
        ("transport: any", .any),
        ("transport: tcp", .tcp),
        ("transport: websocket", .webSocket),
        ("transport: bosh", .bosh),
    ])
    func transportDecodes(line: String, expected: ProfileTransport) throws {
        let definition = try ProfileLoader.load(yaml: "name: t\n\(line)\nsteps: [login]\n", file: "t.yaml")
        #expect(definition.profiles[0].profile.transport == expected)
        #expect((definition.profiles[0].profile.transportLocation?.line) == (line.isEmpty ? nil : 2))
    }

    @Test(arguments: [
        ("transport: ws", "transport must be one of any, tcp, websocket, bosh, got 'ws'"),
        ("transport: [tcp]", "transport must be a single value"),
        ("transport: BOSH", "transport must be one of any, tcp, websocket, bosh, got 'BOSH'"),
    ])
    func aBadTransportIsReportedWithTheOtherProblems(line: String, message: String) {
        do {
            _ = try ProfileLoader.load(yaml: "name: t\n\(line)\nsteps: [login]\nservers: [a]\n", file: "t.yaml")
            Issue.record("'\(line)' accepted")
        } catch {
            #expect(error.problems.map(\.location.line) == [2, 4], "\(error)")
            #expect(error.problems[0].message == message, "\(error)")
        }
    }

    /// In a mix, `transport:` belongs to the member profiles; `servers:` and `variables:` to the mix
    /// file; `--var` reaches the mix file's variables.
    @Test func aMixCarriesServersAndItsMembersTransports() throws {
        let directory = try TemporaryDirectory()
        try directory.write("desktop.yaml", "name: desktop\ntransport: tcp\nsteps: [login]\n")
        try directory.write("mobile.yaml", "name: mobile\ntransport: bosh\nsteps: [login]\n")
        let mix = try directory.write(
            "mix.yaml",
            """
            name: mixed
            variables: {bosh: 'http://127.0.0.1:5280/http-bind'}
            servers: ['127.0.0.1:5222', '${bosh}']
            mix:
              - {profile: desktop.yaml, weight: 3}
              - {profile: mobile.yaml, weight: 1}
            """)
        let definition = try ProfileLoader.load(path: mix)
        #expect(definition.profiles.map(\.profile.transport) == [.tcp, .bosh])
        #expect(definition.variables == ["bosh": "http://127.0.0.1:5280/http-bind"])
        let moved = try definition.overriding(VariableOverrides(parsing: ["bosh=https://127.0.0.2/bind"]))
        #expect(try moved.serverEndpoints().map(\.description) == ["127.0.0.1:5222", "https://127.0.0.2:443/bind"])
        #expect(ProfileEndpoints.problems(of: definition).isEmpty)
        // `plan` shows each profile's transport and the servers as written.
        let plan = PlanReport.render(definition: definition, plan: .closed(sessions: 4, ramp: .seconds(1), duration: .seconds(10)))
        #expect(plan.contains("profiles: desktop (weight 3, tcp), mobile (weight 1, bosh)\n"), "\(plan)")
        #expect(plan.contains("servers: 127.0.0.1:5222, http://127.0.0.1:5280/http-bind\n"), "\(plan)")
        let movedPlan = PlanReport.render(definition: moved, plan: .closed(sessions: 4, ramp: .seconds(1), duration: .seconds(10)))
        #expect(movedPlan.contains("servers: 127.0.0.1:5222, https://127.0.0.2:443/bind\n"), "\(movedPlan)")

        let misplaced = try directory.write("misplaced.yaml", "name: m\ntransport: tcp\nmix:\n  - {profile: desktop.yaml, weight: 1}\n")
        do {
            _ = try ProfileLoader.load(path: misplaced)
            Issue.record("transport in a mix file accepted")
        } catch {
            #expect(error.problems.count == 1 && error.problems[0].message == "'transport' has no effect in a mix file", "\(error)")
        }
    }

    /// `check` with `servers:` in the file: a profile whose transport has no endpoint there is
    /// reported at its `transport:` key.
    @Test func checkReportsAProfileWhoseTransportHasNoServer() throws {
        let directory = try TemporaryDirectory()
        try directory.write("desktop.yaml", "name: desktop\ntransport: tcp\nsteps: [login]\n")
        try directory.write("web.yaml", "name: web\nsteps: [login]\ntransport: websocket\n")
        try directory.write("mobile.yaml", "name: mobile\ntransport: bosh\nsteps: [login]\n")
        let mix = try directory.write(
            "mix.yaml",
            """
            servers: ['127.0.0.1:5222']
            mix:
              - {profile: desktop.yaml, weight: 1}
              - {profile: web.yaml, weight: 1}
              - {profile: mobile.yaml, weight: 1}
            """)
        let problems = ProfileEndpoints.problems(of: try ProfileLoader.load(path: mix))
        #expect(problems.map(\.location.line) == [3, 2])
        #expect(problems.map { URL(fileURLWithPath: $0.location.file).lastPathComponent } == ["web.yaml", "mobile.yaml"])
        #expect(
            problems.first?.message
                == "profile 'web' has transport: websocket but the run has no websocket endpoint (it has tcp): add one with --server ws://HOST:5280/xmpp-websocket or in `servers:`"
        )
    }
}

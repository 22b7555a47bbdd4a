import LoadProfile
import LoadResults
import SessionCore
import Testing
import XMPPCore

/// The compiled script: control flow as jumps, counted sends as loops, login options resolved once
/// with the command line's overrides, and `wait`'s sender patterns.
@Suite struct SessionScriptTests {
    static func compile(
        _ steps: String, login: String = "{sasl: PLAIN, tls: none}",
        overrides: SessionScript.Overrides = .init()
    ) throws -> SessionScript {
        let definition = try ProfileLoader.load(yaml: "name: s\nlogin: \(login)\nsteps:\n\(steps)", file: "s.yaml")
        var registry = MetricRegistry()
        return SessionScript(profile: definition.profiles[0].profile, registry: &registry, overrides: overrides)
    }

    /// A readable shape of each instruction.
    static func shape(_ script: SessionScript) -> [String] {
        script.instructions.map { instruction in
            switch instruction.operation {
            case .step(let action):
                switch action {
                case .login: return "login"
                case .logout: return "logout"
                case .think: return "think"
                case .message: return "message"
                case .muc(.send): return "muc.send"
                default: return instruction.name
                }
            case .loopStart(let count, let end): return "loop(\(count)) end \(end)"
            case .loopEnd(let start): return "loopEnd \(start)"
            case .choose(let weights, let targets): return "choose \(weights) \(targets)"
            case .jump(let target): return "jump \(target)"
            }
        }
    }

    @Test func aCountedMessageIsOneSendThenALoopOfThinkAndSend() throws {
        let script = try Self.compile("  - login\n  - message: {to: random, body: x, count: 3, interval: 1s}\n  - logout")
        #expect(Self.shape(script) == ["login", "message", "loop(times(2)) end 6", "think", "message", "loopEnd 2", "logout"])
    }

    @Test func repeatAndChooseCompileToJumps() throws {
        let script = try Self.compile(
            """
              - login
              - repeat:
                  count: 2
                  steps: [{roster: get}]
              - choose:
                  - {weight: 3, steps: [ping]}
                  - {weight: 1, steps: [{version: load.test}]}
              - logout
            """)
        #expect(
            Self.shape(script) == [
                "login", "loop(times(2)) end 4", "roster.get", "loopEnd 1",
                "choose [3.0, 4.0] [5, 7]", "iq.ping", "jump 9", "iq.version", "jump 9", "logout",
            ])
    }

    @Test(arguments: [
        // (profile login, --tls, --sasl, resolved tls, resolved mechanism)
        ("{sasl: PLAIN, tls: none}", nil, nil, TLSMode.none, SASLMechanism?.some(.plain)),
        ("{tls: direct}", nil, nil, .direct, nil),
        ("{sasl: PLAIN, tls: none}", TLSMode.startTLS, SASLMechanism.scramSHA1, .startTLS, .scramSHA1),
        ("{resource: r}", nil, nil, .startTLS, nil),
    ])
    func loginOptionsAreResolvedOnceWithTheCommandLinesOverrides(
        login: String, tls: TLSMode?, sasl: SASLMechanism?,
        expectedTLS: TLSMode, expectedMechanism: SASLMechanism?
    ) throws {
        let script = try Self.compile("  - login\n  - logout", login: login, overrides: .init(tls: tls, mechanism: sasl))
        #expect(script.login.tls == expectedTLS)
        #expect(script.login.mechanism == expectedMechanism)
    }

    @Test func theLoginTimeoutIsTheLoginStepsTimeout() throws {
        #expect(try Self.compile("  - login:\n    timeout: 7s\n  - logout").loginTimeout == .seconds(7))
        #expect(try Self.compile("  - login\n  - logout").loginTimeout == .seconds(30))
    }

    @Test(arguments: [
        ("user2@load.test/r1", "user2@load.test/r1", true),
        ("user2@load.test/r1", "user2@load.test/r2", false),
        ("user2@*", "user2@load.test/r1", true),
        ("user2@*", "user22@load.test", false),
        ("*@conference.load.test/*", "room1@conference.load.test/nick", true),
        ("*@conference.load.test/*", "room1@load.test/nick", false),
        ("*", "", true),
        ("a*b*c", "abc", true),
        ("a*b*c", "acb", false),
    ])
    func waitPatternsMatchWithStars(pattern: String, text: String, matches: Bool) {
        #expect(GlobPattern(pattern).matches(text) == matches)
    }
}

import NIOCore
import Testing

@testable import LoadEngine

/// The end of a BOSH session on the real pipeline (`PipelineHarness`: two `EmbeddedChannel`s,
/// a virtual time loop), replaying what Prosody 0.12.3's mod_bosh answered in a recorded session: at
/// logout it answers the held long poll with the terminate body (and the presence echo) and then the
/// terminate request itself. The session may close its connections only once both are answered, so a
/// clean logout counts as many HTTP responses as requests; a response that never comes is counted as
/// `bosh-unanswered` after the drain bound (2 s) or when the connection closes, never silently.
@Suite struct BOSHLogoutDrainTests {
    /// Recorded on 2026-11-23 from Prosody 0.12.3 (Debian 12) started by scripts/local-server, over two
    /// HTTP/1.1 keep-alive connections (`C0`/`S0`: the first, `C1`/`S1`: the second): creation, PLAIN,
    /// restart, bind, initial presence, the long poll (held), then the terminate with the unavailable
    /// presence on the second connection. `S` bodies are replayed verbatim; `C` lines are checked by
    /// rid, connection and the first element they carry.
    static let transcript = """
        C0 <body xmlns='http://jabber.org/protocol/httpbind' content='text/xml; charset=utf-8' hold='1' rid='1000' to='load.test' ver='1.11' wait='60' xml:lang='en' xmpp:version='1.0' xmlns:xmpp='urn:xmpp:xbosh'></body>
        S0 <body ver='1.6' requests='2' secure='true' from='load.test' sid='b78a3f1c-9f75-4808-88ba-f8966ac13ea6' xmpp:version='1.0' inactivity='60' hold='1' authid='b78a3f1c-9f75-4808-88ba-f8966ac13ea6' xmlns='http://jabber.org/protocol/httpbind' wait='60' xmlns:xmpp='urn:xmpp:xbosh' xmlns:stream='http://etherx.jabber.org/streams' polling='5'><stream:features xmlns='jabber:client'><starttls xmlns='urn:ietf:params:xml:ns:xmpp-tls'/><mechanisms xmlns='urn:ietf:params:xml:ns:xmpp-sasl'><mechanism>PLAIN</mechanism><mechanism>SCRAM-SHA-1</mechanism></mechanisms><register xmlns='http://jabber.org/features/iq-register'/></stream:features></body>
        C0 <body xmlns='http://jabber.org/protocol/httpbind' rid='1001' sid='b78a3f1c-9f75-4808-88ba-f8966ac13ea6'><auth xmlns='urn:ietf:params:xml:ns:xmpp-sasl' mechanism='PLAIN'>AHVzZXIxAHNlY3JldA==</auth></body>
        S0 <body xmlns='http://jabber.org/protocol/httpbind' xmlns:stream='http://etherx.jabber.org/streams' sid='b78a3f1c-9f75-4808-88ba-f8966ac13ea6'><success xmlns='urn:ietf:params:xml:ns:xmpp-sasl'/></body>
        C0 <body xmlns='http://jabber.org/protocol/httpbind' rid='1002' sid='b78a3f1c-9f75-4808-88ba-f8966ac13ea6' to='load.test' xml:lang='en' xmpp:restart='true' xmlns:xmpp='urn:xmpp:xbosh'></body>
        S0 <body xmlns='http://jabber.org/protocol/httpbind' xmlns:stream='http://etherx.jabber.org/streams' sid='b78a3f1c-9f75-4808-88ba-f8966ac13ea6'><stream:features xmlns='jabber:client'><starttls xmlns='urn:ietf:params:xml:ns:xmpp-tls'/><sub xmlns='urn:xmpp:features:pre-approval'/><bind xmlns='urn:ietf:params:xml:ns:xmpp-bind'><required/></bind><session xmlns='urn:ietf:params:xml:ns:xmpp-session'><optional/></session><c ver='Okgk+Zd6zUFo1U16hZRgRcOHlOY=' xmlns='http://jabber.org/protocol/caps' node='http://prosody.im' hash='sha-1'/><ver xmlns='urn:xmpp:features:rosterver'/><sm xmlns='urn:xmpp:sm:2'><optional/></sm><sm xmlns='urn:xmpp:sm:3'><optional/></sm></stream:features></body>
        C0 <body xmlns='http://jabber.org/protocol/httpbind' rid='1003' sid='b78a3f1c-9f75-4808-88ba-f8966ac13ea6'><iq xmlns='jabber:client' type='set' id='bind1'><bind xmlns='urn:ietf:params:xml:ns:xmpp-bind'><resource>r1</resource></bind></iq></body>
        S0 <body xmlns='http://jabber.org/protocol/httpbind' xmlns:stream='http://etherx.jabber.org/streams' sid='b78a3f1c-9f75-4808-88ba-f8966ac13ea6'><iq type='result' xmlns='jabber:client' id='bind1'><bind xmlns='urn:ietf:params:xml:ns:xmpp-bind'><jid>user1@load.test/r1</jid></bind></iq></body>
        C0 <body xmlns='http://jabber.org/protocol/httpbind' rid='1004' sid='b78a3f1c-9f75-4808-88ba-f8966ac13ea6'><presence xmlns='jabber:client'/></body>
        S0 <body xmlns='http://jabber.org/protocol/httpbind' xmlns:stream='http://etherx.jabber.org/streams' sid='b78a3f1c-9f75-4808-88ba-f8966ac13ea6'><presence from='user1@load.test/r1' xml:lang='en' xmlns='jabber:client'><x xmlns='vcard-temp:x:update'><photo/></x></presence><presence xmlns='jabber:client' from='user3@load.test' to='user1@load.test/r1' type='unavailable'/><presence xmlns='jabber:client' from='user2@load.test' to='user1@load.test/r1' type='unavailable'/></body>
        C0 <body xmlns='http://jabber.org/protocol/httpbind' rid='1005' sid='b78a3f1c-9f75-4808-88ba-f8966ac13ea6'></body>
        C1 <body xmlns='http://jabber.org/protocol/httpbind' rid='1006' sid='b78a3f1c-9f75-4808-88ba-f8966ac13ea6' type='terminate'><presence xmlns='jabber:client' type='unavailable'/></body>
        S0 <body type='terminate' xmlns='http://jabber.org/protocol/httpbind' xmlns:stream='http://etherx.jabber.org/streams' sid='b78a3f1c-9f75-4808-88ba-f8966ac13ea6'><presence xmlns='jabber:client' type='unavailable' xml:lang='en' from='user1@load.test/r1'/></body>
        S1 <body xmlns='http://jabber.org/protocol/httpbind' xmlns:stream='http://etherx.jabber.org/streams' type='terminate'/>
        """

    /// One line of the transcript.
    struct Line {
        let client: Bool
        let slot: Int
        let body: String
    }

    static let lines: [Line] = transcript.split(separator: "\n").map { line in
        Line(client: line.hasPrefix("C"), slot: line.dropFirst().hasPrefix("1") ? 1 : 0, body: String(line.dropFirst(3)))
    }

    /// The rid and the first child's name (nil: an empty body) of a request body.
    static func summary(of body: String) -> (rid: String?, child: String?, terminate: Bool) {
        let rid = body.firstRange(of: "rid='").map { String(body[$0.upperBound...].prefix { $0 != "'" }) }
        var child: String?
        if let end = body.firstRange(of: ">"), body[end.upperBound...].hasPrefix("<"), !body[end.upperBound...].hasPrefix("</body") {
            child = String(body[end.upperBound...].dropFirst().prefix { $0 != " " && $0 != ">" && $0 != "/" })
        }
        return (rid, child, body.contains("type='terminate'"))
    }

    /// Plays the transcript up to the two logout answers: each client line must be the next request
    /// on its connection (the profile thinks 1 s before logging out: time advances while the client
    /// has not written the line yet), each server line before the logout is answered.
    static func playUntilLogoutAnswers(_ harness: PipelineHarness) throws -> [Line] {
        harness.context.start(harness.user)
        var pending: [Int: [String]] = [0: [], 1: []]
        let logoutAnswers = Array(lines.filter { !$0.client }.suffix(2))
        let serverLinesToPlay = lines.filter { !$0.client }.count - 2
        var served = 0
        for line in lines {
            if line.client {
                var waited = 0
                while pending[line.slot]!.isEmpty && waited < 3 {
                    for slot in [0, 1] { pending[slot]! += try harness.requests(on: slot) }
                    if pending[line.slot]!.isEmpty {
                        harness.loop.advanceTime(by: .seconds(1))
                        waited += 1
                    }
                }
                let sent = try #require(pending[line.slot]!.first, "no request on connection \(line.slot) for \(line.body)")
                pending[line.slot]!.removeFirst()
                let (want, got) = (summary(of: line.body), summary(of: sent))
                #expect(got.rid == want.rid && got.child == want.child && got.terminate == want.terminate, "sent \(sent), recorded \(line.body)")
            } else if served < serverLinesToPlay {
                served += 1
                try harness.respond(on: line.slot, line.body)
            }
        }
        let unexpected = pending.values.joined()
        #expect(unexpected.isEmpty, "unexpected requests: \(pending)")
        return logoutAnswers
    }

    /// Which of the two logout answers (the held poll's on connection 0, the terminate's on 1) the
    /// server sends, in which order, and what the run then counts.
    struct Row: CustomTestStringConvertible, Sendable {
        let name: String
        let answeredSlots: [Int]
        /// When the session ends after the last answer: 0 at once, 2000 the drain bound, 5000 the
        /// session's logout timeout.
        let endsAfterMilliseconds: Int64
        let responses: UInt64
        let unanswered: UInt64
        var testDescription: String { name }
    }

    static let rows: [Row] = [
        Row(name: "as recorded: poll, then terminate", answeredSlots: [0, 1], endsAfterMilliseconds: 0, responses: 7, unanswered: 0),
        Row(name: "terminate, then poll", answeredSlots: [1, 0], endsAfterMilliseconds: 0, responses: 7, unanswered: 0),
        Row(name: "the poll's answer only", answeredSlots: [0], endsAfterMilliseconds: 2000, responses: 6, unanswered: 1),
        Row(name: "the terminate's answer only", answeredSlots: [1], endsAfterMilliseconds: 2000, responses: 6, unanswered: 1),
        // No terminate body: the session's own logout timeout closes the connection; both count.
        Row(name: "no answer at all", answeredSlots: [], endsAfterMilliseconds: 5000, responses: 5, unanswered: 2),
    ]

    @Test(arguments: rows)
    func aCleanLogoutCountsEveryRequestAnsweredOrUnanswered(row: Row) throws {
        let harness = try BOSHPipelineTests.harness()
        let answers = try Self.playUntilLogoutAnswers(harness)
        #expect(!harness.user.machine.isEnded)
        for slot in row.answeredSlots {
            let answer = try #require(answers.first { $0.slot == slot })
            try harness.respond(on: slot, answer.body)
        }
        #expect(harness.user.machine.isEnded == (row.endsAfterMilliseconds == 0))
        if row.endsAfterMilliseconds > 0 {
            harness.loop.advanceTime(by: .milliseconds(row.endsAfterMilliseconds - 100))
            #expect(!harness.user.machine.isEnded)
            harness.loop.advanceTime(by: .milliseconds(200))
            #expect(harness.user.machine.isEnded)
        }
        let snapshot = harness.snapshot()
        #expect(snapshot.counter(.sessionsLoggedIn) == 1 && snapshot.counter(.sessionsCompleted) == 1)
        #expect(snapshot.counter(.sessionsFailed) == 0)
        #expect(snapshot.counter(.httpRequests) == 7, "creation, auth, restart, bind, presence, poll, terminate")
        #expect(snapshot.counter(.httpResponses) == row.responses)
        #expect(snapshot.counter(.httpRequests) == snapshot.counter(.httpResponses) + row.unanswered)
        #expect(snapshot.errors[BOSHCodec.unansweredKind, default: 0] == row.unanswered, "\(snapshot.errors)")
        #expect(snapshot.errors.keys.allSatisfy { $0 == BOSHCodec.unansweredKind }, "\(snapshot.errors)")
        // Both connections are closed once the session ended.
        #expect(!harness.channels[0].isActive && !harness.channels[1].isActive)
        harness.finishIgnoringLeftovers()
    }
}

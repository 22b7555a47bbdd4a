import Testing

@testable import LoadEngine

/// BOSH request sequencing with plain values: rid order, the long poll kept outstanding, batching,
/// restart and terminate, the server's `requests` limit, and delivery in rid order.
@Suite struct BOSHRequestSchedulerTests {
    static func body(_ text: String) -> String { text }
    static func response(sid: String? = nil, requests: Int? = nil, terminated: Bool = false, condition: String? = nil) -> BOSHBody.Response {
        BOSHBody.Response(sid: sid, wait: 60, requests: requests, terminated: terminated, condition: condition, elements: [])
    }

    @Test func creationThenLongPollThenBatchedStanzasWithIncreasingRIDs() {
        var scheduler = BOSHRequestScheduler(domain: "load.test", wait: 60, firstRID: 100)
        // Nothing is sent before the session exists, except the creation request.
        scheduler.enqueue(Array("<presence/>".utf8))
        #expect(scheduler.flush().isEmpty)
        let creation = scheduler.open()
        #expect(creation.map(\.rid) == [100] && creation[0].slot == 0 && creation[0].opensStream && !creation[0].isPoll)
        let text = String(decoding: creation[0].body, as: UTF8.self)
        for part in [
            "rid='100'", "to='load.test'", "wait='60'", "hold='1'", "xmpp:version='1.0'", "xmlns:xmpp='urn:xmpp:xbosh'",
            "xmlns='http://jabber.org/protocol/httpbind'",
        ] {
            #expect(text.contains(part), "\(part) missing in \(text)")
        }
        let (answered, delivered) = scheduler.responded(slot: 0, Self.response(sid: "s1", requests: 2))
        #expect(answered == 100 && delivered.map(\.rid) == [100] && scheduler.sid == "s1")
        // What was queued leaves in one request on the free connection.
        let first = scheduler.flush()
        #expect(first.map(\.rid) == [101] && !first[0].isPoll)
        #expect(
            String(decoding: first[0].body, as: UTF8.self)
                == "<body xmlns='http://jabber.org/protocol/httpbind' rid='101' sid='s1'><presence/></body>")
        // Two stanzas written together leave together, on the second connection.
        scheduler.enqueue(Array("<a/>".utf8))
        scheduler.enqueue(Array("<b/>".utf8))
        let second = scheduler.flush()
        #expect(second.map(\.slot) == [1] && second.map(\.rid) == [102])
        #expect(String(decoding: second[0].body, as: UTF8.self).contains("<a/><b/></body>"))
        // Both connections busy: the next stanza waits.
        scheduler.enqueue(Array("<c/>".utf8))
        #expect(scheduler.flush().isEmpty)
        // Connection 1 answers first: held until 101's response, then both are delivered in order.
        #expect(scheduler.responded(slot: 1, Self.response()).deliver.isEmpty)
        let waiting = scheduler.flush()
        #expect(waiting.map(\.rid) == [103] && waiting[0].slot == 1)
        #expect(scheduler.responded(slot: 0, Self.response()).deliver.map(\.rid) == [101, 102])
        // One request is outstanding: no poll needed. When it returns, an empty long poll follows.
        #expect(scheduler.flush().isEmpty)
        _ = scheduler.responded(slot: 1, Self.response())
        let poll = scheduler.flush()
        #expect(poll.count == 1 && poll[0].isPoll && poll[0].rid == 104)
    }

    @Test func restartAndTerminateRideTheNextRequestAndNothingFollowsTheTerminate() {
        var scheduler = BOSHRequestScheduler(domain: "load.test", wait: 30, firstRID: 7)
        _ = scheduler.open()
        _ = scheduler.responded(slot: 0, Self.response(sid: "s", requests: 2))
        _ = scheduler.flush()  // the long poll, rid 8
        let restart = scheduler.open()
        #expect(restart.count == 1 && restart[0].opensStream && restart[0].rid == 9)
        #expect(String(decoding: restart[0].body, as: UTF8.self).contains("xmpp:restart='true'"))
        _ = scheduler.responded(slot: 1, Self.response())
        scheduler.enqueue(Array("<presence type='unavailable'/>".utf8))
        let terminate = scheduler.close()
        let text = String(decoding: terminate[0].body, as: UTF8.self)
        #expect(text.contains("type='terminate'") && text.contains("<presence type='unavailable'/>"), "\(text)")
        #expect(scheduler.closing)
        _ = scheduler.responded(slot: 0, Self.response())
        _ = scheduler.responded(slot: 1, Self.response(terminated: true))
        #expect(scheduler.flush().isEmpty && scheduler.outstanding == 0)
    }

    @Test(arguments: [(1, 1), (2, 2), (5, 2), (0, 1)])
    func theServersRequestsLimitIsHonoured(requests: Int, outstanding: Int) {
        var scheduler = BOSHRequestScheduler(domain: "d", wait: 60, firstRID: 1)
        _ = scheduler.open()
        _ = scheduler.responded(slot: 0, Self.response(sid: "s", requests: requests))
        for n in 0..<4 {
            scheduler.enqueue(Array("<m\(n)/>".utf8))
            _ = scheduler.flush()
        }
        #expect(scheduler.outstanding == outstanding && scheduler.maxOutstanding == outstanding)
    }

    @Test func aResponseWithNoRequestOutstandingAnswersNothing() {
        var scheduler = BOSHRequestScheduler(domain: "d", wait: 60, firstRID: 1)
        #expect(scheduler.responded(slot: 0, Self.response()).answered == nil)
        #expect(scheduler.responded(slot: 5, Self.response()).answered == nil)
    }

    /// How the server answers the two requests outstanding at logout: the held long poll (rid 8, on
    /// slot 0) and the terminate (rid 9, on slot 1); a request whose answer is not in `answers` never
    /// gets one.
    struct LogoutRow: CustomTestStringConvertible, Sendable {
        let name: String
        /// Answers in arrival order: (slot, the body is `type='terminate'`).
        let answers: [(slot: Int, terminates: Bool)]
        /// The rids delivered after each answer.
        let delivered: [[UInt64]]
        /// `ended` and `isDrained` after the last answer.
        let ended: Bool
        let drained: Bool
        /// What giving up then finds unanswered, and delivers.
        let unanswered: [UInt64]
        let deliveredAtGiveUp: [UInt64]
        var testDescription: String { name }
    }

    static let logoutRows: [LogoutRow] = [
        // Prosody 0.12: the held poll gets the terminate body first, then the terminate request.
        LogoutRow(
            name: "poll then terminate, both terminate bodies", answers: [(0, true), (1, true)], delivered: [[8], [9]],
            ended: true, drained: true, unanswered: [], deliveredAtGiveUp: []),
        LogoutRow(
            name: "terminate first: held behind the poll", answers: [(1, true), (0, true)], delivered: [[], [8, 9]],
            ended: true, drained: true, unanswered: [], deliveredAtGiveUp: []),
        LogoutRow(
            name: "the poll answered empty, then the terminate", answers: [(0, false), (1, true)], delivered: [[8], [9]],
            ended: true, drained: true, unanswered: [], deliveredAtGiveUp: []),
        LogoutRow(
            name: "the poll's terminate body only", answers: [(0, true)], delivered: [[8]], ended: true, drained: false,
            unanswered: [9], deliveredAtGiveUp: []),
        LogoutRow(
            name: "the terminate's answer only, the poll never", answers: [(1, true)], delivered: [[]], ended: false,
            drained: false, unanswered: [8], deliveredAtGiveUp: [9]),
        LogoutRow(
            name: "nothing answered", answers: [], delivered: [], ended: false, drained: false, unanswered: [8, 9],
            deliveredAtGiveUp: []),
    ]

    @Test(arguments: logoutRows)
    func aLogoutIsDrainedOnlyWhenEveryOutstandingRequestWasAnswered(row: LogoutRow) {
        var scheduler = BOSHRequestScheduler(domain: "d", wait: 60, firstRID: 7)
        _ = scheduler.open()
        _ = scheduler.responded(slot: 0, Self.response(sid: "s", requests: 2))
        #expect(scheduler.flush().map(\.rid) == [8])  // the long poll
        scheduler.enqueue(Array("<presence type='unavailable'/>".utf8))
        let terminate = scheduler.close()
        #expect(terminate.map(\.rid) == [9] && terminate.map(\.slot) == [1])
        #expect(!scheduler.ended && !scheduler.isDrained && scheduler.outstanding == 2)
        for (index, answer) in row.answers.enumerated() {
            let (answered, deliver) = scheduler.responded(slot: answer.slot, Self.response(terminated: answer.terminates))
            #expect(answered == (answer.slot == 0 ? 8 : 9))
            #expect(deliver.map(\.rid) == row.delivered[index], "after answer \(index)")
            #expect(scheduler.flush().isEmpty, "nothing is sent after the terminate")
        }
        #expect(scheduler.ended == row.ended && scheduler.isDrained == row.drained)
        let (unanswered, deliver) = scheduler.abandonOutstanding()
        #expect(unanswered == row.unanswered)
        #expect(deliver.map(\.rid) == row.deliveredAtGiveUp)
        // After giving up nothing is outstanding and nothing more is sent; a late answer answers nothing.
        #expect(scheduler.outstanding == 0 && scheduler.flush().isEmpty)
        #expect(scheduler.responded(slot: 0, Self.response(terminated: true)).answered == nil)
        #expect(scheduler.isDrained == (row.ended || row.deliveredAtGiveUp.contains(9)))
    }
}

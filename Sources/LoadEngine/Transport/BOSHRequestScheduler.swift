/// When a BOSH client sends which request (XEP-0124 §§7–11): a value-type state machine, fed what
/// the session wrote and what the server answered, returning the requests to write now.
///
/// Rules: `rid` starts at a random value and grows by one per request. At most `requests` requests
/// (the server's value; 2 until it says, at most `slots`) are outstanding, one per HTTP connection
/// (slot). Stanzas written by the session wait in `queued` and leave together in the next request
/// (one request per flush, not one per stanza). Once the session exists, one request is always kept
/// outstanding — empty if there is nothing to say — so the server can push (the long poll). A
/// restart (after SASL success) or a terminate (logout) rides the next request. After terminating,
/// nothing more is sent. Responses are delivered in `rid` order even when connections answer out of
/// order.
///
/// The end (XEP-0124 §13): once a `type='terminate'` body has been delivered the session has `ended`,
/// but the server also answers every other request it holds (Prosody answers the held long poll with
/// the terminate body, then the terminate request itself), so the stream counts as closed only when
/// `isDrained`: every request sent has been answered. A response that never comes is given up with
/// `abandonOutstanding()` (the codec does so after a short bound), which says how many there were.
struct BOSHRequestScheduler {
    /// A request to write on HTTP connection `slot`.
    struct Request: Equatable {
        var slot: Int
        var rid: UInt64
        var body: [UInt8]
        /// Carries nothing: a pure long poll.
        var isPoll: Bool
        /// Its response stands for the stream's (re)opening: the creation and restart requests.
        var opensStream: Bool
    }

    /// A response ready for the session, with the rid of the request it answers.
    struct Delivery: Equatable {
        var rid: UInt64
        var response: BOSHBody.Response
    }

    let domain: String
    let wait: Int
    let slots: Int
    private(set) var sid: String?
    private(set) var nextRID: UInt64
    /// Most requests outstanding at once (the server's `requests`, capped at `slots`).
    private(set) var maxOutstanding: Int
    /// rid per busy slot.
    private(set) var busy: [UInt64?]
    private var queued: [UInt8] = []
    private var restartWanted = false
    private var terminateWanted = false
    private var creationSent = false
    private(set) var terminated = false
    /// The session asked to terminate (a terminate response is then the normal end).
    private(set) var closing = false
    /// A `type='terminate'` body has been delivered: the session is over on the server.
    private(set) var ended = false
    /// Responses that arrived ahead of an earlier rid's, held until it arrives.
    private var early: [UInt64: BOSHBody.Response] = [:]
    private var nextToDeliver: UInt64

    init(domain: String, wait: Int, firstRID: UInt64, slots: Int = 2) {
        self.domain = domain
        self.wait = wait
        self.slots = slots
        nextRID = firstRID
        nextToDeliver = firstRID
        maxOutstanding = slots
        busy = Array(repeating: nil, count: slots)
    }

    var outstanding: Int { busy.count { $0 != nil } }
    var hasQueued: Bool { !queued.isEmpty }
    /// The session has ended and every request has been answered (and so delivered: a response
    /// waits in rid order only behind an unanswered one): nothing more will come.
    var isDrained: Bool { ended && outstanding == 0 }

    /// The session opened its stream: the creation request, or a restart once the session exists.
    mutating func open() -> [Request] {
        if !creationSent {
            creationSent = true
            let body = BOSHBody.creation(rid: nextRID, to: domain, wait: wait)
            return [take(slot: 0, body: body, isPoll: false, opensStream: true)]
        }
        restartWanted = true
        return flush()
    }

    /// Serialized stanza bytes for the next request.
    mutating func enqueue(_ bytes: [UInt8]) {
        queued += bytes
    }

    /// The session ends its stream: terminate with whatever is queued.
    mutating func close() -> [Request] {
        terminateWanted = true
        closing = true
        return flush()
    }

    /// Sends what is waiting, if a connection is free and the server allows another request.
    mutating func flush() -> [Request] {
        guard let sid, !terminated else { return [] }
        let wanted = !queued.isEmpty || restartWanted || terminateWanted || outstanding == 0
        guard wanted, outstanding < maxOutstanding, let slot = busy.firstIndex(where: { $0 == nil }) else { return [] }
        let kind: BOSHBody.Kind =
            terminateWanted ? .terminate : restartWanted ? .restart(domain: domain) : .plain
        let payload = queued
        queued = []
        restartWanted = false
        if terminateWanted { terminated = true }
        let isPoll = payload.isEmpty && kind == .plain
        let opensStream: Bool
        if case .restart = kind { opensStream = true } else { opensStream = false }
        let body = BOSHBody.request(rid: nextRID, sid: sid, kind: kind, payload: payload)
        return [take(slot: slot, body: body, isPoll: isPoll, opensStream: opensStream)]
    }

    /// The response on `slot` arrived: returns the rid it answers (nil: no request was outstanding
    /// there) and the responses now deliverable in rid order. The caller delivers them, then calls
    /// `flush()`, so what the session answers rides the next request instead of an empty poll.
    mutating func responded(slot: Int, _ response: BOSHBody.Response) -> (answered: UInt64?, deliver: [Delivery]) {
        guard slot < busy.count, let rid = busy[slot] else { return (nil, []) }
        busy[slot] = nil
        if sid == nil, let given = response.sid {
            sid = given
            if let requests = response.requests { maxOutstanding = max(1, min(requests, slots)) }
        }
        if response.terminated { terminated = true }
        early[rid] = response
        var deliver: [Delivery] = []
        while let next = early.removeValue(forKey: nextToDeliver) {
            deliver.append(Delivery(rid: nextToDeliver, response: next))
            if next.terminated { ended = true }
            nextToDeliver &+= 1
        }
        return (rid, deliver)
    }

    /// Gives up on every request still outstanding (its response is not coming): frees their
    /// connections and returns their rids, lowest first, and the responses that waited behind them,
    /// in rid order. Afterwards nothing is outstanding and nothing more is sent.
    mutating func abandonOutstanding() -> (unanswered: [UInt64], deliver: [Delivery]) {
        let unanswered = busy.compactMap { $0 }.sorted()
        busy = Array(repeating: nil, count: slots)
        terminated = true
        var deliver: [Delivery] = []
        for rid in early.keys.sorted() {
            if let response = early.removeValue(forKey: rid) {
                deliver.append(Delivery(rid: rid, response: response))
                if response.terminated { ended = true }
            }
        }
        nextToDeliver = nextRID
        return (unanswered, deliver)
    }

    /// Marks `slot` busy with the next rid (the one `body` was built with).
    private mutating func take(slot: Int, body: [UInt8], isPoll: Bool, opensStream: Bool) -> Request {
        let rid = nextRID
        nextRID &+= 1
        busy[slot] = rid
        return Request(slot: slot, rid: rid, body: body, isPoll: isPoll, opensStream: opensStream)
    }
}

/// One session's XEP-0198 stream management bookkeeping, without I/O: the stanzas we sent that the
/// server has not acknowledged yet, how many stanzas we handled from the server (our `h`), and what
/// the server's `<enabled/>` granted (resumption id, preferred reconnect location, how long it keeps
/// the session).
///
/// Counting (XEP-0198 §4): our outbound count starts when we send `<enable/>` — every stanza (message,
/// presence, iq) sent after it is queued until an `<a h='N'/>` says the server handled the first N;
/// our inbound count starts when `<enabled/>` arrives. Counts are 32-bit and wrap (the XEP's modulo
/// 2^32 arithmetic). Only stanzas count: SM's own elements, stream features and SASL never do.
///
/// Invariants: `serverHandled ≤ sent`, and `unacknowledged.count == sent − serverHandled` (mod 2^32);
/// an ack for more than we sent is a protocol violation reported by `acknowledge`, and leaves the
/// state unchanged.
public struct StreamManagementState: Sendable {
    /// What the server granted in `<enabled/>`; nil until it arrived.
    public struct Grant: Sendable, Equatable {
        /// The resumption id (`id`); nil when the server did not allow resumption.
        public var resumptionID: String?
        /// Where to reconnect to resume (`location`, "host:port" or "host"), when the server said.
        public var location: String?
        /// How long the server keeps the session for resumption (`max`, seconds), when it said.
        public var maxSeconds: Int?

        public init(resumptionID: String?, location: String?, maxSeconds: Int?) {
            self.resumptionID = resumptionID
            self.location = location
            self.maxSeconds = maxSeconds
        }
    }

    /// Stanzas sent since `<enable/>`, mod 2^32.
    public private(set) var sent: UInt32 = 0
    /// The server's last acknowledged count, mod 2^32.
    public private(set) var serverHandled: UInt32 = 0
    /// Stanzas received from the server since `<enabled/>` (our `h`), mod 2^32.
    public private(set) var handled: UInt32 = 0
    /// Sent stanzas not yet acknowledged, oldest first.
    public private(set) var unacknowledged: [XMLElement] = []
    /// What `<enabled/>` granted; nil while we wait for it.
    public private(set) var grant: Grant?
    /// Stanzas sent since we last asked for an ack.
    public private(set) var sentSinceRequest = 0

    public init() {}

    /// True when the server granted resumption.
    public var canResume: Bool { grant?.resumptionID != nil }

    /// Whether `element` counts as a stanza for stream management.
    public static func isStanza(_ element: XMLElement) -> Bool {
        (element.name == "message" || element.name == "presence" || element.name == "iq")
            && (element.namespace == XMPPNamespace.client || element.namespace.isEmpty)
    }

    /// We sent `stanza`: queue it until acknowledged. Returns true when, with `requestEvery` (≥ 1)
    /// stanzas sent since the last request, it is time to ask for an ack (`<r/>`).
    public mutating func didSend(_ stanza: XMLElement, requestEvery: Int) -> Bool {
        sent &+= 1
        unacknowledged.append(stanza)
        sentSinceRequest += 1
        if sentSinceRequest >= requestEvery {
            sentSinceRequest = 0
            return true
        }
        return false
    }

    /// We handled a stanza from the server (only counted once `<enabled/>` arrived).
    public mutating func didReceiveStanza() {
        if grant != nil { handled &+= 1 }
    }

    /// The server's `<enabled/>` arrived: our inbound count starts here.
    public mutating func enabled(_ grant: Grant) {
        self.grant = grant
        handled = 0
    }

    /// The server says it handled `h` of our stanzas: forget the acknowledged ones. Returns the number
    /// forgotten, or nil when `h` acknowledges more than we sent (then nothing changes).
    @discardableResult
    public mutating func acknowledge(_ h: UInt32) -> Int? {
        let newly = h &- serverHandled
        let outstanding = sent &- serverHandled
        guard newly <= outstanding else { return nil }
        unacknowledged.removeFirst(Int(newly))
        serverHandled = h
        return Int(newly)
    }

    /// The stream was resumed and the server handled `h` of our stanzas: forget those, and return the
    /// rest, to send again (they count again as sent). Nil when `h` is more than we sent.
    public mutating func resumed(serverHandled h: UInt32) -> [XMLElement]? {
        guard acknowledge(h) != nil else { return nil }
        let resend = unacknowledged
        unacknowledged = []
        sent = serverHandled
        sentSinceRequest = 0
        return resend
    }

    // MARK: - Elements

    /// `<enable xmlns='urn:xmpp:sm:3' resume='true'/>` (without `resume` when not asked for).
    public static func enable(resume: Bool) -> XMLElement {
        XMLElement("enable", namespace: XMPPNamespace.streamManagement, attributes: resume ? ["resume": "true"] : [:])
    }

    /// `<r/>`: asks the server how many of our stanzas it handled.
    public static let request = XMLElement("r", namespace: XMPPNamespace.streamManagement)

    /// `<a h='N'/>`: our answer to the server's `<r/>`.
    public func answer() -> XMLElement {
        XMLElement("a", namespace: XMPPNamespace.streamManagement, attributes: ["h": String(handled)])
    }

    /// `<resume previd='ID' h='N'/>` for a new stream.
    public func resume() -> XMLElement? {
        guard let id = grant?.resumptionID else { return nil }
        return XMLElement("resume", namespace: XMPPNamespace.streamManagement, attributes: ["previd": id, "h": String(handled)])
    }

    /// The grant in an `<enabled/>` element (resumption only when `resume` is true or 1 and an id is given).
    public static func grant(in enabled: XMLElement) -> Grant {
        let resume = enabled.attribute("resume").map { $0 == "true" || $0 == "1" } ?? false
        return Grant(
            resumptionID: resume ? enabled.attribute("id") : nil, location: enabled.attribute("location"),
            maxSeconds: enabled.attribute("max").flatMap { Int($0) })
    }

    /// The `h` attribute of an `<a/>`, `<resumed/>` or `<failed/>` element, when present and valid.
    public static func handledCount(in element: XMLElement) -> UInt32? {
        element.attribute("h").flatMap { UInt32($0) }
    }
}

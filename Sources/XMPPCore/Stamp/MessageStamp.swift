/// The stamp every generated message carries, so its receiver can measure end-to-end latency and the
/// run can detect lost, duplicated and reordered messages.
///
/// Carried as `<stamp xmlns='urn:xmppload:stamp:0' r='RUN' s='SENDER' q='SEQ' t='SENT' i='INTENDED' n='NODE'/>`
/// inside the message. `sender` is the sending session's serial number in the run, `sequence` counts
/// that session's messages from 1 (never reused), `sentNanos` and `intendedNanos` are readings of the
/// run's session clock (monotonic nanoseconds since the run's clock origin, `SessionInstant`) for the
/// actual send and for the time the profile planned the send. `node` (optional, absent in stamps of
/// single-server runs and older versions) is the sender's server node (`host:port`), for the
/// sender-node × receiver-node latency matrix. Receivers ignore stamps of other runs.
public struct MessageStamp: Sendable, Hashable {
    public var runID: String
    public var sender: UInt32
    public var sequence: UInt32
    public var sentNanos: UInt64
    public var intendedNanos: UInt64
    public var node: String?

    public init(
        runID: String, sender: UInt32, sequence: UInt32, sentNanos: UInt64, intendedNanos: UInt64, node: String? = nil
    ) {
        self.node = node
        self.runID = runID
        self.sender = sender
        self.sequence = sequence
        self.sentNanos = sentNanos
        self.intendedNanos = intendedNanos
    }

    /// The element to put inside the message.
    public var element: XMLElement {
        var attributes = [
            XMLAttribute("r", runID),
            XMLAttribute("s", String(sender)),
            XMLAttribute("q", String(sequence)),
            XMLAttribute("t", String(sentNanos)),
            XMLAttribute("i", String(intendedNanos)),
        ]
        if let node { attributes.append(XMLAttribute("n", node)) }
        return XMLElement("stamp", namespace: XMPPNamespace.stamp, attributes: attributes)
    }

    /// The stamp inside `message`, or nil when it has none or it is malformed.
    public init?(in message: XMLElement) {
        guard let stamp = message.firstChild(named: "stamp", namespace: XMPPNamespace.stamp),
            let runID = stamp.attribute("r"),
            let sender = stamp.attribute("s").flatMap(UInt32.init),
            let sequence = stamp.attribute("q").flatMap(UInt32.init),
            let sent = stamp.attribute("t").flatMap(UInt64.init)
        else { return nil }
        self.init(
            runID: runID, sender: sender, sequence: sequence, sentNanos: sent,
            intendedNanos: stamp.attribute("i").flatMap(UInt64.init) ?? sent, node: stamp.attribute("n"))
    }
}

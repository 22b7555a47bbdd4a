/// The stamp every generated message carries, so its receiver can measure end-to-end latency and the
/// run can detect lost, duplicated and reordered messages.
///
/// Carried as `<stamp xmlns='urn:xmppload:stamp:0' r='RUN' s='SENDER' q='SEQ' t='SENT' i='INTENDED' n='NODE'/>`
/// inside the message. `sender` is the sending session's serial number in the run, `sequence` counts
/// that session's messages from 1 (never reused), `sentNanos` and `intendedNanos` are readings of the
/// run's session clock (monotonic nanoseconds since the run's clock origin, `SessionInstant`) for the
/// actual send and for the time the profile planned the send. `node` (optional, absent in stamps of
/// single-server runs and older versions) is the sender's server node (`host:port`), for the
/// sender-node × receiver-node latency matrix. `generator` (`g`, optional) tells apart generators
/// of one run that share a `--run-id` without `--segment`: their serial numbers overlap, so a
/// receiver keys each sender by (generator, sender). Receivers ignore stamps of other runs.
public struct MessageStamp: Sendable, Hashable {
    public var runID: String
    public var sender: UInt32
    public var sequence: UInt32
    public var sentNanos: UInt64
    public var intendedNanos: UInt64
    public var node: String?
    /// The sending generator's key (nonzero), in stamps of generators that share a `--run-id`
    /// without `--segment`; nil otherwise (segments have disjoint serials already).
    public var generator: UInt32?
    /// the sender generator's clock, in stamps of a `--segment` run (attributes `w`, `c`,
    /// `u`), so a receiver on another generator can place `sentNanos` on its own clock.
    public var clock: Clock?

    /// Where a generator's session clock stands (nanoseconds): `wallOrigin`, its origin on the
    /// generator's wall clock (since 1970); `offset` (server − wall) and `uncertainty` once estimated
    /// against the server's XEP-0202 time.
    public struct Clock: Sendable, Hashable {
        public var wallOrigin: Int64
        public var offset: Int64?
        public var uncertainty: Int64?

        public init(wallOrigin: Int64, offset: Int64? = nil, uncertainty: Int64? = nil) {
            self.wallOrigin = wallOrigin
            self.offset = offset
            self.uncertainty = uncertainty
        }

        /// What to add to a reading of `sender`'s session clock to place it on this one's: the
        /// origins' difference on the wall clocks, plus the wall clocks' disagreement measured
        /// against the server when it exceeds both estimates' uncertainty (else the wall clocks agree
        /// as far as anyone can tell). Either way the error is at most the two uncertainties added.
        public func shift(from sender: Clock) -> Int64 {
            var shift = sender.wallOrigin &- wallOrigin
            if let ours = offset, let theirs = sender.offset {
                let disagreement = theirs &- ours
                if disagreement.magnitude > (uncertainty ?? 0).magnitude &+ (sender.uncertainty ?? 0).magnitude {
                    shift = shift &+ disagreement
                }
            }
            return shift
        }
    }

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

    /// The ledger's key for this stamp's sender: the generator key in the high 32 bits (0 when
    /// none), the sender's serial in the low ones.
    public var senderKey: UInt64 { UInt64(generator ?? 0) << 32 | UInt64(sender) }

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
        if let generator { attributes.append(XMLAttribute("g", String(generator))) }
        return XMLElement("stamp", namespace: XMPPNamespace.stamp, attributes: attributes + clockAttributes)
    }

    /// Appends `element` as XML to `out`, byte for byte what `element.serialize(into:parentNamespace:)`
    /// writes under any other namespace, without building it (no arrays, no number strings).
    public func serialize(into out: inout [UInt8]) {
        XMLEscaping.appendRaw("<stamp xmlns='", to: &out)
        XMLEscaping.appendAttributeValue(XMPPNamespace.stamp, to: &out)
        out.append(UInt8(ascii: "'"))
        XMLEscaping.appendAttribute("r", runID, to: &out)
        XMLEscaping.appendAttribute("s", sender, to: &out)
        XMLEscaping.appendAttribute("q", sequence, to: &out)
        XMLEscaping.appendAttribute("t", sentNanos, to: &out)
        XMLEscaping.appendAttribute("i", intendedNanos, to: &out)
        if let node { XMLEscaping.appendAttribute("n", node, to: &out) }
        if let generator { XMLEscaping.appendAttribute("g", generator, to: &out) }
        if let clock {
            XMLEscaping.appendAttribute("w", clock.wallOrigin, to: &out)
            if let offset = clock.offset { XMLEscaping.appendAttribute("c", offset, to: &out) }
            if let uncertainty = clock.uncertainty { XMLEscaping.appendAttribute("u", uncertainty, to: &out) }
        }
        out.append(UInt8(ascii: "/"))
        out.append(UInt8(ascii: ">"))
    }

    private var clockAttributes: [XMLAttribute] {
        guard let clock else { return [] }
        return [XMLAttribute("w", String(clock.wallOrigin))]
            + (clock.offset.map { [XMLAttribute("c", String($0))] } ?? [])
            + (clock.uncertainty.map { [XMLAttribute("u", String($0))] } ?? [])
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
        generator = stamp.attribute("g").flatMap(UInt32.init).flatMap { $0 == 0 ? nil : $0 }
        clock = stamp.attribute("w").flatMap(Int64.init).map {
            Clock(wallOrigin: $0, offset: stamp.attribute("c").flatMap(Int64.init), uncertainty: stamp.attribute("u").flatMap(Int64.init))
        }
    }
}

import LoadResults

/// Who a virtual user is: its serial number in the run, the account slot it claimed and the account,
/// and where it was sent: its endpoint (first choice), that endpoint's node and its arrival index.
///
/// `slot` is the account's position in the run's range (0-based, the index into the online
/// directory); `accountNumber` is the N of `userN`. Plain value; it never changes (the node a
/// session is connected to after a fallback is the session's `ConnectionFeature`'s).
public struct SessionIdentity: Sendable, Equatable {
    // Stored small (memory per idle session): account numbers, endpoints and arrivals fit 32 bits.
    private let storedSerial: Int32
    private let storedSlot: Int32
    private let storedAccountNumber: Int32
    private let storedEndpoint: Int32
    private let storedArrival: Int32
    public let username: String
    public let bareJID: String
    /// The server node of the user's first-choice endpoint, in a run with several endpoints (nil: one
    /// server); its figures are also recorded per node.
    public let node: ServerNode?

    public var serial: Int { Int(storedSerial) }
    public var slot: Int { Int(storedSlot) }
    public var accountNumber: Int { Int(storedAccountNumber) }
    /// The user's first-choice endpoint (an index into the run's endpoints).
    public var endpoint: Int { Int(storedEndpoint) }
    /// The user's arrival index in the run (picks its place in an RFC 2782 order).
    public var arrival: Int { Int(storedArrival) }

    public init(
        serial: Int, slot: Int, accountNumber: Int, username: String, bareJID: String, node: ServerNode? = nil, endpoint: Int = 0,
        arrival: Int = 0
    ) {
        storedSerial = Int32(truncatingIfNeeded: serial)
        storedSlot = Int32(truncatingIfNeeded: slot)
        storedAccountNumber = Int32(truncatingIfNeeded: accountNumber)
        storedEndpoint = Int32(truncatingIfNeeded: endpoint)
        storedArrival = Int32(truncatingIfNeeded: arrival)
        self.username = username
        self.bareJID = bareJID
        self.node = node
    }
}

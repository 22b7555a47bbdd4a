import LoadResults

/// Who a virtual user is: its serial number in the run, the account slot it claimed and the account.
///
/// `slot` is the account's position in the run's range (0-based, the index into the online
/// directory); `accountNumber` is the N of `userN`. Plain value; it does not change when the user's
/// connection is replaced.
public struct SessionIdentity: Sendable, Equatable {
    public let serial: Int
    public let slot: Int
    public let accountNumber: Int
    public let username: String
    public let bareJID: String
    /// The server node this user connects to, in a run with several endpoints (nil: one server);
    /// its figures are also recorded per node. The connection layer moves it when a connect falls
    /// back to another endpoint (RFC 2782 order), so figures go to the node that served the session.
    public var node: ServerNode?

    public init(serial: Int, slot: Int, accountNumber: Int, username: String, bareJID: String, node: ServerNode? = nil) {
        self.node = node
        self.serial = serial
        self.slot = slot
        self.accountNumber = accountNumber
        self.username = username
        self.bareJID = bareJID
    }
}

/// What a SCRAM server-first message said about XEP-0474 downgrade protection.
public enum SCRAMDowngradeCheck: String, Sendable, Equatable {
    /// Not checked yet (no server-first message seen).
    case pending
    /// The server sent no downgrade-protection hash (a server without XEP-0474).
    case absent
    /// The server's hash matched the lists the client saw.
    case verified
}

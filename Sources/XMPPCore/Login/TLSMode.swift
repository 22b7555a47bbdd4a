/// How a connection uses TLS — the one enum shared by profiles (`login: {tls: …}`), the command
/// line (`--tls`) and the login machine. Raw values are the spellings users write.
public enum TLSMode: String, Sendable, Equatable, CaseIterable {
    /// Upgrade with STARTTLS; the server must offer it.
    case startTLS = "starttls"
    /// TLS from the first byte (Openfire's 5223): TLS is added before the stream opens.
    case direct
    /// Never TLS, even when offered.
    case none
}

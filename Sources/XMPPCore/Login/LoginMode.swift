/// Which login protocol a session may use (`--login`, the profile's `login: {mode: …}`).
/// Raw values are the spellings users write.
public enum LoginMode: String, Sendable, Equatable, CaseIterable {
    /// SASL2 (XEP-0388, with Bind2 and FAST where offered) when the server offers it, else the
    /// classic RFC 6120 login.
    case auto
    /// Always the classic login (RFC 6120 SASL, stream restart, resource bind), even when SASL2 is offered.
    case classic
    /// Always SASL2: a server that does not offer it fails the login with `sasl2-not-offered`.
    case sasl2
}

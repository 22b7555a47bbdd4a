/// The keys a SCRAM client needs: ClientKey (to sign), StoredKey (H(ClientKey)), ServerKey (to
/// verify the server). Derived from a `SCRAMKeyRequest`; secret: never log or print them.
public struct SCRAMKeys: Sendable, Equatable, CustomStringConvertible {
    let clientKey: [UInt8]
    let storedKey: [UInt8]
    let serverKey: [UInt8]

    public var description: String { "SCRAMKeys(redacted)" }
}

import Foundation

/// The client side of an HT-SHA-256-* exchange (draft-schmaus-kitten-sasl-ht, as XEP-0484 FAST uses
/// it): one message each way.
///
/// - initial response: `authcid NUL HMAC-SHA-256(token, "Initiator" ‖ cb-data)`
/// - server's additional data on success: `HMAC-SHA-256(token, "Responder" ‖ cb-data)`, verified in
///   constant time (a server that does not know the token cannot forge it).
///
/// `cb-data` is empty for `HT-SHA-256-NONE`, else the connection's data of the mechanism's type. The
/// token is the `token` attribute's text, as bytes; it is a secret: never logged, never in a description.
public struct HashedTokenClient: Sendable, CustomStringConvertible {
    public let mechanism: FASTMechanism
    private let username: [UInt8]
    private let token: [UInt8]
    private let channelBindingData: [UInt8]

    /// Nil when the mechanism needs channel-binding data the connection does not have.
    public init?(mechanism: FASTMechanism, username: String, token: String, channelBinding: ChannelBindingData) {
        var data: [UInt8] = []
        if let type = mechanism.channelBinding {
            guard let bound = channelBinding.data(for: type) else { return nil }
            data = bound
        }
        self.mechanism = mechanism
        self.username = Array(SASLprep.preparedOrUnchanged(username).utf8)
        self.token = Array(token.utf8)
        channelBindingData = data
    }

    /// `authcid NUL HMAC(token, "Initiator" ‖ cb-data)`.
    public func initialResponse() -> [UInt8] {
        username + [0] + CryptoPrimitives.hmac(.sha256, key: token, data: Self.initiator + channelBindingData)
    }

    /// Whether the server's `<additional-data>` (decoded) proves it knows the token.
    public func verifyServerProof(_ additionalData: [UInt8]) -> Bool {
        CryptoPrimitives.constantTimeEqual(
            additionalData, CryptoPrimitives.hmac(.sha256, key: token, data: Self.responder + channelBindingData))
    }

    private static let initiator = Array("Initiator".utf8)
    private static let responder = Array("Responder".utf8)

    /// The mechanism only: no token, no user.
    public var description: String { "HashedTokenClient(\(mechanism.name))" }
}

/// The SASL mechanism a login uses and how it treats channel binding, chosen from what the server
/// offers (one profile's mechanism list and the XEP-0440 types), what this connection can bind to
/// (`ChannelBindingData`), and `--sasl`. A pure function of those values.
///
/// Automatic choice (no `--sasl`):
/// - Without channel-binding data: the strongest of SCRAM-SHA-512/-256/-1, PLAIN (`SASLMechanism.preference`),
///   gs2 flag `n` — exactly the login of servers without these features.
/// - With it, XEP-0440's client rules: a `-PLUS` mechanism is used when the server advertises a
///   channel-binding type this connection has (strongest type first: tls-exporter, then
///   tls-server-end-point); then the strongest `-PLUS` wins over any mechanism without binding.
///   Rule 3: no `-PLUS` and no types advertised → a non-PLUS SCRAM with `y`. Rule 5: types advertised
///   but no `-PLUS` mechanism → `sasl-downgrade`. Rule 4 (SASL2 only; with SASL1 servers such as
///   ejabberd 23.01 offer `-PLUS` for tls-unique only): `-PLUS` offered without types →
///   `sasl-downgrade`. Rule 6 as XEP-0474 relaxes it: types advertised but none of ours → non-PLUS
///   with `n` (the downgrade-protection hash, when sent, still guards the lists).
/// - Forced (`--sasl`): the mechanism must be offered (`sasl-mechanism-not-offered`). A forced `-PLUS`
///   binds to the strongest common type, or — no types advertised — tls-server-end-point (XEP-0440's
///   mandatory type), else tls-exporter; with none available: `sasl-channel-binding`. A forced
///   non-PLUS SCRAM sends `y` only when no `-PLUS` is offered, else `n`; the rules above do not apply.
public struct MechanismChoice: Sendable, Equatable {
    public let mechanism: SASLMechanism
    /// For SCRAM: the gs2 flag and data; `.unsupported` for PLAIN and ANONYMOUS.
    public let channelBinding: SCRAMChannelBinding

    public init(mechanism: SASLMechanism, channelBinding: SCRAMChannelBinding = .unsupported) {
        self.mechanism = mechanism
        self.channelBinding = channelBinding
    }

    /// The choice, or the typed error that ends the login. `sasl2` selects XEP-0440 rule 4.
    public static func choose(
        offered: [String], channelBindingTypes advertised: [String]?, data: ChannelBindingData, forced: SASLMechanism?, sasl2: Bool
    ) -> Result<MechanismChoice, LoginError> {
        let ours = data.available
        let plusOffered = AuthenticationOffer.offersPlus(offered)
        let common = ours.first { (advertised ?? []).contains($0.name) }
        if let forced {
            guard let chosen = SASLMechanism.choose(offered: offered, forced: forced) else {
                return .failure(.forcedMechanismNotOffered(forced, offered: offered))
            }
            if chosen.usesChannelBinding {
                let type = common ?? (advertised == nil ? ours.sorted(by: Self.mandatoryFirst).first : nil)
                guard let type, let bytes = data.data(for: type) else {
                    return .failure(.channelBindingUnavailable(advertised: advertised, available: ours))
                }
                return .success(MechanismChoice(mechanism: chosen, channelBinding: .bound(type, bytes)))
            }
            return .success(MechanismChoice(mechanism: chosen, channelBinding: flag(chosen, ours: ours, plusOffered: plusOffered)))
        }
        if !ours.isEmpty {
            if let advertised, !advertised.isEmpty, !plusOffered {
                return .failure(.downgrade("channel-binding types are advertised (\(advertised.joined(separator: ", "))) but no -PLUS mechanism"))
            }
            if sasl2, plusOffered, advertised == nil {
                return .failure(.downgrade("-PLUS mechanisms are offered over SASL2 without XEP-0440 channel-binding types"))
            }
            if let common, let bytes = data.data(for: common),
                let plus = SASLMechanism.preferenceWithChannelBinding.first(where: { $0.usesChannelBinding && isOffered($0, in: offered) })
            {
                return .success(MechanismChoice(mechanism: plus, channelBinding: .bound(common, bytes)))
            }
        }
        guard let chosen = SASLMechanism.choose(offered: offered, forced: nil) else {
            return .failure(.noCommonMechanism(offered: offered))
        }
        return .success(MechanismChoice(mechanism: chosen, channelBinding: flag(chosen, ours: ours, plusOffered: plusOffered)))
    }

    /// The gs2 flag of a non-PLUS mechanism: `y` when this connection could bind but the server
    /// offered no `-PLUS`; `n` otherwise (and for PLAIN/ANONYMOUS, which have no flag).
    private static func flag(_ mechanism: SASLMechanism, ours: [ChannelBindingType], plusOffered: Bool) -> SCRAMChannelBinding {
        guard mechanism.scramAlgorithm != nil, !ours.isEmpty, !plusOffered else { return .unsupported }
        return .notOfferedByServer
    }

    private static func isOffered(_ mechanism: SASLMechanism, in offered: [String]) -> Bool {
        SASLMechanism.choose(offered: offered, forced: mechanism) != nil
    }

    /// tls-server-end-point first (XEP-0440 rule 1: the type every server must implement).
    private static func mandatoryFirst(_ lhs: ChannelBindingType, _ rhs: ChannelBindingType) -> Bool {
        lhs == .tlsServerEndPoint && rhs != .tlsServerEndPoint
    }
}

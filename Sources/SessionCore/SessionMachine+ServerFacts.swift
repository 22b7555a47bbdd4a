import LoadResults
import XMPPCore

/// The run's one probing session asks the server about itself after its first login — XEP-0092
/// software version and XEP-0030 disco#info of the domain — outside the profile's steps (not timed as
/// steps, not counted as the profile's stanzas' answers), and reports the answers to its host.
extension SessionMachine {
    static let versionQueryID = "xmppload-facts-version"
    static let discoQueryID = "xmppload-facts-disco"

    mutating func askServerAboutItself() {
        guard !hasProbed else { return }
        hasProbed = true
        send(
            Stanza.iq(
                type: "get", id: Self.versionQueryID, to: settings.domain,
                child: XMLElement("query", namespace: XMPPNamespace.version)))
        send(
            Stanza.iq(
                type: "get", id: Self.discoQueryID, to: settings.domain,
                child: XMLElement("query", namespace: XMPPNamespace.discoInfo)))
    }

    /// True when `stanza` answers one of the probe's queries (it is then reported and consumed).
    mutating func serverFactsAnswered(_ stanza: XMLElement) -> Bool {
        guard probesServer, stanza.name == "iq", let id = stanza.attribute("id"),
            id == Self.versionQueryID || id == Self.discoQueryID
        else { return false }
        guard stanza.attribute("type") == "result" else { return true }  // not answered: the facts stay unknown
        if id == Self.versionQueryID, let query = stanza.firstChild(named: "query", namespace: XMPPNamespace.version) {
            func text(_ name: String) -> String? {
                query.firstChild(named: name, namespace: XMPPNamespace.version).map(\.text).flatMap { $0.isEmpty ? nil : $0 }
            }
            host.learned(ServerFacts(softwareName: text("name"), softwareVersion: text("version"), operatingSystem: text("os")))
        } else if let query = stanza.firstChild(named: "query", namespace: XMPPNamespace.discoInfo) {
            let identities = query.children(named: "identity", namespace: XMPPNamespace.discoInfo).compactMap { identity in
                identity.attribute("category").flatMap { category in
                    identity.attribute("type").map { ServerFacts.Identity(category: category, type: $0, name: identity.attribute("name")) }
                }
            }
            let features = query.children(named: "feature", namespace: XMPPNamespace.discoInfo).compactMap { $0.attribute("var") }
            host.learned(ServerFacts(identities: identities, features: Array(Set(features)).sorted()))
        }
        return true
    }
}

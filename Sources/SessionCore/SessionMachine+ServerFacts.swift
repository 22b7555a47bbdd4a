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
        askServerTime(query: 1)
    }

    /// XEP-0202 entity time, asked `timeQueries` times one after the other (each
    /// query's id carries its number and send instant, so the session stores nothing); every answer
    /// goes to the host as a clock sample (`ClockOffset`, docs/CLUSTERS.md).
    public static let timeQueries = 5
    static let timeQueryPrefix = "xmppload-time-"

    mutating func askServerTime(query number: Int) {
        send(
            Stanza.iq(
                type: "get", id: "\(Self.timeQueryPrefix)\(number)-\(now.stampNanoseconds)", to: settings.domain,
                child: XMLElement("time", namespace: "urn:xmpp:time")))
    }

    /// True when `stanza` answers a time query (it is then reported, the next one sent, and consumed).
    mutating func serverTimeAnswered(_ stanza: XMLElement) -> Bool {
        guard probesServer, stanza.name == "iq", let id = stanza.attribute("id"), id.hasPrefix(Self.timeQueryPrefix) else { return false }
        let parts = id.dropFirst(Self.timeQueryPrefix.count).split(separator: "-")
        guard parts.count == 2, let number = Int(parts[0]), let sent = Int64(parts[1]), stanza.attribute("type") == "result",
            let utc = stanza.firstChild(named: "time", namespace: "urn:xmpp:time")?.firstChild(named: "utc", namespace: "urn:xmpp:time")?.text
        else { return true }
        host.serverTimeAnswered(sent: SessionInstant(nanoseconds: sent), received: now, utc: utc)
        if number < Self.timeQueries { askServerTime(query: number + 1) }
        return true
    }

    /// True when `stanza` answers one of the probe's queries (it is then reported and consumed).
    mutating func serverFactsAnswered(_ stanza: XMLElement) -> Bool {
        if serverTimeAnswered(stanza) { return true }
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

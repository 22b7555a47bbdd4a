// The run's one probing session: what it asks the server about itself and what the answers say.
import LoadResults
import XMPPCore

/// The run's one probing session asks the server about itself after its first login — XEP-0092
/// software version, XEP-0030 disco#info of the domain and XEP-0202 entity time — outside the
/// profile's steps (not timed as steps, not counted as the profile's answers), and reports the stream
/// features its login saw. The answers come back as `ServerFacts` and clock samples for the run's
/// manifest and clock offset.
///
/// Boxed: only one session per run has one (`SessionMachine.probesServer`).
final class ServerFactsProbe {
    static let versionQueryID = "xmppload-facts-version"
    static let discoQueryID = "xmppload-facts-disco"
    /// XEP-0202 entity time, asked this many times one after the other (each query's id carries its
    /// number and send instant, so the probe stores nothing per query).
    static let timeQueries = 5
    static let timeQueryPrefix = "xmppload-time-"

    /// Stream features offered during the login.
    private(set) var offeredFeatures: [ServerFacts.StreamFeature] = []
    /// The queries went out (once per session, not again after a reconnect).
    private var hasAsked = false

    /// Notes the stream features in a `<stream:features/>` seen while logging in.
    func noteFeatures(_ element: XMLElement) {
        guard element.name == "features", element.namespace == XMPPNamespace.streams else { return }
        for case .element(let feature) in element.children {
            let offered = ServerFacts.StreamFeature(name: feature.name, namespace: feature.namespace)
            if !offeredFeatures.contains(offered) { offeredFeatures.append(offered) }
        }
    }

    /// The queries to send after the first login (none after a reconnect).
    func queries(domain: String, now: SessionInstant) -> [XMLElement] {
        guard !hasAsked else { return [] }
        hasAsked = true
        return [
            Stanza.iq(type: "get", id: Self.versionQueryID, to: domain, child: XMLElement("query", namespace: XMPPNamespace.version)),
            Stanza.iq(type: "get", id: Self.discoQueryID, to: domain, child: XMLElement("query", namespace: XMPPNamespace.discoInfo)),
            Self.timeQuery(1, domain: domain, now: now),
        ]
    }

    static func timeQuery(_ number: Int, domain: String, now: SessionInstant) -> XMLElement {
        Stanza.iq(
            type: "get", id: "\(timeQueryPrefix)\(number)-\(now.stampNanoseconds)", to: domain,
            child: XMLElement("time", namespace: "urn:xmpp:time"))
    }

    /// What an answer to one of the probe's queries says.
    enum Answer: Equatable {
        /// Facts learned (the fields it did not learn are nil).
        case facts(ServerFacts)
        /// A time answer: a clock sample, and the next query when more are due.
        case clockSample(sent: SessionInstant, utc: String, next: XMLElement?)
        /// An answer without anything usable (an error): consumed, the facts stay unknown.
        case consumed
    }

    /// The meaning of `stanza` when it answers one of the probe's queries; nil when it does not.
    static func answer(_ stanza: XMLElement, domain: String, now: SessionInstant) -> Answer? {
        guard stanza.name == "iq", let id = stanza.attribute("id") else { return nil }
        if id.hasPrefix(timeQueryPrefix) {
            let parts = id.dropFirst(timeQueryPrefix.count).split(separator: "-")
            guard parts.count == 2, let number = Int(parts[0]), let sent = Int64(parts[1]), stanza.attribute("type") == "result",
                let utc = stanza.firstChild(named: "time", namespace: "urn:xmpp:time")?.firstChild(named: "utc", namespace: "urn:xmpp:time")?.text
            else { return .consumed }
            let next = number < timeQueries ? timeQuery(number + 1, domain: domain, now: now) : nil
            return .clockSample(sent: SessionInstant(nanoseconds: sent), utc: utc, next: next)
        }
        guard id == versionQueryID || id == discoQueryID else { return nil }
        guard stanza.attribute("type") == "result" else { return .consumed }
        if id == versionQueryID {
            guard let query = stanza.firstChild(named: "query", namespace: XMPPNamespace.version) else { return .consumed }
            func text(_ name: String) -> String? {
                query.firstChild(named: name, namespace: XMPPNamespace.version).map(\.text).flatMap { $0.isEmpty ? nil : $0 }
            }
            return .facts(ServerFacts(softwareName: text("name"), softwareVersion: text("version"), operatingSystem: text("os")))
        }
        guard let query = stanza.firstChild(named: "query", namespace: XMPPNamespace.discoInfo) else { return .consumed }
        let identities = query.children(named: "identity", namespace: XMPPNamespace.discoInfo).compactMap { identity in
            identity.attribute("category").flatMap { category in
                identity.attribute("type").map { ServerFacts.Identity(category: category, type: $0, name: identity.attribute("name")) }
            }
        }
        let features = query.children(named: "feature", namespace: XMPPNamespace.discoInfo).compactMap { $0.attribute("var") }
        return .facts(ServerFacts(identities: identities, features: Array(Set(features)).sorted()))
    }
}

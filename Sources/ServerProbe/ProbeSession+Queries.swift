// The probe's queries after login (disco, version, ping, time, presence echo, close) and the
// bounded request/answer exchange they share.

import Foundation
import LoadEngine
import LoadResults
import NIOCore
import NIOPosix
import SessionCore
import XMPPCore

extension ProbeSession {
    mutating func queries(_ report: inout ProbeReport) async throws {
        let domain = options.domain
        let (info, infoOutcome) = try await query(iq("disco-info", to: domain, XMLElement("query", namespace: XMPPNamespace.discoInfo)))
        let parsed = info.map(Self.discoInfo) ?? (identities: [], features: [])
        report.discoInfo = ProbeReport.DiscoInfo(outcome: infoOutcome, identities: parsed.identities, features: parsed.features)

        let itemsNamespace = "http://jabber.org/protocol/disco#items"
        let (items, itemsOutcome) = try await query(iq("disco-items", to: domain, XMLElement("query", namespace: itemsNamespace)))
        let jids =
            items?.firstChild(named: "query", namespace: itemsNamespace)?
            .children(named: "item", namespace: itemsNamespace).compactMap { $0.attribute("jid") } ?? []
        var muc: String?
        for jid in jids.prefix(Self.maxItems) where muc == nil {
            let (answer, _) = try await query(
                iq("item-info", to: jid, XMLElement("query", namespace: XMPPNamespace.discoInfo)), timeout: Self.itemTimeout)
            if let answer, Self.discoInfo(answer).identities.contains(where: { $0.category == "conference" && $0.type == "text" }) {
                muc = jid
            }
        }
        report.discoItems = ProbeReport.DiscoItems(outcome: itemsOutcome, items: jids, mucService: muc)

        let (version, versionOutcome) = try await query(iq("version", to: domain, XMLElement("query", namespace: XMPPNamespace.version)))
        let fields = version?.firstChild(named: "query", namespace: XMPPNamespace.version)
        func text(_ name: String) -> String? {
            fields?.firstChild(named: name, namespace: XMPPNamespace.version).map(\.text).flatMap { $0.isEmpty ? nil : $0 }
        }
        report.software = ProbeReport.Software(outcome: versionOutcome, name: text("name"), version: text("version"), os: text("os"))

        report.ping = try await query(iq("ping", to: domain, XMLElement("ping", namespace: XMPPNamespace.ping))).1

        report.entityTime = try await entityTime()

        presenceSentAt = .now()
        connection!.send(.element(Stanza.presence()))
        try await drain(until: presenceSentAt! + options.presenceWait) { $0.echoAt != nil }
        report.presence = ProbeReport.PresenceEcho(
            echoed: echoAt != nil, latencyMilliseconds: echoAt.map { PhaseTimer.milliseconds(from: presenceSentAt!, to: $0) },
            waitedMilliseconds: Double(options.presenceWait.nanoseconds) / 1e6)

        let closing = NIODeadline.now()
        connection!.send(.close)
        var closedAt: NIODeadline?
        while closedAt == nil, let arrival = try await connection!.next(within: closing + Self.closeWait - .now()) {
            switch arrival.event {
            case .closed: closedAt = arrival.at
            case .failed: break
            default: continue
            }
            if case .failed = arrival.event { break }
        }
        report.streamClose = ProbeReport.StreamClose(
            answered: closedAt != nil, milliseconds: closedAt.map { PhaseTimer.milliseconds(from: closing, to: $0) })
    }

    /// XEP-0202, `SessionMachine.timeQueries` queries one after the other (spaced out for a coarse
    /// server clock); the first one's outcome
    /// and the clock offset estimated from every answer (`ClockOffset.estimate`).
    private mutating func entityTime() async throws -> ProbeReport.EntityTime {
        var samples: [ClockOffset.Sample] = []
        var first: ProbeReport.QueryOutcome?
        for _ in 0..<SessionMachine.timeQueries {
            let wallSent = Int64(Date().timeIntervalSince1970 * 1e9)
            let (answer, outcome) = try await query(iq("time", to: options.domain, XMLElement("time", namespace: "urn:xmpp:time")))
            if first == nil { first = outcome }
            guard outcome.answer == .result, let rtt = outcome.roundTripMilliseconds,
                let utc = answer?.firstChild(named: "time", namespace: "urn:xmpp:time")?.firstChild(named: "utc", namespace: "urn:xmpp:time")?.text,
                let server = ClockOffset.serverTime(utc: utc)
            else { break }
            samples.append(
                ClockOffset.Sample(
                    sent: wallSent, received: wallSent + Int64(rtt * 1e6), server: server.nanoseconds, resolution: server.resolution))
            // A server that answers in whole seconds (Prosody, jabberd2) pins the offset to a second
            // per sample; samples at different phases of its second narrow that down (ClockOffset).
            if server.resolution >= 100_000_000 && samples.count < SessionMachine.timeQueries {
                try await Task.sleep(for: Self.coarseClockSpacing)
            }
        }
        return ProbeReport.EntityTime(outcome: first ?? ProbeReport.QueryOutcome(answer: .timeout), clock: ClockOffset.estimate(samples))
    }

    /// (identities, sorted features) of a disco#info result.
    static func discoInfo(_ iq: XMLElement) -> (identities: [ServerFacts.Identity], features: [String]) {
        guard let query = iq.firstChild(named: "query", namespace: XMPPNamespace.discoInfo) else { return ([], []) }
        let identities = query.children(named: "identity", namespace: XMPPNamespace.discoInfo).compactMap { identity in
            identity.attribute("category").flatMap { category in
                identity.attribute("type").map { ServerFacts.Identity(category: category, type: $0, name: identity.attribute("name")) }
            }
        }
        let features = query.children(named: "feature", namespace: XMPPNamespace.discoInfo).compactMap { $0.attribute("var") }
        return (identities, Array(Set(features)).sorted())
    }

    // MARK: - Conversation

    mutating func nextID(_ what: String) -> String {
        queryCount += 1
        return "xmppload-probe-\(what)-\(queryCount)"
    }

    private mutating func iq(_ what: String, to: String, _ child: XMLElement) -> XMLElement {
        Stanza.iq(type: "get", id: nextID(what), to: to, child: child)
    }

    /// Sends `request` (an iq with an id) and waits for its result or error, at most `timeout`
    /// (default `Options.replyTimeout`).
    mutating func query(_ request: XMLElement, timeout: TimeAmount? = nil) async throws -> (XMLElement?, ProbeReport.QueryOutcome) {
        let id = request.attribute("id") ?? ""
        let sent = NIODeadline.now()
        connection!.send(.element(request))
        var answer: (XMLElement, NIODeadline)?
        try await drain(until: sent + (timeout ?? options.replyTimeout)) { _ in
            answer != nil
        } onElement: { element, at in
            guard element.name == "iq", element.attribute("id") == id else { return false }
            let type = element.attribute("type")
            guard type == "result" || type == "error" else { return false }
            answer = (element, at)
            return true
        }
        guard let (reply, at) = answer else { return (nil, ProbeReport.QueryOutcome(answer: .timeout)) }
        let rtt = PhaseTimer.milliseconds(from: sent, to: at)
        if reply.attribute("type") == "result" { return (reply, ProbeReport.QueryOutcome(answer: .result, roundTripMilliseconds: rtt)) }
        let condition = Stanza.errorCondition(of: reply, conditionNamespace: XMPPNamespace.stanzas)
        return (reply, ProbeReport.QueryOutcome(answer: .error, condition: condition, roundTripMilliseconds: rtt))
    }

    /// Reads arrivals until `done` holds or `deadline` passes. Each element goes to `onElement` first
    /// (true: taken); otherwise a stream error ends the probe, our own presence coming back is noted,
    /// and an iq get/set is answered as a session answers it. A closed or failed connection ends the
    /// probe.
    private mutating func drain(
        until deadline: NIODeadline, _ done: (ProbeSession) -> Bool,
        onElement: (XMLElement, NIODeadline) -> Bool = { _, _ in false }
    ) async throws {
        while !done(self) {
            let remaining = deadline - .now()
            guard remaining > .zero, let arrival = try await connection!.next(within: remaining) else { return }
            switch arrival.event {
            case .element(let element):
                if onElement(element, arrival.at) { continue }
                if element.name == "error" && element.namespace == XMPPNamespace.streams {
                    let condition = Stanza.errorCondition(of: element, conditionNamespace: XMPPNamespace.streamErrors)
                    throw ProbeAbort(phase: phase, kind: "stream-\(condition)", detail: "stream error <\(condition)/>")
                }
                if element.name == "presence", presenceSentAt != nil, echoAt == nil, element.attribute("from") == boundJID,
                    element.attribute("type") == nil
                {
                    echoAt = arrival.at
                } else if let reply = AutoResponder.react(to: element).reply {
                    connection!.send(.element(reply))
                }
            case .closed:
                throw ProbeAbort(phase: phase, kind: "stream-closed", detail: "the server closed the stream")
            case .failed(let kind, let detail):
                throw ProbeAbort(phase: phase, kind: kind, detail: detail)
            case .opened, .tlsEstablished:
                continue
            }
        }
    }
}

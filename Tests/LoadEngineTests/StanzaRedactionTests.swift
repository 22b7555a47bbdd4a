import LoadResults
import SessionCore
import Testing
import XMPPCore

@testable import LoadEngine

/// Credentials and SASL payloads never reach forensics (`StanzaRedaction`), and the transcript ring
/// keeps only the last entries (`SessionTranscript`).
@Suite struct StanzaRedactionTests {
    static let password = "s3cr3t-Passw0rd"

    struct Row: Sendable, CustomStringConvertible {
        let name: String
        let xml: String
        /// Text that must remain (the stanza is still recognisable).
        let kept: [String]
        var description: String { name }
    }

    static let rows: [Row] = [
        Row(
            name: "SASL PLAIN auth", xml: "<auth xmlns='urn:ietf:params:xml:ns:xmpp-sasl' mechanism='PLAIN'>AHVzZXIxAHMzY3IzdC1QYXNzdzByZA==</auth>",
            kept: ["mechanism='PLAIN'", "[redacted]"]),
        Row(
            name: "SCRAM response", xml: "<response xmlns='urn:ietf:params:xml:ns:xmpp-sasl'>Yz1iaXdzLHI9cjEscD1wcm9vZg==</response>",
            kept: ["<response", "[redacted]"]),
        Row(
            name: "SCRAM challenge", xml: "<challenge xmlns='urn:ietf:params:xml:ns:xmpp-sasl'>cj1yMSxzPXNhbHQsaT00MDk2</challenge>",
            kept: ["<challenge", "[redacted]"]),
        Row(name: "SCRAM success", xml: "<success xmlns='urn:ietf:params:xml:ns:xmpp-sasl'>dj12ZXJpZmllcg==</success>", kept: ["<success"]),
        Row(
            name: "in-band registration",
            xml:
                "<iq type='set' id='reg1'><query xmlns='jabber:iq:register'><username>user1</username><password>s3cr3t-Passw0rd</password></query></iq>",
            kept: ["<username>user1</username>", "<password>[redacted]</password>"]),
        Row(
            name: "registration error echoing the form",
            xml:
                "<iq type='error' id='reg1'><query xmlns='jabber:iq:register'><password>s3cr3t-Passw0rd</password></query><error type='cancel'><not-allowed xmlns='urn:ietf:params:xml:ns:xmpp-stanzas'/></error></iq>",
            kept: ["not-allowed"]),
        Row(
            name: "registration data form",
            xml:
                "<iq type='set' id='reg2'><query xmlns='jabber:iq:register'><x xmlns='jabber:x:data' type='submit'><field var='username'><value>user1</value></field><field var='password'><value>s3cr3t-Passw0rd</value></field></x></query></iq>",
            kept: ["<value>user1</value>", "<value>[redacted]</value>"]),
        Row(
            name: "legacy auth (XEP-0078)",
            xml:
                "<iq type='set' id='auth1'><query xmlns='jabber:iq:auth'><username>user1</username><password>s3cr3t-Passw0rd</password><digest>s3cr3t-Passw0rd</digest><resource>r</resource></query></iq>",
            kept: ["<resource>r</resource>", "<digest>[redacted]</digest>"]),
        Row(
            name: "MUC room password",
            xml:
                "<presence to='room@conference.load.test/nick'><x xmlns='http://jabber.org/protocol/muc'><password>s3cr3t-Passw0rd</password></x></presence>",
            kept: ["room@conference.load.test/nick"]),
        Row(
            name: "password attribute", xml: "<iq type='set' id='x1'><query xmlns='urn:example' password='s3cr3t-Passw0rd'/></iq>",
            kept: ["password='[redacted]'"]),
        Row(
            name: "SASL2 authenticate",
            xml:
                "<authenticate xmlns='urn:xmpp:sasl:2' mechanism='PLAIN'><initial-response>AHVzZXIxAHMzY3IzdC1QYXNzdzByZA==</initial-response><user-agent id='d4565fa7-4d72-4749-b3d3-740edbf87770'><software>xmppload</software></user-agent></authenticate>",
            kept: ["mechanism='PLAIN'", "<initial-response>[redacted]</initial-response>", "<software>xmppload</software>"]),
        Row(
            name: "SASL2 SCRAM response", xml: "<response xmlns='urn:xmpp:sasl:2'>Yz1iaXdzLHI9cjEscD1wcm9vZg==</response>",
            kept: ["<response", "[redacted]"]),
        Row(
            name: "SASL2 success with a FAST token",
            xml:
                "<success xmlns='urn:xmpp:sasl:2'><additional-data>dj12ZXJpZmllcg==</additional-data><token xmlns='urn:xmpp:fast:0' token='s3cr3t-Passw0rd' expiry='2030-01-01T00:00:00Z'/><authorization-identifier>user1@load.test/r</authorization-identifier></success>",
            kept: ["token='[redacted]'", "expiry='2030-01-01T00:00:00Z'", "user1@load.test/r"]),
        Row(
            name: "SASL failure keeps the server's words",
            xml: "<failure xmlns='urn:ietf:params:xml:ns:xmpp-sasl'><not-authorized/><text>wrong s3cr3t-Passw0rd?</text></failure>",
            kept: ["<not-authorized/>"]),
    ]

    @Test(arguments: rows) func secretsAreRedactedAndTheStanzaStaysReadable(_ row: Row) throws {
        let parser = StanzaParser()
        let header = try parser.parseHeader(Array("<stream:stream xmlns='jabber:client' xmlns:stream='http://etherx.jabber.org/streams'>".utf8))
        let element = try parser.parseElement(Array(row.xml.utf8), in: header)
        let text = StanzaRedaction.text(of: .element(element))
        for kept in row.kept { #expect(text.contains(kept), "\(row.name): \(text)") }
        if row.name.hasPrefix("SASL failure") {
            // The server's own text is kept, even when it repeats what we sent: it is not our payload.
            #expect(text.contains("wrong"))
        } else {
            #expect(!text.contains(Self.password), "\(row.name): \(text)")
            #expect(!text.contains("AHVzZXIx"), "\(row.name): \(text)")
            #expect(!text.contains("cj1yMSxz") && !text.contains("dj12ZXJp") && !text.contains("Yz1iaXdz"), "\(row.name): \(text)")
        }
    }

    @Test func streamManagementIsKeptAsIs() throws {
        let element = XMLElement("resume", namespace: "urn:xmpp:sm:3", attributes: ["previd": "abc", "h": "3"])
        #expect(StanzaRedaction.redacted(element) == element)
    }

    @Test(arguments: [
        ("<auth xmlns='urn:ietf:params:xml:ns:xmpp-sasl' mechanism='PLAIN'>AHVzZXIxAHMzY3IzdC1QYXNzdzByZA==</auth>", "AHVzZXIx"),
        ("<iq type='set'><query xmlns='jabber:iq:register'><password>s3cr3t-Passw0rd</password></query></iq>", "s3cr3t"),
        ("<x:password xmlns:x='urn:x'>s3cr3t-Passw0rd</x:password>", "s3cr3t"),
        ("<join room='r' password=\"s3cr3t-Passw0rd\"/>", "s3cr3t"),
        ("<password>s3cr3t-Passw0rd", "s3cr3t"),
        ("<authenticate xmlns='urn:xmpp:sasl:2' mechanism='PLAIN'><initial-response>AHVzZXIx</initial-response></authenticate>", "AHVzZXIx"),
        ("<token xmlns='urn:xmpp:fast:0' token='s3cr3t-Passw0rd'/>", "s3cr3t"),
    ])
    func rawTextIsScannedForTheSameSecrets(_ raw: String, _ secret: String) {
        let text = StanzaRedaction.redactedRaw(raw)
        #expect(!text.contains(secret), "\(text)")
        #expect(text.contains("[redacted]"))
    }

    @Test func theRingKeepsTheLastEntriesOldestFirst() {
        let ring = SessionTranscript()
        for index in 0..<(SessionTranscript.capacity + 3) {
            ring.append(.event, .event("e\(index)"), at: SessionInstant(nanoseconds: Int64(index) * 1_000_000))
        }
        #expect(ring.count == SessionTranscript.capacity)
        let stanzas = ring.stanzas(since: .zero)
        #expect(stanzas.map(\.text) == (3..<(SessionTranscript.capacity + 3)).map { "e\($0)" })
        #expect(stanzas.first?.atMilliseconds == 3)
    }

    @Test func aFewEntriesComeOutInOrderWithTheirTimes() {
        let ring = SessionTranscript()
        ring.append(.sent, .ourStreamOpen(domain: "load.test"), at: SessionInstant(nanoseconds: 1_500_000))
        ring.append(.received, .streamClose, at: SessionInstant(nanoseconds: 2_000_000))
        let stanzas = ring.stanzas(since: SessionInstant(nanoseconds: 500_000))
        #expect(stanzas.map(\.direction) == [.sent, .received])
        #expect(stanzas.map(\.atMilliseconds) == [1, 1.5])
        #expect(
            stanzas[0].text == "<stream:stream xmlns='jabber:client' xmlns:stream='http://etherx.jabber.org/streams' version='1.0' to='load.test'>")
        #expect(stanzas[1].text == "</stream:stream>")
    }
}

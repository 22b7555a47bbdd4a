import Testing
import XMPPCore

@testable import SessionCore

/// What a report shows beside an error kind: the server's `<text/>` of a stanza error, and the login
/// or XML error's own description (e.g. the SASL mechanisms the server offered).
@Suite struct SessionErrorDetailTests {
    static func errorStanza(text: String?) -> XMLElement {
        var error = XMLElement(
            "error", namespace: XMPPNamespace.client, attributes: ["type": "cancel"],
            children: [.element(XMLElement("forbidden", namespace: XMPPNamespace.stanzas))])
        if let text {
            error.children.append(.element(XMLElement("text", namespace: XMPPNamespace.stanzas, children: [.text(text)])))
        }
        return XMLElement("iq", namespace: XMPPNamespace.client, attributes: ["type": "error", "id": "r1"], children: [.element(error)])
    }

    @Test func theServersTextOfAStanzaError() {
        #expect(SessionError.serverText(of: Self.errorStanza(text: "Room is members-only")) == "Room is members-only")
        #expect(SessionError.serverText(of: Self.errorStanza(text: nil)) == nil)
        #expect(SessionError.serverText(of: Self.errorStanza(text: "")) == nil)
        let bare = XMLElement("iq", namespace: XMPPNamespace.client, attributes: ["type": "error"])
        #expect(SessionError.serverText(of: bare) == nil)
    }

    @Test func loginErrorsCarryTheirDescription() throws {
        let noMechanism = SessionError.login(.noCommonMechanism(offered: ["X-OAUTH2", "DIGEST-MD5"]))
        #expect(noMechanism.kind == "sasl-no-common-mechanism")
        #expect(try #require(noMechanism.detail).contains("X-OAUTH2, DIGEST-MD5"))
        #expect(SessionError.writeStalled.detail == nil)
        #expect(SessionError.connection(.tlsCertificate(.selfSigned)).detail == nil)
    }
}

// Removes credentials and SASL payloads from stanzas before forensics keep their text.
import LoadResults
import XMPPCore

/// Credentials and SASL payloads out of a stanza, as pure functions (table-tested): what a failed
/// session's transcript (`SessionTranscript`) goes through before its text is kept.
///
/// Redacted (their text, or value, becomes `[redacted]`):
/// - every SASL element's text (`urn:ietf:params:xml:ns:xmpp-sasl`: `<auth>`, `<response>`,
///   `<challenge>`, `<success>`), whatever the mechanism: PLAIN carries the password in base64, SCRAM
///   the proof, salt and verifier; `<failure>` keeps its condition and `<text/>` (the server's words);
/// - SASL2's payloads (`urn:xmpp:sasl:2`: `<initial-response>`, `<response>`, `<challenge>`,
///   `<additional-data>`), and XEP-0484's FAST token (`<token token=…/>` in `urn:xmpp:fast:0`: the
///   attribute), so neither a password, a proof nor a token reaches forensics;
/// - `<password>` in any namespace (XEP-0077 `jabber:iq:register`, XEP-0078 `jabber:iq:auth`, MUC room
///   passwords), and XEP-0078's `<digest>`, `<hash>`, `<token>` and `<sequence>`;
/// - the `<value>`s of a data-form `<field>` whose `var` contains "password" (XEP-0077 forms);
/// - any attribute named `password`.
/// XEP-0198 carries nothing secret and is kept. A profile's `raw` text is redacted by a textual scan of
/// the same element names (it was never parsed).
enum StanzaRedaction {
    static let mask = "[redacted]"

    /// Elements whose text is a secret in this namespace ("" matches any namespace).
    private static func isSecret(_ element: XMLElement) -> Bool {
        switch (element.name, element.namespace) {
        case ("auth", XMPPNamespace.sasl), ("response", XMPPNamespace.sasl), ("challenge", XMPPNamespace.sasl),
            ("success", XMPPNamespace.sasl):
            return true
        case ("initial-response", AuthenticationOffer.sasl2Namespace), ("response", AuthenticationOffer.sasl2Namespace),
            ("challenge", AuthenticationOffer.sasl2Namespace), ("additional-data", AuthenticationOffer.sasl2Namespace):
            return true
        case ("password", _):
            return true
        case ("digest", legacyAuth), ("hash", legacyAuth), ("token", legacyAuth), ("sequence", legacyAuth):
            return true
        default:
            return false
        }
    }

    /// XEP-0078 non-SASL authentication.
    static let legacyAuth = "jabber:iq:auth"

    /// `element` with every secret replaced by `mask` (see the type's list).
    static func redacted(_ element: XMLElement) -> XMLElement {
        var copy = element
        let fastToken = element.name == "token" && element.namespace == AuthenticationOffer.fastNamespace
        copy.attributes = element.attributes.map {
            $0.name == "password" || (fastToken && $0.name == "token") ? XMLAttribute($0.name, mask) : $0
        }
        if isSecret(element) {
            copy.children = element.text.isEmpty ? [] : [.text(mask)]
            return copy
        }
        let passwordField =
            element.name == "field" && element.namespace == XMPPNamespace.dataForms
            && (element.attribute("var")?.lowercased().contains("password") ?? false)
        copy.children = element.children.map { node in
            guard case .element(let child) = node else { return node }
            if passwordField, child.name == "value" {
                return .element(XMLElement(child.name, namespace: child.namespace, attributes: child.attributes, children: [.text(mask)]))
            }
            return .element(redacted(child))
        }
        return copy
    }

    /// Element names whose content a textual scan of `raw` text masks.
    static let secretNames = [
        "auth", "response", "challenge", "success", "password", "digest", "hash", "token", "sequence", "initial-response",
        "additional-data",
    ]

    /// `text` (a profile's raw XML) with the content of every element named in `secretNames` and the
    /// value of every `password` and `token` attribute replaced by `mask`; a scan, not a parse, so it
    /// also works on text that is not well-formed.
    static func redactedRaw(_ text: String) -> String {
        var result = text
        for name in secretNames {
            result = maskContent(of: name, in: result)
        }
        return maskAttributes(named: "token=", in: maskAttributes(named: "password=", in: result))
    }

    private static func maskContent(of name: String, in text: String) -> String {
        var out = ""
        var rest = Substring(text)
        while let open = findTag(name, in: rest) {
            out += rest[..<open.upperBound]
            rest = rest[open.upperBound...]
            if rest.first == nil { break }
            // Self-closing tag: nothing inside.
            if out.hasSuffix("/>") { continue }
            if let close = rest.range(of: "</") {
                out += mask
                rest = rest[close.lowerBound...]
            } else {
                out += mask
                rest = ""
            }
        }
        return out + rest
    }

    /// The range of the next start tag `<name …>` or `<prefix:name …>` in `text`, through its `>`.
    private static func findTag(_ name: String, in text: Substring) -> Range<Substring.Index>? {
        var search = text[...]
        while let lt = search.firstIndex(of: "<") {
            let afterLT = search.index(after: lt)
            var nameEnd = afterLT
            while nameEnd < search.endIndex, !" \t\r\n/>".contains(search[nameEnd]) { nameEnd = search.index(after: nameEnd) }
            let qualified = search[afterLT..<nameEnd]
            let local = qualified.split(separator: ":").last.map(String.init) ?? ""
            if local == name, let gt = search[nameEnd...].firstIndex(of: ">") {
                return lt..<search.index(after: gt)
            }
            search = search[afterLT...]
        }
        return nil
    }

    private static func maskAttributes(named attribute: String, in text: String) -> String {
        var out = ""
        var rest = Substring(text)
        while let found = rest.range(of: attribute) {
            out += rest[..<found.upperBound]
            rest = rest[found.upperBound...]
            guard let quote = rest.first, quote == "'" || quote == "\"" else { continue }
            let valueStart = rest.index(after: rest.startIndex)
            let valueEnd = rest[valueStart...].firstIndex(of: quote) ?? rest.endIndex
            out += String(quote) + mask
            rest = rest[valueEnd...]
        }
        return out + rest
    }

    /// A transcript entry as text, redacted (the caller cuts it to `FailureForensics.maxStanzaBytes`).
    static func text(of content: SessionTranscript.Content) -> String {
        switch content {
        case .element(let element):
            return redacted(element).serialized(parentNamespace: XMPPNamespace.client)
        case .message(let message):
            return text(of: .element(message.element))
        case .serverStreamOpen(let header):
            var bytes: [UInt8] = []
            header.serialize(into: &bytes, withDeclaration: false)
            return String(decoding: bytes, as: UTF8.self)
        case .ourStreamOpen(let domain):
            let header = String(decoding: Stanza.streamHeader(to: domain), as: UTF8.self)
            return header.hasPrefix("<?xml version='1.0'?>") ? String(header.dropFirst("<?xml version='1.0'?>".count)) : header
        case .streamClose:
            return "</stream:stream>"
        case .raw(let text):
            return redactedRaw(text)
        case .event(let text):
            return text
        }
    }
}

import Testing

@testable import XMPPCore

@Suite struct JIDTests {
    @Test(
        arguments: [
            ("user1@load.test/xmppload-1", "user1", "load.test", "xmppload-1"),
            ("user1@load.test", "user1", "load.test", nil),
            ("load.test", nil, "load.test", nil),
            ("load.test/resource", nil, "load.test", "resource"),
            ("u@Load.TEST.", "u", "load.test", nil),
            ("u@d/res/with/slashes@and@ats", "u", "d", "res/with/slashes@and@ats"),
            ("u@d/with space", "u", "d", "with space"),
            ("jürgen@例え.テスト/📱", "jürgen", "例え.テスト", "📱"),
            ("room@conference.load.test/Nick Name", "room", "conference.load.test", "Nick Name"),
            ("[::1]", nil, "[::1]", nil),
        ] as [(String, String?, String, String?)])
    func parsesValidJIDs(string: String, local: String?, domain: String, resource: String?) throws {
        let jid = try JID(string)
        #expect(jid.local == local)
        #expect(jid.domain == domain)
        #expect(jid.resource == resource)
    }

    @Test(arguments: [
        "",
        "@load.test",
        "user@",
        "user@/res",
        "user@load.test/",
        "/res",
        "us er@load.test",
        "us:er@load.test",
        "us<er@load.test",
        "us\"er@load.test",
        "us&er@load.test",
        "us'er@load.test",
        "load test",
        "user@load.test/res\u{7}",
        "user@load.test/res\n",
        String(repeating: "a", count: 1024) + "@load.test",
        "u@" + String(repeating: "d", count: 1024),
    ])
    func rejectsInvalidJIDs(string: String) {
        #expect { try JID(string) } throws: { ($0 as? JIDError)?.kind == "jid-invalid" }
    }

    @Test func descriptionBareAndResource() throws {
        let full = try JID("User1@LOAD.test/phone")
        #expect(full.description == "User1@load.test/phone")
        #expect(full.bare.description == "User1@load.test")
        #expect(full.bare.isBare)
        #expect(!full.isBare)
        #expect(try full.bare.withResource("desk") == JID("User1@load.test/desk"))
        #expect(try JID("load.test").description == "load.test")
    }

    @Test func equalityAndHashingIgnoreDomainCaseOnly() throws {
        #expect(try JID("u@LOAD.TEST/r") == JID("u@load.test/r"))
        #expect(try JID("U@load.test") != JID("u@load.test"))
        #expect(try JID("u@load.test/R") != JID("u@load.test/r"))
        let set: Set<JID> = [try JID("a@b/c"), try JID("a@B/c"), try JID("a@b")]
        #expect(set.count == 2)
    }

    @Test func buildsFromParts() throws {
        let jid = try JID(local: "user7", domain: "load.test", resource: "xmppload")
        #expect(jid.description == "user7@load.test/xmppload")
        #expect { try JID(local: "a@b", domain: "load.test") } throws: { $0 is JIDError }
        #expect { try JID(local: nil, domain: "") } throws: { $0 is JIDError }
    }

    @Test func errorDescriptionsNameThePart() {
        do {
            _ = try JID("us er@load.test")
            Issue.record("no error")
        } catch {
            #expect(error.description == "invalid JID: localpart contains forbidden character U+20")
        }
    }
}

import LoadProfile
import Testing

@testable import LoadEngine

/// DNS queries and responses as bytes. The responses were recorded from dnsmasq 2.90 (Debian 12) with
/// `--srv-host=_xmpp-client._tcp.load.test,node1.load.test,5222,0,30` (node2 5223 0 10, backup 5224
/// 10 5), `--host-record=node1.load.test,127.0.0.2`, `node2.load.test,127.0.0.3,::1`,
/// `backup.load.test,127.0.0.4`, `plain.load.test,127.0.0.5` and `--srv-host=_xmpps-client._tcp.none.test`.
@Suite struct DNSMessageTests {
    static func bytes(_ hex: String) -> [UInt8] {
        var result: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            result.append(UInt8(hex[index..<next], radix: 16)!)
            index = next
        }
        return result
    }

    static let srvResponse = bytes(
        "1234858000010003000000040c5f786d70702d636c69656e74045f746370046c6f616404746573740000210001c00c00210001000000000018000a00051468066261636b7570046c6f6164047465737400c00c002100010000000000170000000a1467056e6f646532046c6f6164047465737400c00c002100010000000000170000001e1466056e6f646531046c6f6164047465737400c063000100010000000000047f000003c063001c000100000000001000000000000000000000000000000001c086000100010000000000047f000002c03f000100010000000000047f000004"
    )
    static let aaaaResponse = bytes(
        "234585800001000100000000056e6f646532046c6f6164047465737400001c0001c00c001c000100000000001000000000000000000000000000000001")
    static let aResponse = bytes("34568580000100010000000005706c61696e046c6f616404746573740000010001c00c000100010000000000047f000005")
    static let noServiceResponse = bytes(
        "4567858000010001000000000d5f786d7070732d636c69656e74045f746370046e6f6e6504746573740000210001c00c0021000100000000000700000000000100")
    static let refusedResponse = bytes("5678818500010000000000000c5f786d70702d636c69656e74045f746370076d697373696e6704746573740000210001")

    @Test func encodesAQuery() throws {
        let query = try DNSMessage.query(id: 0x1234, name: "_xmpp-client._tcp.load.test", type: .srv)
        let header: [UInt8] = [0x12, 0x34, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0]  // id, RD, one question
        let name: [UInt8] =
            [12] + Array("_xmpp-client".utf8) + [4] + Array("_tcp".utf8) + [4] + Array("load".utf8)
            + [4] + Array("test".utf8) + [0]
        #expect(query == header + name + [0, 33, 0, 1])  // SRV, IN
        // The recorded response repeats the question: the same bytes after its own header.
        #expect(Array(Self.srvResponse[12..<query.count]) == Array(query[12...]))
        #expect(try DNSMessage.query(id: 1, name: "load.test.", type: .a) == DNSMessage.query(id: 1, name: "load.test", type: .a))
    }

    @Test(arguments: ["", "a..b", String(repeating: "x", count: 64) + ".test", Array(repeating: "abcdefghij", count: 26).joined(separator: ".")])
    func rejectsBadNames(name: String) {
        #expect(throws: DNSMessageError.badName(name)) { try DNSMessage.query(id: 1, name: name, type: .a) }
    }

    @Test func decodesSRVAnswersWithAddressesInTheAdditionalSection() throws {
        let message = try DNSMessage.decode(Self.srvResponse)
        #expect(message.id == 0x1234 && message.responseCode == 0 && !message.truncated)
        let service = "_xmpp-client._tcp.load.test"
        #expect(
            message.records == [
                .srv(name: service, SRVRecord(priority: 10, weight: 5, port: 5224, target: "backup.load.test")),
                .srv(name: service, SRVRecord(priority: 0, weight: 10, port: 5223, target: "node2.load.test")),
                .srv(name: service, SRVRecord(priority: 0, weight: 30, port: 5222, target: "node1.load.test")),
                .address(name: "node2.load.test", "127.0.0.3"),
                .address(name: "node2.load.test", "::1"),
                .address(name: "node1.load.test", "127.0.0.2"),
                .address(name: "backup.load.test", "127.0.0.4"),
            ])
    }

    @Test func decodesAAndAAAA() throws {
        #expect(try DNSMessage.decode(Self.aResponse).records == [.address(name: "plain.load.test", "127.0.0.5")])
        #expect(try DNSMessage.decode(Self.aaaaResponse).records == [.address(name: "node2.load.test", "::1")])
    }

    @Test func decodesTheNoServiceDotAndRefusal() throws {
        let none = try DNSMessage.decode(Self.noServiceResponse)
        #expect(none.records == [.srv(name: "_xmpps-client._tcp.none.test", SRVRecord(priority: 0, weight: 0, port: 1, target: "."))])
        let refused = try DNSMessage.decode(Self.refusedResponse)
        #expect(refused.responseCode == 5 && refused.records.isEmpty)
    }

    /// Every prefix of a real response is rejected with an error, never a trap; so is a pointer loop.
    @Test func truncatedAndHostileInputThrows() {
        for length in 0..<Self.srvResponse.count {
            #expect(throws: DNSMessageError.self) { try DNSMessage.decode(Array(Self.srvResponse.prefix(length))) }
        }
        // One answer whose name is a pointer to itself.
        let loop: [UInt8] = [0, 1, 0x81, 0x80, 0, 0, 0, 1, 0, 0, 0, 0, 0xC0, 12]
        #expect(throws: DNSMessageError.malformed("compression loop")) { try DNSMessage.decode(loop) }
        #expect(throws: DNSMessageError.malformed("not a response")) { try DNSMessage.decode([0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0]) }
    }

    @Test(arguments: [
        ([UInt8](repeating: 0, count: 15) + [1], "::1"),
        ([0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1], "fd00::1"),
        ([0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1], "2001:db8:0:1::1"),
        ([0x20, 0x01, 0x0d, 0xb8, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1], "2001:db8:1:1:1:1:1:1"),
    ])
    func formatsIPv6AsRFC5952(bytes: [UInt8], text: String) {
        #expect(DNSMessage.ipv6Text(bytes) == text)
    }
}

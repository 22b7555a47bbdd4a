import Testing

@testable import LoadProfile

/// `--source LIST|RANGE`: parsing every problem at once, and round robin per connection.
@Suite struct SourceAddressPoolTests {
    @Test(arguments: [
        ("127.0.0.2", ["127.0.0.2"]),
        ("127.0.0.2,127.0.0.3", ["127.0.0.2", "127.0.0.3"]),
        ("127.0.0.2-127.0.0.5", ["127.0.0.2", "127.0.0.3", "127.0.0.4", "127.0.0.5"]),
        ("127.0.0.254-127.0.1.1", ["127.0.0.254", "127.0.0.255", "127.0.1.0", "127.0.1.1"]),
        ("127.0.0.9, 127.0.0.2-127.0.0.3", ["127.0.0.9", "127.0.0.2", "127.0.0.3"]),
        ("::1", ["::1"]),
        ("fd00::1,fd00:0:0:0:0:0:0:2", ["fd00::1", "fd00:0:0:0:0:0:0:2"]),
    ])
    func parses(text: String, addresses: [String]) throws {
        #expect(try SourceAddressPool(parsing: text).addresses == addresses)
    }

    @Test(arguments: [
        ("127.0.0.9-127.0.0.2", ["range '127.0.0.9-127.0.0.2' ends before it starts"]),
        ("127.0.0.256", ["'127.0.0.256' is not an IP address"]),
        ("127.0.0.2,,127.0.0.3", ["an empty item"]),
        ("127.0.0.2,127.0.0.2", ["127.0.0.2 appears twice"]),
        ("127.0.0.2,::1", ["mixes IPv4 and IPv6"]),
        ("10.0.0.0-10.1.0.0", ["has more than 65536 addresses"]),
        ("::1-::2", ["is not a range of IPv4 addresses"]),
        ("1:::2,host", ["'1:::2' is not an IP address", "'host' is not an IP address"]),
        ("010.0.0.1", ["'010.0.0.1' is not an IP address"]),
    ])
    func reportsEveryProblem(text: String, messages: [String]) {
        do {
            _ = try SourceAddressPool(parsing: text)
            Issue.record("'\(text)' parsed")
        } catch {
            #expect(error.messages.count == messages.count, "\(error.messages)")
            for message in messages {
                #expect(error.messages.contains { $0.contains(message) }, "missing '\(message)' in \(error.messages)")
            }
        }
    }

    @Test func connectionsTakeTheAddressesRoundRobin() throws {
        let pool = try SourceAddressPool(parsing: "127.0.0.2-127.0.0.4")
        #expect(
            (0..<7).map(pool.address(forConnection:)) == ["127.0.0.2", "127.0.0.3", "127.0.0.4", "127.0.0.2", "127.0.0.3", "127.0.0.4", "127.0.0.2"])
        #expect(pool.description == "127.0.0.2,127.0.0.3,127.0.0.4")
    }
}

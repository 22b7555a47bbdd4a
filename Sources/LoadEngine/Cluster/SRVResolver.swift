import Foundation
import LoadProfile
import NIOCore
import NIOPosix

/// Finds an XMPP service's endpoints as real clients do (RFC 6120 §3.2, XEP-0368): DNS SRV
/// `_xmpp-client._tcp.DOMAIN` (or `_xmpps-client._tcp.DOMAIN` for direct TLS), then A and AAAA for
/// each target; with no SRV records, the domain's own addresses on the default port (5222, or 5223
/// for direct TLS). One UDP query at a time to one resolver, each with a timeout; no caching, no
/// retries over TCP (a truncated answer is an error).
///
/// The endpoints keep the SRV priority and weight (`WeightedEndpoints` spreads sessions over the
/// preferred tier by weight; a session whose connect fails walks its RFC 2782 order,
/// `SRVFallbackOrder`); `host` is the address literal, in the order the resolver gave.
public struct SRVResolver: Sendable {
    /// The DNS server asked.
    public var server: SocketAddress
    /// How long to wait for each answer.
    public var timeout: Duration

    public init(server: SocketAddress, timeout: Duration = .seconds(3)) {
        self.server = server
        self.timeout = timeout
    }

    /// A resolver for `--dns HOST:PORT` (an IP literal; IPv6 in brackets), or nil for the first
    /// `nameserver` of /etc/resolv.conf (port 53).
    public init(dns: String?, timeout: Duration = .seconds(3)) throws(SRVResolverError) {
        let text: String
        if let dns {
            text = dns
        } else {
            guard let conf = try? String(contentsOfFile: "/etc/resolv.conf", encoding: .utf8),
                let line = conf.split(separator: "\n").first(where: { $0.split(whereSeparator: \.isWhitespace).first == "nameserver" }),
                let address = line.split(whereSeparator: \.isWhitespace).dropFirst().first
            else {
                throw SRVResolverError(.noResolver("no nameserver in /etc/resolv.conf; give --dns HOST:PORT"))
            }
            text = address.contains(":") ? "[\(address)]:53" : "\(address):53"
        }
        guard case .success(let endpoint) = WeightedEndpoint.parse(text),
            let address = try? SocketAddress(ipAddress: endpoint.host, port: endpoint.port)
        else {
            throw SRVResolverError(.noResolver("--dns must be IP:PORT (IPv6 in brackets), got '\(text)'"))
        }
        self.init(server: address, timeout: timeout)
    }

    /// The endpoints of `domain`'s XMPP client service, SRV priority and weight kept. Throws
    /// `.noService` when the SRV answer is ".", `.noAddress` when nothing resolves.
    public func resolveEndpoints(domain: String, directTLS: Bool) async throws(SRVResolverError) -> [WeightedEndpoint] {
        let service = (directTLS ? "_xmpps-client._tcp." : "_xmpp-client._tcp.") + domain
        let answer = try await query(name: service, type: .srv)
        let records = answer.records.compactMap { record -> SRVRecord? in
            if case .srv(_, let srv) = record { return srv } else { return nil }
        }
        if SRVSelection.isNoService(records) { throw SRVResolverError(.noService(service)) }
        let targets = records.filter { !$0.isNoService }
        if targets.isEmpty {
            let addresses = try await addresses(of: domain, known: [])
            guard !addresses.isEmpty else { throw SRVResolverError(.noAddress(domain)) }
            return addresses.map { WeightedEndpoint(host: $0, port: directTLS ? 5223 : 5222) }
        }
        var endpoints: [WeightedEndpoint] = []
        for target in targets.sorted(by: { $0.priority < $1.priority }) {
            for address in try await addresses(of: target.target, known: answer.records) {
                endpoints.append(
                    WeightedEndpoint(
                        host: address, port: Int(target.port), weight: Int(target.weight),
                        priority: Int(target.priority)))
            }
        }
        guard !endpoints.isEmpty else { throw SRVResolverError(.noAddress(targets.map(\.target).joined(separator: ", "))) }
        return endpoints
    }

    /// A and AAAA of `name`: from the additional section when the resolver sent them, else asked.
    func addresses(of name: String, known: [DNSMessage.Record]) async throws(SRVResolverError) -> [String] {
        let given = known.compactMap { record -> String? in
            if case .address(let owner, let address) = record, owner.lowercased() == name.lowercased() { return address }
            return nil
        }
        if !given.isEmpty { return given }
        var found: [String] = []
        for type in [DNSMessage.RecordType.a, .aaaa] {
            for record in try await query(name: name, type: type).records {
                if case .address(_, let address) = record { found.append(address) }
            }
        }
        return found
    }

    /// One query and its answer. A name error (NXDOMAIN) is an empty answer, not an error.
    public func query(name: String, type: DNSMessage.RecordType) async throws(SRVResolverError) -> DNSMessage {
        let id = UInt16.random(in: 0...UInt16.max)
        let request: [UInt8]
        do { request = try DNSMessage.query(id: id, name: name, type: type) } catch { throw SRVResolverError(.badResponse(error)) }
        let bytes: [UInt8]
        do {
            bytes = try await exchange(request, id: id)
        } catch let error as SRVResolverError {
            throw error
        } catch {
            throw SRVResolverError(.network("\(error)"))
        }
        let message: DNSMessage
        do { message = try DNSMessage.decode(bytes) } catch { throw SRVResolverError(.badResponse(error)) }
        switch message.responseCode {
        case 0, 3: break
        default: throw SRVResolverError(.serverFailure(name: name, code: message.responseCode))
        }
        if message.truncated { throw SRVResolverError(.truncated(name)) }
        return message
    }

    private func exchange(_ request: [UInt8], id: UInt16) async throws -> [UInt8] {
        let server = self.server
        let local = server.protocol == .inet6 ? "::" : "0.0.0.0"
        let channel = try await DatagramBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .bind(host: local, port: 0) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try NIOAsyncChannel<AddressedEnvelope<ByteBuffer>, AddressedEnvelope<ByteBuffer>>(
                        wrappingChannelSynchronously: channel)
                }
            }
        let timeout = self.timeout
        return try await channel.executeThenClose { inbound, outbound in
            try await outbound.write(AddressedEnvelope(remoteAddress: server, data: ByteBuffer(bytes: request)))
            return try await withThrowingTaskGroup(of: [UInt8]?.self) { group in
                group.addTask {
                    for try await envelope in inbound where envelope.remoteAddress == server {
                        let bytes = Array(envelope.data.readableBytesView)
                        if bytes.count >= 2, UInt16(bytes[0]) << 8 | UInt16(bytes[1]) == id { return bytes }
                    }
                    return nil
                }
                group.addTask {
                    try await Task.sleep(for: timeout)
                    return nil
                }
                let first = try await group.next() ?? nil
                group.cancelAll()
                guard let bytes = first else { throw SRVResolverError(.timeout(server: "\(server)", after: timeout)) }
                return bytes
            }
        }
    }
}

/// The endpoints of `domain`'s XMPP client service via DNS SRV (see `SRVResolver`), asking `dns`
/// (`HOST:PORT`) or, when nil, the first nameserver of /etc/resolv.conf.
public func resolveEndpoints(domain: String, directTLS: Bool, dns: String?) async throws(SRVResolverError) -> [WeightedEndpoint] {
    try await SRVResolver(dns: dns).resolveEndpoints(domain: domain, directTLS: directTLS)
}

/// Why endpoints could not be resolved. A struct around a private-growth enum (`reason`).
public struct SRVResolverError: Error, Sendable, CustomStringConvertible {
    public enum Reason: Sendable {
        /// No resolver configured or `--dns` unusable.
        case noResolver(String)
        case timeout(server: String, after: Duration)
        /// SERVFAIL, REFUSED, ... (the RCODE).
        case serverFailure(name: String, code: UInt8)
        case truncated(String)
        case badResponse(DNSMessageError)
        /// The SRV record says "." — the service is not offered at the domain.
        case noService(String)
        /// Neither the SRV targets nor the domain have an address.
        case noAddress(String)
        case network(String)
    }

    public var reason: Reason

    public init(_ reason: Reason) { self.reason = reason }

    public var description: String {
        switch reason {
        case .noResolver(let text): return text
        case .timeout(let server, let after): return "DNS: no answer from \(server) within \(after)"
        case .serverFailure(let name, let code): return "DNS: the resolver failed for \(name) (RCODE \(code))"
        case .truncated(let name): return "DNS: the answer for \(name) was truncated (too many records for UDP)"
        case .badResponse(let error): return "DNS: \(error)"
        case .noService(let name): return "DNS: \(name) says the service is not offered (target \".\")"
        case .noAddress(let name): return "DNS: no address for \(name)"
        case .network(let text): return "DNS: \(text)"
        }
    }
}

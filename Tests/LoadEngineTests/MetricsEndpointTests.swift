import Foundation
import LoadResults
import NIOCore
import NIOPosix
import Testing

@testable import LoadEngine

/// The Prometheus endpoint answers a real HTTP request on loopback with the exposition format.
@Suite struct MetricsEndpointTests {
    @Test func servesMetricsOverHTTP() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let server = try await MetricsHTTPServer.start(host: "127.0.0.1", port: 0, group: group)
        var interval = IntervalSnapshot(start: 0, end: 5)
        interval.counters[Counter.sessionsLoggedIn.name] = 42
        interval.errors["sasl-not-authorized"] = 3
        interval.gauges["sessions_online"] = 40
        var login = LatencyHistogram()
        for ms in 1...100 { login.record(nanoseconds: UInt64(ms) * 1_000_000) }
        interval.latency["login"] = login
        server.exporter.update(interval: interval, cumulative: interval)

        let response = try Self.get(port: server.port, path: "/metrics")
        #expect(response.hasPrefix("HTTP/1.1 200 OK"))
        #expect(response.contains("xmppload_sessions_logged_in_total 42"))
        #expect(response.contains("xmppload_errors_total{kind=\"sasl-not-authorized\"} 3"))
        #expect(response.contains("xmppload_sessions_online 40"))
        #expect(response.contains("xmppload_latency_seconds{metric=\"login\",quantile=\"0.99\",window=\"run\"} 0.099"))
        #expect(try Self.get(port: server.port, path: "/other").hasPrefix("HTTP/1.1 404"))
        await server.close()
        try await group.shutdownGracefully()
    }

    /// A minimal blocking HTTP/1.0 GET over a plain socket (no URLSession on Linux without FoundationNetworking).
    static func get(port: Int, path: String) throws -> String {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { throw IOError(errnoCode: errno, reason: "connect") }
        let request = Array("GET \(path) HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n".utf8)
        _ = request.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, 0) }
        var response: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count <= 0 { break }
            response += chunk[0..<count]
            if String(decoding: response, as: UTF8.self).contains("\r\n\r\n"),
                let header = String(decoding: response, as: UTF8.self).components(separatedBy: "\r\n\r\n").first,
                let lengthLine = header.split(separator: "\r\n").first(where: { $0.lowercased().hasPrefix("content-length:") }),
                let length = Int(lengthLine.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)),
                response.count >= header.utf8.count + 4 + length
            {
                break
            }
        }
        return String(decoding: response, as: UTF8.self)
    }
}

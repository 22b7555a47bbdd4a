import Foundation
import Testing

/// Every shipped profile against node 1 of a real two-node ejabberd cluster (scripts/ejabberd-cluster),
/// held to the same standard as Prosody and jabberd2 (`ShippedProfilesTests.runEveryProfile`).
/// Skipped (with a note) when ejabberd is not installed.
@Suite(.serialized) struct EjabberdShippedProfilesTests {
    @Test(
        .enabled(if: EjabberdClusterTests.ejabberdInstalled, "ejabberd is not installed: scripts/install-deps --ejabberd"),
        .timeLimit(.minutes(7)))
    func everyShippedProfileRunsCleanly() async throws {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("xmppload-ejabberd-shipped-\(UUID().uuidString.prefix(8))").path
        let up = try EjabberdClusterTests.cluster(["up", "--dir", "\(base)/cluster", "--accounts", "40"])
        defer {
            _ = try? EjabberdClusterTests.cluster(["down", "--dir", "\(base)/cluster"])
            try? FileManager.default.removeItem(atPath: base)
        }
        try #require(up.status == 0, "\(up.output)")
        let values = LocalServer.keyValues(up.output)
        let node = try #require(values["XMPPLOAD_SERVERS"]?.split(separator: ",").first.map(String.init), "\(up.output)")
        let parts = node.split(separator: ":")
        let port = try #require(parts.count == 2 ? Int(parts[1]) : nil, "\(node)")
        _ = try await ShippedProfilesTests.runEveryProfile(
            serverName: "ejabberd", host: String(parts[0]), port: port, domain: try #require(values["XMPPLOAD_DOMAIN"]),
            password: try #require(values["XMPPLOAD_PASSWORD"]))
    }
}

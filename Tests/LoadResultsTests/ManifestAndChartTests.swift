import Foundation
import Testing

@testable import LoadResults

/// The manifest records what a run measured and never a password; old manifests still decode;
/// merged reports name every generator; a chart of one interval still shows its point.
@Suite struct ManifestAndChartTests {
    static var fixture: String {
        Bundle.module.url(forResource: "Fixtures", withExtension: nil)!.appendingPathComponent("chat-run").path
    }

    @Test func anOldManifestStillDecodes() throws {
        let manifest = try ResultsDirectory(path: Self.fixture).readManifest()
        #expect(manifest.runID == "20261122-114725-16v8o7g")
        #expect(manifest.tags.isEmpty && manifest.label == nil && manifest.serverFacts == nil && manifest.settings == nil)
    }

    @Test(arguments: [
        (["run", "p.yaml", "--password", "s3cret", "--sessions", "5"], ["run", "p.yaml", "--password", "***", "--sessions", "5"]),
        (["run", "--password=s3cret"], ["run", "--password=***"]),
        (["run", "--passwords-are-not-flags"], ["run", "--passwords-are-not-flags"]),
    ])
    func thePasswordIsRedacted(arguments: [String], stored: [String]) {
        #expect(RunManifest.redactingPassword(arguments) == stored)
        let manifest = RunManifest(
            runID: "r", profiles: [], server: "s", domain: "d", accounts: "a", tls: "t", loadModel: "l",
            seed: 1, commandLine: arguments, startedAt: Date(), intervalSeconds: 1)
        #expect(!manifest.commandLine.contains { $0.contains("s3cret") })
    }

    @Test func newFieldsRoundTripWithSnakeCaseKeys() throws {
        var manifest = RunManifest(
            runID: "r", profiles: [.init(name: "compare", path: "profiles/compare.yaml", sha256: "ab", weight: 1, text: "name: compare\n")],
            server: "127.0.0.1:5222", domain: "load.test", accounts: "user1-10", tls: "profile",
            loadModel: "closed", seed: 42, commandLine: [], startedAt: Date(timeIntervalSince1970: 1_000_000), intervalSeconds: 1)
        manifest.label = "prosody-0.12"
        manifest.tags = ["build": "4.9.2", "gc": "g1"]
        manifest.serverFacts = ServerFacts(
            softwareName: "Prosody", softwareVersion: "0.12.4",
            identities: [.init(category: "server", type: "im", name: "Prosody")],
            features: ["jabber:iq:version"], streamFeatures: [.init(name: "starttls", namespace: "urn:ietf:params:xml:ns:xmpp-tls")],
            saslMechanism: "SCRAM-SHA-1", tlsVersion: "TLSv1.3", tlsCipher: "TLS_AES_256_GCM_SHA384")
        manifest.plannedLoad = PlannedLoad(
            summary: "closed: 100 users", phases: [.init(name: "closed", load: "100 users, ramp 10s, 20s", durationSeconds: 20)],
            stopAfterSeconds: 20, gracefulStopSeconds: 10)
        manifest.settings = RunSettings(
            host: "127.0.0.1", port: 5222, domain: "load.test", accounts: "1-10", accountPrefix: "user", tls: nil,
            insecure: true, sasl: nil, outputDirectory: "out", intervalSeconds: 1, maxLatenessSeconds: 1,
            connectTimeoutSeconds: 10, messageGraceSeconds: 5, metricsPort: nil, eventLoops: 2, segment: "0/1")
        let directory = ResultsDirectory(
            path: FileManager.default.temporaryDirectory.appendingPathComponent("xmppload-manifest-\(UUID().uuidString.prefix(6))").path)
        try directory.create()
        defer { try? FileManager.default.removeItem(atPath: directory.path) }
        try directory.writeManifest(manifest)
        #expect(try directory.readManifest() == manifest)
        let json = try String(contentsOfFile: directory.file(ResultsDirectory.manifestFile), encoding: .utf8)
        for key in [
            "\"server_facts\"", "\"software_version\"", "\"stream_features\"", "\"tls_cipher\"", "\"planned_load\"", "\"graceful_stop_s\"",
            "\"tags\"", "\"cores\"",
        ] {
            #expect(json.contains(key), "\(key) missing")
        }
        #expect(manifest.serverFacts?.softwareDescription == "Prosody 0.12.4")
    }

    @Test func mergedReportsNameEveryGenerator() throws {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("xmppload-endpoints-\(UUID().uuidString.prefix(6))").path
        defer { try? FileManager.default.removeItem(atPath: base) }
        var paths: [String] = []
        for index in 0..<2 {
            let directory = ResultsDirectory(path: base + "/gen-\(index)")
            try directory.create()
            try ReportMergeTests.write(ReportMergeTests.intervals(offset: UInt64(index + 1)), to: directory, runID: "run")
            var manifest = try directory.readManifest()
            manifest.server = "10.0.0.\(index + 1):5222"
            manifest.segment = "\(index)/2"
            try directory.writeManifest(manifest)
            paths.append(directory.path)
        }
        let merged = try MergedResults.load(directories: paths)
        #expect(merged.endpoints.count == 2)
        let text = TextReport.render(merged)
        let html = HTMLReport.render(merged)
        for server in ["10.0.0.1:5222 (segment 0/2)", "10.0.0.2:5222 (segment 1/2)"] {
            #expect(text.contains(server), "text report misses \(server)")
            #expect(html.contains(server), "html report misses \(server)")
        }
    }

    @Test func aSeriesOfOnePointShowsItsPoint() {
        let chart = SVGChart(
            title: "login latency percentiles per interval", xLabel: "seconds", yLabel: "ms",
            series: [.init(name: "p50", color: "#2563eb", points: [(x: 1.0, y: 12.0)])])
        let svg = chart.render()
        #expect(!svg.contains("no data"))
        // The dot sits inside the plot area, not on the y axis (x = 64) or outside the 720 px width.
        guard let circle = svg.range(of: "<circle cx=\"") else {
            Issue.record("no point drawn: \(svg)")
            return
        }
        let cx = Double(svg[circle.upperBound...].prefix { $0 != "\"" }) ?? 0
        #expect(cx > 100 && cx < 700, "cx \(cx)")
    }

    @Test func aOneIntervalRunReportShowsTheLoginPercentiles() throws {
        var snapshot = IntervalSnapshot(start: 0, end: 3)
        var histogram = LatencyHistogram()
        for ms in 1...50 { histogram.record(nanoseconds: UInt64(ms) * 1_000_000) }
        snapshot.latency["login"] = histogram
        let directory = ResultsDirectory(
            path: FileManager.default.temporaryDirectory.appendingPathComponent("xmppload-one-\(UUID().uuidString.prefix(6))").path)
        try directory.create()
        defer { try? FileManager.default.removeItem(atPath: directory.path) }
        try ReportMergeTests.write([snapshot], to: directory, runID: "one")
        let html = HTMLReport.render(try MergedResults.load(directories: [directory.path]))
        let chart = try #require(html.components(separatedBy: "<svg").first { $0.contains("login latency percentiles per interval") })
        #expect(chart.components(separatedBy: "<circle").count - 1 == 4, "p50, p90, p99 and max each show a point")
    }
}

import LoadResults
import Testing

@testable import LoadEngine

/// Login paths reach Prometheus as any metric does: the per-path latency as
/// `xmppload_latency_seconds{metric="login.path.<path>"}` and the round-trip, reconnect and FAST
/// counters as `xmppload_<counter>_total`.
@Suite struct LoginPathExpositionTests {
    @Test func pathLatenciesAndCountersAreExported() {
        var interval = IntervalSnapshot(start: 0, end: 5)
        let names = LoginPathSummary.MetricNames(path: "sasl2-bind2")
        var histogram = LatencyHistogram()
        for ms in 1...10 { histogram.record(nanoseconds: UInt64(ms) * 1_000_000) }
        interval.latency[names.latency] = histogram
        interval.counters[names.roundTrips] = 60
        interval.counters[names.roundTripBuckets[5]] = 10
        interval.counters["fast_token_fallbacks"] = 2
        let exporter = PrometheusExporter()
        exporter.update(interval: interval, cumulative: interval)
        let text = String(decoding: exporter.registry.emitToBuffer(), as: UTF8.self)
        #expect(text.contains("metric=\"login.path.sasl2-bind2\""), "\(text)")
        #expect(text.contains("xmppload_login_path_sasl2_bind2_round_trips_total 60"), "\(text)")
        #expect(text.contains("xmppload_login_path_sasl2_bind2_round_trips_6_total 10"), "\(text)")
        #expect(text.contains("xmppload_fast_token_fallbacks_total 2"), "\(text)")
    }
}

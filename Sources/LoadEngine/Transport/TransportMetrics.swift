import LoadResults

/// The latency metrics of the web transports, registered once per run beside `FixedMetrics`.
///
/// - `login.ws_upgrade`: a WebSocket connection's HTTP upgrade, from writing the request to the 101
///   response (a part of `login.connect`, which spans TCP connect and upgrade). Nanoseconds.
/// - `bosh.request`: the round trip of a BOSH request that carried something (stanzas, session
///   creation, restart, terminate), from its write to its response. Nanoseconds. With `hold` 1 the
///   server keeps the newest request as its long poll when it has nothing to answer yet, so this mixes
///   service time (SASL, bind: answered at once) with hold time (a message request held until the
///   next push or request).
/// - `bosh.poll`: the round trip of an empty BOSH request, the long poll: the server holds it until
///   it has something to push or the session's `wait` passes, so it measures push delay and idle
///   time, not service time. Nanoseconds.
struct TransportMetrics: Sendable {
    let webSocketUpgrade: MetricID
    let boshRequest: MetricID
    let boshPoll: MetricID

    init(registry: inout MetricRegistry) {
        webSocketUpgrade = registry.register("login.ws_upgrade")
        boshRequest = registry.register("bosh.request")
        boshPoll = registry.register("bosh.poll")
    }
}

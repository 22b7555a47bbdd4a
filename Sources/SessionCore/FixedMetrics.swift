import LoadResults
import XMPPCore

/// Metric ids the engine records whatever the profile says, registered once per run.
public struct FixedMetrics: Sendable {
    public let login: MetricID
    /// Indexed like `LoginPhase.allCases`.
    public let phases: [MetricID]
    public let message: MetricID
    public let mucMessage: MetricID
    public let logout: MetricID
    /// A reconnect's login, from the end of its back-off to logged in again (also counted in `login`).
    public let reconnectLogin: MetricID
    /// Round trip of our keep-alive pings.
    public let keepAlivePing: MetricID
    /// A PEP notification of an item this session published, from the publish's send (`pep` step).
    public let pepNotify: MetricID
    /// Each login by the path it took (`login.path.<path>`, round trips, reconnects) and the FAST
    /// token counters.
    public let loginPaths: LoginPathMetrics

    public init(registry: inout MetricRegistry) {
        login = registry.register("login")
        phases = LoginPhase.allCases.map { registry.register($0.metricName) }
        message = registry.register("message")
        mucMessage = registry.register("muc.message")
        logout = registry.register("logout")
        reconnectLogin = registry.register("reconnect.login")
        keepAlivePing = registry.register("keepalive.ping")
        pepNotify = registry.register("pep.notify")
        loginPaths = LoginPathMetrics(registry: &registry)
    }
}

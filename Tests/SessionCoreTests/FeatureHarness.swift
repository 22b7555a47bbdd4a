import LoadProfile
import LoadResults
import XMPPCore

@testable import SessionCore

/// What a feature test needs to call one feature with plain values: a `SessionShared` for the user in
/// slot 0 of a compiled profile (a `TestHost` behind it), the program's tools, and the registered
/// counters of the request features the profile uses.
struct FeatureHarness {
    var shared: SessionShared
    let host: FallbackHost
    let registry: MetricRegistry

    /// `fallbacks`: how many endpoints the host's RFC 2782 order offers after the first choice.
    init(profile yaml: String, fallbacks: Int = 0) throws {
        let definition = try ProfileLoader.load(yaml: yaml, file: "features.yaml")
        var registry = MetricRegistry()
        let metrics = FixedMetrics(registry: &registry)
        let script = SessionScript(profile: definition.profiles[0].profile, registry: &registry)
        host = FallbackHost(registry: registry, fallbacks: fallbacks)
        self.registry = registry
        let settings = SessionSettings(
            domain: "load.test", accounts: 1...10, password: "secret", runID: "run-1", tlsAvailable: false, metrics: metrics)
        let identity = SessionIdentity(
            serial: 0, slot: 0, accountNumber: 1, username: "user1", bareJID: "user1@load.test", node: ServerNode(index: 0, label: "n0"))
        shared = SessionShared(identity: identity, script: script, settings: settings, host: host, now: .zero)
    }

    /// The program's tools, as the program lends them.
    func tools() -> StepTools {
        StepTools(generator: SeededGenerator(seed: 1), requestCounter: 0, values: TemplateValues(resource: "r1", sequence: 0))
    }

    /// The registered counters of the request feature `name`.
    func counters(of name: String) -> [CounterID] { shared.script.featureCounters[SessionFeatures.index(named: name)!] }

    /// The name of a registered counter.
    func counterName(_ id: CounterID) -> String { registry.registeredCounters[id.index - Counter.allCases.count].name }
}

/// A test host whose RFC 2782 order offers `fallbacks` more endpoints (endpoint k on node `n<k>`)
/// after a connect-level failure.
final class FallbackHost: SessionHost {
    let inner: TestHost
    let fallbacks: Int

    init(registry: MetricRegistry, fallbacks: Int) {
        inner = TestHost(registry: registry)
        self.fallbacks = fallbacks
    }

    var keyCache: SCRAMKeyCache { inner.keyCache }
    var isStopping: Bool { inner.isStopping }
    func fillerBody(size: Int) -> String { inner.fillerBody(size: size) }
    func randomOnlineSlot(excluding slot: Int, using generator: inout SeededGenerator) -> Int? {
        inner.randomOnlineSlot(excluding: slot, using: &generator)
    }

    func fallbackEndpoint(after failure: ConnectionFailure, attempt: Int, first: Int, arrival: Int) -> Int? {
        guard [.refused, .timeout, .unreachable, .connectFailed].contains(failure), attempt < fallbacks else { return nil }
        return first + attempt + 2
    }

    func node(ofEndpoint endpoint: Int) -> ServerNode? { ServerNode(index: endpoint, label: "n\(endpoint)") }
}

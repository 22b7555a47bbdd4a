/// What a logged-in session sends on its own to keep its connection alive and to find out whether the
/// server still answers (a quiet server looks alive until asked): an XEP-0199 ping to the domain
/// every `interval` (its round trip is the `keepalive.ping` metric; no answer within one interval is
/// a dropped connection, `timeout-keepalive`), or a single space (whitespace keep-alive, RFC 6120
/// §4.6.1) that only keeps NATs and idle timers from closing the connection.
///
/// Independent of this, server pings are always answered.
public struct KeepAlive: Sendable, Equatable {
    public enum Kind: String, Sendable, Equatable, CaseIterable {
        case ping
        case whitespace
    }

    public var kind: Kind
    public var interval: Duration

    public init(kind: Kind, interval: Duration) {
        self.kind = kind
        self.interval = interval
    }
}

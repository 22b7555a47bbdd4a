import LoadProfile
import XMPPCore

/// Keep-alives while logged in (`keepalive:`): an XEP-0199 ping to the domain per interval, timed, or
/// a single space. A ping still unanswered at the next tick means the connection is dead: the session
/// drops it (`timeout-keepalive`), and its reconnect policy applies. A ping answered with an error
/// (a server without XEP-0199) is no round trip: it is counted (`pings_unsupported`) and the session
/// keeps its connection alive with whitespace from then on.
extension SessionMachine {
    mutating func armKeepAlive() {
        guard let keepAlive = script.keepAlive else { return }
        pending.append(.armKeepAlive(at: now + keepAlive.interval))
    }

    mutating func keepAliveFired() {
        guard case .running = stage, let keepAlive = script.keepAlive else { return }
        if keepAlivePending != nil {
            keepAlivePending = nil
            return end(.keepAliveTimeout)
        }
        if !writeBlocked {
            switch keepAliveFallsBackToWhitespace ? .whitespace : keepAlive.kind {
            case .ping:
                requestCounter &+= 1
                let id = "ka\(requestCounter)"
                send(Stanza.iq(type: "get", id: id, to: settings.domain, child: XMLElement("ping", namespace: XMPPNamespace.ping)))
                keepAlivePending = (id, now)
            case .whitespace:
                pending.append(.sendRaw(" "))
            }
        }
        armKeepAlive()
    }

    /// True when `stanza` answers our keep-alive ping (a result, or an error: either way the server
    /// is there and the connection lives). Only a result is a round trip of `keepalive.ping`; an
    /// error means the server does not do XEP-0199: counted once, and whitespace from now on.
    mutating func keepAliveAnswered(_ stanza: XMLElement) -> Bool {
        guard let awaited = keepAlivePending, stanza.name == "iq", stanza.attribute("id") == awaited.id,
            stanza.attribute("type") == "result" || stanza.attribute("type") == "error"
        else { return false }
        keepAlivePending = nil
        if stanza.attribute("type") == "result" {
            recordLatency(settings.metrics.keepAlivePing, from: awaited.sentAt, serviceFrom: awaited.sentAt)
        } else if !keepAliveFallsBackToWhitespace {
            keepAliveFallsBackToWhitespace = true
            host.recorder.increment(.pingsUnsupported)
        }
        return true
    }
}

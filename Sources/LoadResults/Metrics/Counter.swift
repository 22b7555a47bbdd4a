/// The fixed counters every run keeps — the engine's, and those the results' own logic reads (the
/// verdict, the reports, the server notices). Raw values index the recorder's counter array; `name`
/// is the key in results files. A session feature's own counters are not here: the feature registers
/// them (`MetricRegistry.registerCounter`, with a `CounterNotice`), so adding a feature adds no case.
public enum Counter: Int, CaseIterable, Sendable {
    case sessionsStarted, sessionsLoggedIn, sessionsFailed, sessionsCompleted
    case droppedArrivals
    case stepsCompleted
    case messagesSent, messagesReceived, groupchatSent, groupchatReceived
    case stanzasInMessage, stanzasInPresence, stanzasInIQ, stanzasInOther
    case stanzasOutMessage, stanzasOutPresence, stanzasOutIQ, stanzasOutOther
    case bytesSent, bytesReceived
    case unexpectedStanzas, pingsAnswered, subscriptionsAccepted
    case accountsCreated, accountsExisted
    /// Reconnect attempts started after a logged-in session lost its connection, and those that logged in again.
    case sessionsReconnects, sessionsReconnected
    /// Online sessions the run dropped on purpose (`--churn`); each then reconnects.
    case sessionsChurned
    /// XEP-0198: streams resumed after a drop, resumptions the server refused (a fresh login followed),
    /// and our stanzas still unacknowledged when it refused (lost unless they were delivered anyway).
    case sessionsResumed, sessionsResumeFailed, streamManagementUnacknowledged
    /// Connections opened per transport (`--server` URL scheme): plain TCP, WebSocket, BOSH sessions.
    case connectionsTCP, connectionsWebSocket, connectionsBOSH
    /// HTTP requests written and responses read by the web transports (WebSocket upgrades, BOSH).
    case httpRequests, httpResponses
    /// Available presences whose echo (RFC 6121 §4.2.2) did not come within the presence step's bounded
    /// wait (jabberd2 never sends it): the step completed without it, unmeasured.
    case presenceEchoMissing
    /// Of those, echoes that came after all (later than the bounded wait): a slow server, not a silent one.
    case presenceEchoLate
    /// Keep-alive pings answered with an error (no XEP-0199 on the server): not round trips; the
    /// session falls back to whitespace keep-alives (counted once per session).
    case pingsUnsupported
    /// Logouts whose `</stream:stream>` the server neither answered nor closed the connection for
    /// within the logout wait: the session completed, its logout unmeasured.
    case logoutsUnanswered
    /// Logins of a profile that asks for XEP-0198 whose server did not offer `urn:xmpp:sm:3` (jabberd2
    /// offers only a pre-standard namespace): the session went on without stream management.
    case streamManagementNotOffered
    /// Connects that failed at one endpoint and went on to the next of the session's RFC 2782 order
    /// (`SRVFallbackOrder`) within the same login attempt; one per fallback, not per session.
    case endpointFallbacks

    public var name: String {
        switch self {
        case .sessionsStarted: return "sessions_started"
        case .sessionsLoggedIn: return "sessions_logged_in"
        case .sessionsFailed: return "sessions_failed"
        case .sessionsCompleted: return "sessions_completed"
        case .droppedArrivals: return "dropped_arrivals"
        case .stepsCompleted: return "steps_completed"
        case .messagesSent: return "messages_sent"
        case .messagesReceived: return "messages_received"
        case .groupchatSent: return "groupchat_sent"
        case .groupchatReceived: return "groupchat_received"
        case .stanzasInMessage: return "stanzas_in_message"
        case .stanzasInPresence: return "stanzas_in_presence"
        case .stanzasInIQ: return "stanzas_in_iq"
        case .stanzasInOther: return "stanzas_in_other"
        case .stanzasOutMessage: return "stanzas_out_message"
        case .stanzasOutPresence: return "stanzas_out_presence"
        case .stanzasOutIQ: return "stanzas_out_iq"
        case .stanzasOutOther: return "stanzas_out_other"
        case .bytesSent: return "bytes_sent"
        case .bytesReceived: return "bytes_received"
        case .unexpectedStanzas: return "unexpected_stanzas"
        case .pingsAnswered: return "pings_answered"
        case .subscriptionsAccepted: return "subscriptions_accepted"
        case .accountsCreated: return "accounts_created"
        case .accountsExisted: return "accounts_existed"
        case .sessionsReconnects: return "sessions_reconnects"
        case .sessionsReconnected: return "sessions_reconnected"
        case .sessionsChurned: return "sessions_churned"
        case .sessionsResumed: return "sessions_resumed"
        case .sessionsResumeFailed: return "sessions_resume_failed"
        case .streamManagementUnacknowledged: return "sm_unacknowledged_at_failed_resume"
        case .connectionsTCP: return "connections_tcp"
        case .connectionsWebSocket: return "connections_websocket"
        case .connectionsBOSH: return "connections_bosh"
        case .httpRequests: return "http_requests"
        case .httpResponses: return "http_responses"
        case .presenceEchoMissing: return "presence_echo_missing"
        case .presenceEchoLate: return "presence_echo_late"
        case .pingsUnsupported: return "pings_unsupported"
        case .logoutsUnanswered: return "logouts_unanswered"
        case .streamManagementNotOffered: return "sm_not_offered"
        case .endpointFallbacks: return "endpoint_fallbacks"
        }
    }

    public init?(name: String) {
        guard let found = Counter.allCases.first(where: { $0.name == name }) else { return nil }
        self = found
    }
}

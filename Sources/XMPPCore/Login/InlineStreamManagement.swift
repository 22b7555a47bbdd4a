/// What Bind2 answered to the XEP-0198 `<enable/>` carried inside it (XEP-0386: the `<bound/>`
/// element holds the server's `<enabled/>` or `<failed/>`).
public enum InlineStreamManagement: Sendable, Equatable {
    /// Stream management is on from the `<success/>` on: the server's `<enabled/>` (feed it to the
    /// session's stream-management state as if it had answered an `<enable/>`) and its grant.
    case enabled(XMLElement, StreamManagementState.Grant)
    /// The server refused, with this defined condition.
    case failed(condition: String)
    /// The enable was asked for but `<bound/>` held no answer (counted by the caller as not offered).
    case unanswered
}

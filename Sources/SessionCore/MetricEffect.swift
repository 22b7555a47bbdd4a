// The measurements a session's machine hands back as values, and how they land in a loop's recorder.
import LoadResults

/// One measurement a `SessionMachine` made while handling an event, returned as
/// `SessionAction.record(_:)` instead of written into a shared recorder: a test reads what a step
/// measured from the machine's return, and the engine applies it to its loop's `MetricsRecorder`
/// (`apply(to:)`), in order, on the loop's thread.
///
/// Latencies are in nanoseconds: `corrected` from the intended start, `service` from the actual start.
public enum MetricEffect: Equatable, Sendable {
    /// Add `amount` to a fixed counter.
    case count(Counter, by: UInt64 = 1)
    /// Add `amount` to a counter a feature registered (`MetricRegistry.registerCounter`).
    case countRegistered(CounterID, by: UInt64 = 1)
    /// One latency sample of `metric`; also for `node` when given (several endpoints), its service
    /// latency there only when `keepServiceForNode`.
    case latency(MetricID, corrected: UInt64, service: UInt64, node: ServerNode? = nil, keepServiceForNode: Bool = true)
    /// One error of `kind`; also for `node` when given.
    case error(kind: String, node: ServerNode? = nil)
    /// The server's text as an example of `kind` (kept only when the loop has none yet).
    case errorExample(kind: String, text: String?)
    /// One login failed in `phase` (a `LoginPhase` name) with error `kind`.
    case loginFailure(phase: String, kind: String)
    /// A stamped one-to-one message went out (`sender`: the stamp's `senderKey`).
    case messageSent(sender: UInt64, sequence: UInt32)
    /// A stamped one-to-one message of this run arrived at session `receiver`.
    case messageReceived(sender: UInt64, sequence: UInt32, receiver: UInt32)
    /// A message from a session on node `senderLabel` reached one on `receiver` after `nanoseconds`.
    case nodeMessage(senderLabel: String, receiver: ServerNode, nanoseconds: UInt64)
    /// A groupchat message went to `room`, whose sender saw `occupants` occupants.
    case groupchatSent(room: String, occupants: Int)
    /// A groupchat message from `room` arrived.
    case groupchatReceived(room: String)

    /// Writes this measurement into `recorder`.
    public func apply(to recorder: inout MetricsRecorder) {
        switch self {
        case .count(let counter, let amount):
            recorder.increment(counter, by: amount)
        case .countRegistered(let counter, let amount):
            recorder.increment(counter, by: amount)
        case .latency(let metric, let corrected, let service, let node, let keepService):
            recorder.recordLatency(
                metric, correctedNanoseconds: corrected, serviceNanoseconds: service, node: node,
                keepServiceForNode: keepService)
        case .error(let kind, let node):
            recorder.recordError(kind: kind, node: node)
        case .errorExample(let kind, let text):
            recorder.recordErrorExample(kind: kind, text: text)
        case .loginFailure(let phase, let kind):
            recorder.recordLoginFailure(phase: phase, kind: kind)
        case .messageSent(let sender, let sequence):
            recorder.messageSent(sender: sender, sequence: sequence)
        case .messageReceived(let sender, let sequence, let receiver):
            recorder.messageReceived(sender: sender, sequence: sequence, receiver: receiver)
        case .nodeMessage(let label, let receiver, let nanoseconds):
            recorder.recordNodeMessage(senderLabel: label, receiver: receiver, nanoseconds: nanoseconds)
        case .groupchatSent(let room, let occupants):
            recorder.groupchatSent(room: room, occupants: occupants)
        case .groupchatReceived(let room):
            recorder.groupchatReceived(room: room)
        }
    }
}

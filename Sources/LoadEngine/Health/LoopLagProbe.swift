import LoadResults
import NIOCore

/// Measures how late each event loop runs its scheduled work (rule 7: generator health).
///
/// Every 100 ms a task is scheduled on the loop; how much later than its deadline it runs is the loop's
/// lag, recorded into the loop's recorder. A loop that is busy (CPU-bound, or blocked) shows lag; a
/// generator whose lag grows measures itself, not the server, and the interval is flagged.
enum LoopLagProbe {
    static let period = TimeAmount.milliseconds(100)

    static func start(on loop: any EventLoop, context: LoopContext) {
        let bound = NIOLoopBound(context, eventLoop: loop)
        schedule(on: loop, context: bound, due: .now() + period)
    }

    private static func schedule(on loop: any EventLoop, context: NIOLoopBound<LoopContext>, due: NIODeadline) {
        loop.scheduleTask(deadline: due) {
            let now = NIODeadline.now()
            let lag = max((now - due).nanoseconds, 0)
            context.value.recorder.recordLoopLag(nanoseconds: UInt64(lag))
            schedule(on: loop, context: context, due: now + period)
        }
    }
}

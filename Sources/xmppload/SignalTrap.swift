import Dispatch

#if canImport(Glibc)
import Glibc
#endif

/// Turns SIGINT/SIGTERM into a callback instead of killing the process, so a run can stop
/// gracefully and flush the results gathered so far. A second signal calls the handler again (the run
/// then closes everything at once).
// @unchecked: `sources` is immutable after init and dispatch sources are thread-safe.
final class SignalTrap: @unchecked Sendable {
    private let sources: [any DispatchSourceSignal]

    init(signals: [Int32], handler: @escaping @Sendable () -> Void) {
        sources = signals.map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler(handler: handler)
            source.resume()
            return source
        }
    }

    func cancel() {
        for source in sources { source.cancel() }
    }
}

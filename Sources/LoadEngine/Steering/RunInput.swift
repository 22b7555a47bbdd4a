import NIOCore

/// Something that steers a run from outside while it goes — the control port is one. An input acts
/// on the run only through the `RunSteering` it is given; the run records what it changed. Inputs
/// are not sinks: they see the run's state through the steering (`latestInterval`), never a stream
/// of its figures, and they never change its results.
public protocol RunInput: Sendable {
    /// Starts taking requests for the run behind `steering` (serving on `group`'s loops, off the
    /// sessions' hot path); returns a notice for the sinks (e.g. where it serves), or nil.
    func start(steering: RunSteering, group: any EventLoopGroup) async throws -> RunNotice?
    /// The run is over: stop taking requests.
    func stop() async
}

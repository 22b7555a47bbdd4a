#if canImport(Glibc)
import Glibc
#endif

/// Gives the allocator's free pages back to the kernel (glibc's `malloc_trim(0)`) once a wave of
/// connections has closed — a server restart, a node failing over, churn — and before the sessions
/// that reconnect fill the heap again.
///
/// Why (issue 43): a connection allocates buffers it mostly never touches (NIOSSL's 32 KiB plaintext
/// and 16 KiB BIO buffers per TLS connection: ~48 KiB of heap, a few KiB resident). When every
/// connection closes at once, those chunks are freed with whatever pages their predecessors had
/// touched; the reconnecting sessions' buffers are carved from the same, now resident, pages. The
/// live heap stays flat but RSS steps up at every restart toward it (2,000 STARTTLS idle sessions:
/// 109 → 127 → 129 → 133 MiB over three restarts, heap in use ~162 MB throughout, and `malloc_trim`
/// after the fact frees nothing: the pages are in use by then). Releasing the free pages while the
/// sessions are away keeps the untouched parts of the new buffers untouched: RSS stays where it was.
///
/// Closed connections are those that were open (`channelInactive`) and connects that failed (a
/// reconnect storm against a server that is down: ~20,000 refused connects in one jabberd2 restart of
/// a 3,000-session soak, each with its channel and TLS handler allocated and freed).
///
/// The policy is a pure value (`observe`), tested with tables: a wave is at least `minimumWave`
/// closed connections, and at least `waveFraction` of the live sessions, since the last release; it
/// is released once no connection closed for `settle` (the wave is over) or `maximumWait` after it
/// began, and at most once per `spacing`. Called from the run's polling task, off the event loops;
/// a release takes the allocator's arena locks for a few milliseconds.
struct HeapRelease: Sendable {
    static let minimumWave = 64
    static let waveFraction = 0.05
    static let settle = Duration.milliseconds(300)
    static let maximumWait = Duration.seconds(2)
    static let spacing = Duration.seconds(10)

    /// Closed connections counted at the last release (or at the start).
    private var releasedAtCount = 0
    /// When the last release happened (nil: none yet).
    private var releasedAt: Duration?
    /// The closed-connection count last seen and when it last changed.
    private var lastCount = 0
    private var lastChange = Duration.zero
    /// When the current wave reached its size (nil: no wave).
    private var waveStart: Duration?

    /// Releases so far.
    private(set) var releases = 0

    /// Takes the run's count of closed connections (`closed`, monotonic), its live sessions and the
    /// time since the run's start; true when the free pages should be released now.
    mutating func observe(closed: Int, live: Int, now: Duration) -> Bool {
        if closed != lastCount {
            lastCount = closed
            lastChange = now
        }
        let wave = closed - releasedAtCount
        guard wave >= max(Self.minimumWave, Int((Double(live) * Self.waveFraction).rounded(.up))) else {
            waveStart = nil
            return false
        }
        let started = waveStart ?? now
        waveStart = started
        let settled = now - lastChange >= Self.settle
        let waitedLongEnough = now - started >= Self.maximumWait
        let spaced = releasedAt.map { now - $0 >= Self.spacing } ?? true
        guard spaced, settled || waitedLongEnough else { return false }
        releasedAtCount = closed
        releasedAt = now
        waveStart = nil
        releases += 1
        return true
    }

    /// True where the C library has `malloc_trim` (glibc).
    static var isAvailable: Bool {
        #if canImport(Glibc)
        return trimSymbol != nil
        #else
        return false
        #endif
    }

    /// `malloc_trim(0)`: every arena's free pages back to the kernel (MADV_DONTNEED); a no-op where
    /// the C library has none. True when memory was released.
    @discardableResult
    static func releaseFreePages() -> Bool {
        #if canImport(Glibc)
        typealias TrimFunction = @convention(c) (Int) -> Int32
        guard let symbol = trimSymbol else { return false }
        return unsafeBitCast(symbol, to: TrimFunction.self)(0) == 1
        #else
        return false
        #endif
    }

    #if canImport(Glibc)
    /// glibc's `malloc_trim`, which the Glibc module does not import (nil: another C library).
    /// `nonisolated(unsafe)`: a function's address, looked up once and never written.
    nonisolated(unsafe) private static let trimSymbol = dlsym(nil, "malloc_trim")
    #endif
}

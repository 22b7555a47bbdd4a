import LoadProfile
import LoadResults
import XMPPCore

/// What a session's machine shares with the other sessions of its event loop: the loop's metrics
/// recorder and SCRAM key cache, the run's online directory, cached message bodies and the loop's
/// gauges. The engine's `LoopContext` is one; unit tests use a plain class.
///
/// Every member is used on one thread (the loop's); nothing here needs a lock. Implementations must
/// not call back into the machine.
public protocol SessionHost: AnyObject {
    /// The loop's recorder (latencies, counters, errors).
    var recorder: MetricsRecorder { get set }
    /// The loop's SCRAM key cache (one PBKDF2 per password, salt and iteration count).
    var keyCache: SCRAMKeyCache { get }
    /// True once the run's load phase ended: a session that reaches `stay_online` logs out at once.
    var isStopping: Bool { get }
    /// A message body of `size` bytes (cached per loop).
    func fillerBody(size: Int) -> String
    /// A random account slot that is online (available presence seen), other than `slot`.
    func randomOnlineSlot(excluding slot: Int, using generator: inout SeededGenerator) -> Int?
    /// Marks the account of `slot` as a target for `to: random` (or no longer one).
    func setOnline(_ slot: Int, _ online: Bool)
    /// The session gave its account back (it ended).
    func releaseAccount(_ slot: Int)
    /// A session moved between stages (for the loop's connecting/online gauges).
    func sessionStageChanged(from old: SessionStage, to new: SessionStage)
    /// The probing session learned these facts about the server (fields it did not learn are nil).
    func learned(_ facts: ServerFacts)
    /// the probing session's XEP-0202 time query sent at `sent` was answered at
    /// `received` with the server's `<utc>` text (a clock sample, `ClockOffset`).
    func serverTimeAnswered(sent: SessionInstant, received: SessionInstant, utc: String)
    /// this generator's clock for message stamps (nil: stamps carry none, as in a run of
    /// one generator).
    var stampClock: MessageStamp.Clock? { get }
}

extension SessionHost {
    /// Hosts that do not estimate clock offsets ignore the samples.
    public func serverTimeAnswered(sent: SessionInstant, received: SessionInstant, utc: String) {}
    public var stampClock: MessageStamp.Clock? { nil }
}

/// Where a session is in its life, as the gauges count it.
public enum SessionStage: Sendable, Equatable {
    /// Created, not yet connecting.
    case idle
    /// Connecting or logging in.
    case connecting
    /// Logged in (running steps or logging out).
    case online
    /// Over.
    case ended
}

/// Run-wide, immutable facts every session reads: the domain and accounts, the password, the run's
/// identity for message stamps, whether TLS can be used at all, and the fixed metric ids.
///
/// One shared instance per run (a reference, so a session holds a pointer, not copies of the strings).
public final class SessionSettings: Sendable {
    public let domain: String
    public let accountPrefix: String
    /// Account numbers of this generator's share (`<prefix><number>@<domain>`).
    public let accounts: ClosedRange<Int>
    /// The whole run's account numbers (`--accounts` before `--segment` took a block of it; equal to
    /// `accounts` in a run of one generator): `to: next` and `${next_index}` ring over these.
    public let runAccounts: ClosedRange<Int>
    public let password: String
    /// Stamps from other runs are ignored.
    public let runID: String
    /// False when the run has no TLS set-up: a session that needs TLS fails with `tls-unavailable`.
    public let tlsAvailable: Bool
    /// Metric ids recorded whatever the profile says.
    public let metrics: FixedMetrics
    /// Highest SCRAM iteration count a server may ask for (`--max-scram-iterations`).
    public let maxSCRAMIterations: Int
    /// This generator's key in its stamps (`MessageStamp.generator`) when it shares a `--run-id`
    /// with other generators without `--segment`; nil otherwise.
    public let generatorKey: UInt32?

    public init(
        domain: String, accountPrefix: String = "user", accounts: ClosedRange<Int>,
        runAccounts: ClosedRange<Int>? = nil, password: String,
        runID: String, tlsAvailable: Bool = true, metrics: FixedMetrics,
        maxSCRAMIterations: Int = SCRAMClient.defaultMaxIterations, generatorKey: UInt32? = nil
    ) {
        self.maxSCRAMIterations = maxSCRAMIterations
        self.generatorKey = generatorKey
        self.domain = domain
        self.accountPrefix = accountPrefix
        self.accounts = accounts
        self.runAccounts = runAccounts ?? accounts
        self.password = password
        self.runID = runID
        self.tlsAvailable = tlsAvailable
        self.metrics = metrics
    }

    /// The slot (relative to `accounts`) of the account after `accountNumber` in the whole run's
    /// accounts, the last one followed by the first: outside `0 ..< accounts.count` when that account
    /// belongs to another generator of the run.
    public func nextSlot(after accountNumber: Int) -> Int {
        let next = accountNumber >= runAccounts.upperBound ? runAccounts.lowerBound : accountNumber + 1
        return next - accounts.lowerBound
    }

    /// The bare JID of the account in `slot` (a slot outside this generator's share names another
    /// generator's account).
    public func bareJID(slot: Int) -> String {
        "\(accountPrefix)\(accounts.lowerBound + slot)@\(domain)"
    }
}

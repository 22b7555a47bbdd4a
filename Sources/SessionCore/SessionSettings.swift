// The run-wide settings every session reads: domain, accounts, password, run id, fixed metrics.
import LoadResults
import XMPPCore

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
    /// The run's seed (`--seed`): features that draw outside the program's generator (a reconnect's
    /// back-off jitter) derive their draws from it, so seeded runs stay reproducible.
    public let seed: UInt64
    /// A connection whose socket does not drain for this long ends its session (`write-stalled`).
    public let writeStallTimeout: Duration
    /// The share (0 … 1) of churned sessions that resume a resumable stream; the others log in afresh.
    public let churnResumeShare: Double

    public init(
        domain: String, accountPrefix: String = "user", accounts: ClosedRange<Int>,
        runAccounts: ClosedRange<Int>? = nil, password: String,
        runID: String, tlsAvailable: Bool = true, metrics: FixedMetrics,
        maxSCRAMIterations: Int = SCRAMClient.defaultMaxIterations, generatorKey: UInt32? = nil, seed: UInt64 = 0,
        writeStallTimeout: Duration = .seconds(30), churnResumeShare: Double = 1
    ) {
        self.churnResumeShare = churnResumeShare
        self.seed = seed
        self.writeStallTimeout = writeStallTimeout
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

/// Why a source has no sample for an interval. A gap is never written as zeros: charts break, means
/// skip it, and the attribution says the server side was unseen then.
public struct MonitorGap: Sendable, Equatable, Codable {
    /// The kind of failure, one of a fixed set (a results file's readers may count by it).
    public enum Reason: String, Sendable, Equatable, Codable, CaseIterable {
        /// No process with that id, or none with that name.
        case notFound = "not-found"
        /// The process exited (a process given by id is not followed to another).
        case exited
        /// `/proc` refused the read (another user's process).
        case unreadable
        /// The endpoint refused the connection or its name did not resolve.
        case unreachable
        /// The scrape did not finish within its time limit.
        case timeout
        /// The endpoint answered with a status other than 200.
        case httpStatus = "http-status"
        /// The body was larger than the scrape's byte limit.
        case tooLarge = "too-large"
        /// The body held more samples than the scrape's limit.
        case tooManySamples = "too-many-samples"
        /// The body or the HTTP response was not a text exposition (or was cut short).
        case malformed
        /// The source's sample did not arrive in time for the interval (its thread was busy with an
        /// earlier, slow scrape).
        case late
    }

    public var reason: Reason
    /// One line for people (`connection refused (127.0.0.1:9100)`).
    public var detail: String

    public init(_ reason: Reason, _ detail: String) {
        self.reason = reason
        self.detail = detail
    }
}

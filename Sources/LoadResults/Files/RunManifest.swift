import Foundation

/// `manifest.json`: what was run, against what, from where, when — written at the start of the run
/// and rewritten at its end (with `ended_at` and `stop_reason`).
public struct RunManifest: Codable, Sendable, Equatable {
    public var tool: String = "xmppload"
    public var toolVersion: String
    public var runID: String
    public var profiles: [ProfileReference]
    public var server: String
    public var domain: String
    public var serverSoftware: String?
    public var accounts: String
    public var tls: String
    public var loadModel: String
    public var seed: UInt64
    public var host: String
    public var segment: String
    public var commandLine: [String]
    public var startedAt: Date
    public var endedAt: Date?
    public var stopReason: String?
    public var intervalSeconds: Double

    public struct ProfileReference: Codable, Sendable, Equatable {
        public var name: String
        public var path: String
        public var sha256: String
        public var weight: Double
        public init(name: String, path: String, sha256: String, weight: Double) {
            self.name = name
            self.path = path
            self.sha256 = sha256
            self.weight = weight
        }
    }

    enum CodingKeys: String, CodingKey {
        case tool, toolVersion = "tool_version", runID = "run_id", profiles, server, domain
        case serverSoftware = "server_software", accounts, tls, loadModel = "load_model", seed, host, segment
        case commandLine = "command_line", startedAt = "started_at", endedAt = "ended_at", stopReason = "stop_reason"
        case intervalSeconds = "interval_s"
    }

    public static let currentToolVersion = "0.1.0"

    public init(runID: String, profiles: [ProfileReference], server: String, domain: String, accounts: String,
                tls: String, loadModel: String, seed: UInt64, segment: String = "0/1", commandLine: [String],
                startedAt: Date, intervalSeconds: Double) {
        toolVersion = Self.currentToolVersion
        self.runID = runID
        self.profiles = profiles
        self.server = server
        self.domain = domain
        self.accounts = accounts
        self.tls = tls
        self.loadModel = loadModel
        self.seed = seed
        host = ProcessInfo.processInfo.hostName
        self.segment = segment
        self.commandLine = commandLine
        self.startedAt = startedAt
        self.intervalSeconds = intervalSeconds
    }
}

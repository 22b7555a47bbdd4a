import Foundation

/// `manifest.json`: what was run, against what, from where, when — written at the start of the run
/// and rewritten at its end (with `ended_at`, `stop_reason` and the load actually applied).
///
/// It records everything needed to compare two runs honestly later: the profiles' text and hash,
/// every parsed flag (`settings`, never the password), the seed, the planned and the applied load,
/// the label and tags the user gave, the tool version, host, cores and start time, and what the
/// server said about itself (`server_facts`). The command line is stored with any `--password`
/// value redacted. Keys added after 0.1.0 are optional, so older manifests still decode.
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
    /// `--label NAME`: what this run measured, e.g. "prosody-0.12.4".
    public var label: String?
    /// `--tag key=value` pairs, e.g. `["build": "4.9.2", "gc": "g1"]`.
    public var tags: [String: String] = [:]
    /// Cores of the generator's host.
    public var cores: Int?
    /// Every flag as parsed (defaults applied); never the password.
    public var settings: RunSettings?
    /// The load planned: phases, models, durations.
    public var plannedLoad: PlannedLoad?
    /// The load actually applied (known at the end of the run).
    public var appliedLoad: AppliedLoad?
    /// What the server said about itself (software, disco#info, stream features, SASL and TLS used).
    public var serverFacts: ServerFacts?

    /// One profile of the run: name, where it was read, its SHA-256 and its text.
    public struct ProfileReference: Codable, Sendable, Equatable {
        public var name: String
        public var path: String
        public var sha256: String
        public var weight: Double
        /// The profile file's text as run (nil in manifests written before 0.2).
        public var text: String?
        public init(name: String, path: String, sha256: String, weight: Double, text: String? = nil) {
            self.name = name
            self.path = path
            self.sha256 = sha256
            self.weight = weight
            self.text = text
        }
    }

    enum CodingKeys: String, CodingKey {
        case tool
        case toolVersion = "tool_version"
        case runID = "run_id"
        case profiles, server, domain
        case serverSoftware = "server_software"
        case accounts, tls
        case loadModel = "load_model"
        case seed, host, segment
        case commandLine = "command_line"
        case startedAt = "started_at"
        case endedAt = "ended_at"
        case stopReason = "stop_reason"
        case intervalSeconds = "interval_s"
        case label, tags, cores, settings
        case plannedLoad = "planned_load"
        case appliedLoad = "applied_load"
        case serverFacts = "server_facts"
    }

    public static let currentToolVersion = "0.2.0"

    public init(
        runID: String, profiles: [ProfileReference], server: String, domain: String, accounts: String,
        tls: String, loadModel: String, seed: UInt64, segment: String = "0/1", commandLine: [String],
        startedAt: Date, intervalSeconds: Double
    ) {
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
        cores = ProcessInfo.processInfo.activeProcessorCount
        self.segment = segment
        self.commandLine = Self.redactingPassword(commandLine)
        self.startedAt = startedAt
        self.intervalSeconds = intervalSeconds
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        tool = try container.decode(String.self, forKey: .tool)
        toolVersion = try container.decode(String.self, forKey: .toolVersion)
        runID = try container.decode(String.self, forKey: .runID)
        profiles = try container.decode([ProfileReference].self, forKey: .profiles)
        server = try container.decode(String.self, forKey: .server)
        domain = try container.decode(String.self, forKey: .domain)
        serverSoftware = try container.decodeIfPresent(String.self, forKey: .serverSoftware)
        accounts = try container.decode(String.self, forKey: .accounts)
        tls = try container.decode(String.self, forKey: .tls)
        loadModel = try container.decode(String.self, forKey: .loadModel)
        seed = try container.decode(UInt64.self, forKey: .seed)
        host = try container.decode(String.self, forKey: .host)
        segment = try container.decode(String.self, forKey: .segment)
        commandLine = try container.decode([String].self, forKey: .commandLine)
        startedAt = try container.decode(Date.self, forKey: .startedAt)
        endedAt = try container.decodeIfPresent(Date.self, forKey: .endedAt)
        stopReason = try container.decodeIfPresent(String.self, forKey: .stopReason)
        intervalSeconds = try container.decode(Double.self, forKey: .intervalSeconds)
        label = try container.decodeIfPresent(String.self, forKey: .label)
        tags = try container.decodeIfPresent([String: String].self, forKey: .tags) ?? [:]
        cores = try container.decodeIfPresent(Int.self, forKey: .cores)
        settings = try container.decodeIfPresent(RunSettings.self, forKey: .settings)
        plannedLoad = try container.decodeIfPresent(PlannedLoad.self, forKey: .plannedLoad)
        appliedLoad = try container.decodeIfPresent(AppliedLoad.self, forKey: .appliedLoad)
        serverFacts = try container.decodeIfPresent(ServerFacts.self, forKey: .serverFacts)
    }

    /// The command line with the value of every `--password VALUE` / `--password=VALUE` replaced by
    /// `***`, so a manifest never stores a secret.
    public static func redactingPassword(_ arguments: [String]) -> [String] {
        var result: [String] = []
        var redactNext = false
        for argument in arguments {
            if redactNext {
                result.append("***")
                redactNext = false
            } else if argument == "--password" {
                result.append(argument)
                redactNext = true
            } else if argument.hasPrefix("--password=") {
                result.append("--password=***")
            } else {
                result.append(argument)
            }
        }
        return result
    }

    /// The endpoint this generator loaded: `server` as seen from `host` (segment `segment`).
    public var generatorEndpoint: String { "\(host) → \(server) (segment \(segment))" }
}

import LoadProfile
import LoadResults

extension RunConfiguration {
    /// Every flag as parsed, for the manifest; the password is deliberately left out.
    var recordedSettings: RunSettings {
        RunSettings(
            host: host, port: port, domain: domain, accounts: "\(accounts.lowerBound)-\(accounts.upperBound)",
            accountPrefix: accountPrefix, tls: tls?.rawValue, insecure: insecure, sasl: mechanism?.name,
            outputDirectory: outputDirectory, intervalSeconds: interval.seconds,
            maxLatenessSeconds: maxArrivalLateness.seconds, connectTimeoutSeconds: connectTimeout.seconds,
            messageGraceSeconds: messageGrace.seconds, metricsPort: metricsPort, eventLoops: eventLoops,
            segment: segment.description)
    }
}

extension LoadPlan {
    /// The plan as recorded in the manifest.
    var recordedPlan: PlannedLoad {
        PlannedLoad(
            summary: summary,
            phases: phases.map {
                PlannedLoad.Phase(
                    name: $0.name, load: $0.summary, durationSeconds: $0.duration.seconds,
                    maxSessions: $0.maxSessions)
            },
            stopAfterSeconds: stopAfter?.seconds, gracefulStopSeconds: gracefulStop.seconds)
    }
}

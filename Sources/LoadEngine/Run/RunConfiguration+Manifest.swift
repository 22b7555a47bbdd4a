import Foundation
import LoadProfile
import LoadResults

extension RunConfiguration {
    /// Every flag as parsed, for the manifest; the password is deliberately left out.
    var recordedSettings: RunSettings {
        var settings = RunSettings(
            host: host, port: port, domain: domain, accounts: "\(accounts.lowerBound)-\(accounts.upperBound)",
            accountPrefix: accountPrefix, tls: tls?.rawValue, insecure: insecure, sasl: mechanism?.name,
            outputDirectory: outputDirectory, intervalSeconds: interval.seconds,
            maxLatenessSeconds: maxArrivalLateness.seconds, connectTimeoutSeconds: connectTimeout.seconds,
            messageGraceSeconds: messageGrace.seconds, metricsPort: metricsPort, eventLoops: eventLoops,
            segment: segment.description)
        let all = endpoints.isEmpty ? [WeightedEndpoint(host: host, port: port)] : endpoints
        settings.endpoints = all.map(\.description)
        settings.transports = Set(all.map(\.transport.name)).sorted()
        settings.accountCount = recordedExtras.wholeRunAccounts ?? accounts.count
        settings.variables = recordedExtras.variables
        settings.reconnectAttempts = reconnectAttempts
        settings.churnPerSecond = churnRate
        settings.churnResumeShare = churnRate != nil && churnResumeShare < 1 ? churnResumeShare : nil
        settings.writeStallSeconds = writeStallTimeout.seconds
        settings.sourceAddresses = sourceAddresses?.description
        settings.metricsHost = metricsHost
        settings.controlPort = controlPort
        settings.controlHost = controlPort == nil ? nil : controlHost
        settings.startAt = startAt.map { ISO8601DateFormatter().string(from: $0) }
        settings.runIDSource = recordedExtras.runIDSource
        settings.thresholds = recordedExtras.thresholds
        settings.warmupSeconds = recordedExtras.warmupSeconds
        settings.abortOnFail = recordedExtras.abortOnFail
        settings.dns = recordedExtras.dns
        settings.passwordSource = recordedExtras.passwordSource
        settings.serverEnv = recordedExtras.serverEnv
        settings.overwrite = recordedExtras.overwrite
        settings.plain = recordedExtras.plain
        settings.login = loginMode?.rawValue
        settings.monitors = monitors.isEmpty ? nil : monitors.map(\.spec)
        settings.limits = [
            "max-element-size": xmlLimits.maxElementBytes, "max-buffered": xmlLimits.maxBufferedBytes,
            "max-depth": xmlLimits.maxDepth, "max-attributes": xmlLimits.maxAttributesPerElement,
            "max-header-namespaces": xmlLimits.maxHeaderNamespaces, "max-scram-iterations": maxSCRAMIterations,
        ]
        return settings
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

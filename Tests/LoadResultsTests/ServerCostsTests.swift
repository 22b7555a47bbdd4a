import Foundation
import Testing

@testable import LoadResults

/// The server's costs per unit of load, from synthetic runs whose true costs are known.
@Suite struct ServerCostsTests {
    /// A server that idles at `idle` % of a core and spends `login` ms per login, `message` ms per
    /// message and `perSession` bytes per online session over 40 MB, with `noise` % of a core added
    /// in a fixed pattern.
    static func run(
        logins: [Double], messages: [Double], online: [Double], idle: Double = 2, login: Double = 7, message: Double = 0.2,
        perSession: Double = 41_000, noise: Double = 0, seconds: Double = 5
    ) -> (load: [LoadPoint], readings: [MonitorReading?]) {
        var load: [LoadPoint] = []
        var readings: [MonitorReading?] = []
        for index in logins.indices {
            let cpuSeconds = idle / 100 * seconds + logins[index] * login / 1000 + messages[index] * message / 1000
            let wobble = noise * [0.5, -0.3, 0.1, -0.4, 0.2][index % 5]
            let percent = cpuSeconds / seconds * 100 + wobble
            load.append(
                LoadPoint(
                    start: Double(index) * seconds, end: Double(index + 1) * seconds, logins: logins[index], messages: messages[index],
                    online: online[index]))
            readings.append(
                MonitorValuesTests.process(cpu: percent, rss: UInt64(40_000_000 + perSession * online[index]), seconds: seconds))
        }
        return (load, readings)
    }

    @Test func costsComeOutOfAMixedRun() throws {
        // A ramp of logins, then messages at a rate that does not follow the logins.
        let logins: [Double] = [500, 500, 500, 250, 0, 0, 100, 0, 300, 0]
        let messages: [Double] = [0, 1000, 5000, 2000, 8000, 3000, 0, 6000, 1000, 4000]
        let online: [Double] = [500, 1000, 1500, 1750, 1750, 1750, 1850, 1850, 2150, 2150]
        let (load, readings) = Self.run(logins: logins, messages: messages, online: online)
        let costs = try #require(ServerCosts.estimate(source: "prosody", load: load, readings: readings))
        #expect(abs(costs.cpuPerLoginMilliseconds! - 7) < 1e-6)
        #expect(abs(costs.cpuPerMessageMilliseconds! - 0.2) < 1e-6)
        #expect(abs(costs.idleCPUPercent! - 2) < 1e-6)
        #expect(abs(costs.rssPerSessionBytes! - 41_000) < 1e-3)
        #expect(costs.intervalsUsed == 10)
        #expect(costs.note == nil)
    }

    @Test func noiseLeavesTheEstimateNearTheTruthAndLowersR2() throws {
        let logins: [Double] = [500, 400, 300, 200, 100, 0, 50, 450, 350, 250]
        let (load, readings) = Self.run(
            logins: logins, messages: Array(repeating: 0, count: 10), online: (1...10).map { Double($0) * 100 }, noise: 4)
        let costs = try #require(ServerCosts.estimate(source: "prosody", load: load, readings: readings))
        #expect(abs(costs.cpuPerLoginMilliseconds! - 7) < 0.5)
        #expect(costs.cpuFitR2! < 1 && costs.cpuFitR2! > 0.9)
        #expect(costs.cpuPerMessageMilliseconds == nil)  // no messages: no figure, no note needed
        #expect(costs.note == nil)
        // A server whose CPU follows something else far more than this load: the figure comes with a warning.
        let (noisyLoad, noisyReadings) = Self.run(
            logins: logins, messages: Array(repeating: 0, count: 10), online: (1...10).map { Double($0) * 100 }, noise: 200)
        let noisy = try #require(ServerCosts.estimate(source: "prosody", load: noisyLoad, readings: noisyReadings))
        #expect(noisy.cpuFitR2! < ServerCosts.weakFit)
        #expect(noisy.note?.contains("the CPU fit is weak (R² 0.") == true, "\(String(describing: noisy.note))")
    }

    @Test func loginsAndMessagesThatMoveTogetherAreNotSplit() throws {
        let logins: [Double] = [100, 200, 300, 400, 500, 600]
        let (load, readings) = Self.run(logins: logins, messages: logins.map { $0 * 10 }, online: [100, 300, 600, 1000, 1500, 2100])
        let costs = try #require(ServerCosts.estimate(source: "prosody", load: load, readings: readings))
        #expect(costs.cpuPerLoginMilliseconds == nil && costs.cpuPerMessageMilliseconds == nil)
        #expect(costs.note?.contains("cannot be told apart") == true)
        #expect(costs.rssPerSessionBytes != nil)
    }

    @Test func gapsAndRestartsAreLeftOutAndTooFewIntervalsGiveNoFit() throws {
        var (load, readings) = Self.run(
            logins: [100, 200, 300, 400, 500, 600], messages: Array(repeating: 0, count: 6), online: [100, 300, 600, 1000, 1500, 2100])
        readings[1] = MonitorValuesTests.gap
        readings[2] = MonitorValuesTests.process(cpu: 1, rss: 1, seconds: 5, partial: true)
        readings[3] = nil
        let costs = try #require(ServerCosts.estimate(source: "prosody", load: load, readings: readings))
        #expect(costs.intervalsUsed == 3)
        #expect(costs.cpuPerLoginMilliseconds == nil)
        #expect(costs.note?.contains("too few intervals (3)") == true)
        load = []
        #expect(ServerCosts.estimate(source: "prosody", load: load, readings: []) == nil)
    }

    @Test func aFlatSessionCountGivesNoMemorySlope() throws {
        let (load, readings) = Self.run(
            logins: [0, 0, 0, 0, 0, 0], messages: [100, 900, 300, 700, 200, 500], online: Array(repeating: 1000, count: 6))
        let costs = try #require(ServerCosts.estimate(source: "prosody", load: load, readings: readings))
        #expect(abs(costs.cpuPerMessageMilliseconds! - 0.2) < 1e-6)
        #expect(costs.rssPerSessionBytes == nil)
        #expect(costs.note?.contains("memory per session") == true)
    }
}

import Testing

@testable import LoadResults

/// A generator's clock offset against the server's XEP-0202 time, from plain samples.
@Suite struct ClockOffsetTests {
    static let ms: Int64 = 1_000_000
    static let second: Int64 = 1_000_000_000

    @Test func aFineClockGivesTheMidpointOfTheShortestRoundTrip() throws {
        // The server is 250 ms ahead. Queries of 10 ms and 4 ms round trip, answered with microseconds.
        let samples = [
            ClockOffset.Sample(sent: 1000 * Self.ms, received: 1010 * Self.ms, server: 1255 * Self.ms, resolution: 1000),
            ClockOffset.Sample(sent: 2000 * Self.ms, received: 2004 * Self.ms, server: 2252 * Self.ms, resolution: 1000),
        ]
        let estimate = try #require(ClockOffset.estimate(samples))
        #expect(abs(estimate.offsetMilliseconds - 250) < 0.01)
        #expect(estimate.uncertaintyMilliseconds <= 2.001 && estimate.samples == 2)
    }

    @Test func wholeSecondsNarrowDownWhenQueriedAtDifferentPhases() throws {
        // Server 300 ms ahead, answering whole seconds (Prosody). One sample alone: ±0.5 s.
        func sample(at wall: Int64) -> ClockOffset.Sample {
            let server = wall + 300 * Self.ms + 1 * Self.ms  // read mid-way through a 2 ms round trip
            return .init(sent: wall, received: wall + 2 * Self.ms, server: server / Self.second * Self.second, resolution: Self.second)
        }
        let one = try #require(ClockOffset.estimate([sample(at: 10 * Self.second)]))
        #expect(one.uncertaintyMilliseconds > 499)
        // Ten queries 110 ms apart cover every phase of the server's second.
        let many = try #require(ClockOffset.estimate((0..<10).map { sample(at: 10 * Self.second + Int64($0) * 110 * Self.ms) }))
        #expect(abs(many.offsetMilliseconds - 300) <= many.uncertaintyMilliseconds)
        #expect(many.uncertaintyMilliseconds < 60)
    }

    @Test func contradictingSamplesFallBackToTheNarrowest() throws {
        let samples = [
            ClockOffset.Sample(sent: 0, received: 2 * Self.ms, server: 100 * Self.ms, resolution: 1000),
            ClockOffset.Sample(sent: 0, received: 6 * Self.ms, server: 900 * Self.ms, resolution: 1000),
        ]
        let estimate = try #require(ClockOffset.estimate(samples))
        #expect(abs(estimate.offsetMilliseconds - 99) < 0.01 && estimate.uncertaintyMilliseconds < 1.01)
        #expect(ClockOffset.estimate([]) == nil)
        #expect(ClockOffset.estimate([.init(sent: 5, received: 4, server: 0, resolution: 1)]) == nil)
    }

    @Test func crossGeneratorLatencyMovesBothReadingsToTheServerClock() {
        // Sender's clock 40 ms behind the server, receiver's 10 ms ahead of it: a message that took 5 ms
        // reads 55 ms on the two wall clocks.
        let sender = ClockOffset(offsetMilliseconds: 40, uncertaintyMilliseconds: 1, samples: 3)
        let receiver = ClockOffset(offsetMilliseconds: -10, uncertaintyMilliseconds: 2, samples: 3)
        let latency = ClockOffset.crossLatency(sentWall: 0, sender: sender, receivedWall: 55 * Self.ms, receiver: receiver)
        #expect(abs(latency - 5) < 1e-9)
        #expect(ClockOffset.crossUncertainty(sender, receiver) == 3)
    }

    struct UTCRow: Sendable, CustomTestStringConvertible {
        let text: String
        let seconds: Int64?
        let fraction: Int64
        let resolution: Int64
        var testDescription: String { text }
    }

    @Test(arguments: [
        UTCRow(text: "1970-01-01T00:00:00Z", seconds: 0, fraction: 0, resolution: 1_000_000_000),
        UTCRow(text: "2026-11-23T13:10:16Z", seconds: 1_795_439_416, fraction: 0, resolution: 1_000_000_000),
        UTCRow(text: "2026-11-23T13:10:16.123Z", seconds: 1_795_439_416, fraction: 123_000_000, resolution: 1_000_000),
        UTCRow(text: "2026-11-23T13:10:16.000001Z", seconds: 1_795_439_416, fraction: 1000, resolution: 1000),
        UTCRow(text: "2026-11-23T13:10:16", seconds: nil, fraction: 0, resolution: 0),
        UTCRow(text: "2026-11-23T13:10:16+01:00", seconds: nil, fraction: 0, resolution: 0),
        UTCRow(text: "2026-13-23T13:10:16Z", seconds: nil, fraction: 0, resolution: 0),
        UTCRow(text: "2026-11-23T13:10:16.Z", seconds: nil, fraction: 0, resolution: 0),
        UTCRow(text: "2026-11-23 13:10:16Z", seconds: nil, fraction: 0, resolution: 0),
        UTCRow(text: "", seconds: nil, fraction: 0, resolution: 0),
    ])
    func serverTimeParsesXEP0202UTC(_ row: UTCRow) {
        let parsed = ClockOffset.serverTime(utc: row.text)
        if let seconds = row.seconds {
            #expect(parsed?.nanoseconds == seconds * Self.second + row.fraction)
            #expect(parsed?.resolution == row.resolution)
        } else {
            #expect(parsed == nil)
        }
    }
}

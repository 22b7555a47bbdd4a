import Foundation

/// A generator's clock against a common reference (the server's XEP-0202 entity time), so latencies
/// of messages that cross generators do not depend on the generators' clocks agreeing.
///
/// Each `Sample` is one time query: sent at `sent` and answered at `received` (the generator's wall
/// clock, nanoseconds since 1970) with the server's time `server`, which the server may have
/// truncated to `resolution` (Prosody answers whole seconds). So the server's clock read between
/// `server` and `server + resolution` at some moment between `sent` and `received`, and the offset
/// (server − generator) lies in `[server − received, server + resolution − sent]`. `estimate`
/// intersects these intervals over every sample (samples taken at different phases of the server's
/// second narrow a coarse clock down to the round trip) and gives the middle as `offset` and half the
/// width as `uncertainty`. With a fine-grained server this is the usual rule: the sample with the
/// smallest round trip, offset = server time − midpoint, uncertainty = rtt / 2. Units: milliseconds.
public struct ClockOffset: Codable, Sendable, Equatable {
    /// Server time minus this generator's wall clock, ms.
    public var offsetMilliseconds: Double
    /// Half-width of the interval the offset is known to lie in, ms (≥ 0).
    public var uncertaintyMilliseconds: Double
    /// Time queries the estimate used.
    public var samples: Int
    /// What the generator was compared with (`xep-0202`).
    public var reference: String

    enum CodingKeys: String, CodingKey {
        case offsetMilliseconds = "offset_ms"
        case uncertaintyMilliseconds = "uncertainty_ms"
        case samples, reference
    }

    public init(offsetMilliseconds: Double, uncertaintyMilliseconds: Double, samples: Int, reference: String = "xep-0202") {
        self.offsetMilliseconds = offsetMilliseconds
        self.uncertaintyMilliseconds = uncertaintyMilliseconds
        self.samples = samples
        self.reference = reference
    }

    /// One time query (all values nanoseconds since 1970; `resolution` > 0).
    public struct Sample: Sendable, Equatable {
        public var sent: Int64
        public var received: Int64
        public var server: Int64
        public var resolution: Int64

        public init(sent: Int64, received: Int64, server: Int64, resolution: Int64) {
            self.sent = sent
            self.received = received
            self.server = server
            self.resolution = resolution
        }

        /// The interval of offsets (server − generator, ns) this sample allows.
        var bounds: ClosedRange<Int64> { (server - received)...(server + resolution - sent) }
    }

    /// The estimate from `samples` (those with `received < sent` are ignored); nil without any.
    /// When the samples contradict each other (a clock stepped), the narrowest one alone is used.
    public static func estimate(_ samples: [Sample]) -> ClockOffset? {
        let usable = samples.filter { $0.received >= $0.sent && $0.resolution > 0 }
        guard let narrowest = usable.min(by: { $0.bounds.count < $1.bounds.count }) else { return nil }
        var lower = Int64.min
        var upper = Int64.max
        for sample in usable {
            lower = max(lower, sample.bounds.lowerBound)
            upper = min(upper, sample.bounds.upperBound)
        }
        if lower > upper { (lower, upper) = (narrowest.bounds.lowerBound, narrowest.bounds.upperBound) }
        let middle = Double(lower) / 2 + Double(upper) / 2
        return ClockOffset(
            offsetMilliseconds: middle / 1e6, uncertaintyMilliseconds: Double(upper - lower) / 2e6, samples: usable.count)
    }

    /// The latency of a message between two generators, ms, from the sender's and the receiver's
    /// readings on their own wall clocks: both moved to the server's clock first. Its uncertainty is
    /// the sum of both generators' (`crossUncertainty`).
    public static func crossLatency(sentWall: Int64, sender: ClockOffset, receivedWall: Int64, receiver: ClockOffset) -> Double {
        (Double(receivedWall - sentWall)) / 1e6 + receiver.offsetMilliseconds - sender.offsetMilliseconds
    }

    /// The uncertainty of a latency between generators with these offsets, ms.
    public static func crossUncertainty(_ sender: ClockOffset, _ receiver: ClockOffset) -> Double {
        sender.uncertaintyMilliseconds + receiver.uncertaintyMilliseconds
    }

    /// Parses XEP-0202's `<utc>` (`2026-11-23T13:10:16Z`, optionally with a fraction of a second):
    /// nanoseconds since 1970 and the resolution the text carries (1 s without a fraction, 1 ms with
    /// three digits, …). nil for anything else.
    public static func serverTime(utc text: String) -> (nanoseconds: Int64, resolution: Int64)? {
        let bytes = Array(text.utf8)
        guard bytes.count >= 20, bytes.last == UInt8(ascii: "Z") else { return nil }
        func number(_ range: Range<Int>) -> Int? {
            var value = 0
            for index in range {
                guard index < bytes.count, (48...57).contains(bytes[index]) else { return nil }
                value = value * 10 + Int(bytes[index] - 48)
            }
            return value
        }
        let separators: [(Int, Character)] = [(4, "-"), (7, "-"), (10, "T"), (13, ":"), (16, ":")]
        guard separators.allSatisfy({ bytes[$0.0] == UInt8(ascii: $0.1.unicodeScalars.first!) }),
            let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
            let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19),
            (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 61
        else { return nil }
        var fraction: Int64 = 0
        var resolution: Int64 = 1_000_000_000
        if bytes.count > 20 {
            let digits = bytes.count - 21
            guard bytes[19] == UInt8(ascii: "."), (1...9).contains(digits), let value = number(20..<(20 + digits)) else { return nil }
            resolution = Int64(pow(10, Double(9 - digits)))
            fraction = Int64(value) * resolution
        } else if bytes.count != 20 {
            return nil
        }
        var components = DateComponents()
        (components.year, components.month, components.day) = (year, month, day)
        (components.hour, components.minute, components.second) = (hour, minute, second)
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        guard let date = calendar.date(from: components) else { return nil }
        return (Int64(date.timeIntervalSince1970.rounded()) * 1_000_000_000 + fraction, resolution)
    }
}

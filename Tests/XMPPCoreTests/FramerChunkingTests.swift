import Testing

@testable import XMPPCore

/// One event per depth-1 element, whatever the chunking of a recorded server stream.
@Suite struct FramerChunkingTests {
    /// The stream in whole segments: the reference every chunking must reproduce exactly.
    let reference: [StreamEvent]

    init() throws {
        reference = try FramerDriver.run(FramerTranscript.segments) { [$0] }.events
    }

    @Test func wholeSegmentsGiveTheExpectedUnits() throws {
        #expect(reference.map(\.outline) == FramerTranscript.expectedOutline)
    }

    @Test func parsedContentOfTheRecordedStream() throws {
        let elements = reference.compactMap { event -> XMLElement? in
            if case .element(let element) = event { return element }
            return nil
        }
        let headers = reference.compactMap { event -> StreamHeader? in
            if case .open(let header) = event { return header }
            return nil
        }
        #expect(headers.map(\.id) == ["b5c2f0a1-1", "b5c2f0a1-2", "b5c2f0a1-3"])
        #expect(headers.allSatisfy { $0.defaultNamespace == XMPPNamespace.client && $0.from == "load.test" })

        let starttls = try #require(elements[0].firstChild(named: "starttls", namespace: XMPPNamespace.tls))
        #expect(starttls.firstChild(named: "required", namespace: XMPPNamespace.tls) != nil)

        let mechanisms = try #require(elements[2].firstChild(named: "mechanisms", namespace: XMPPNamespace.sasl))
        #expect(mechanisms.children(named: "mechanism").map(\.text) == ["SCRAM-SHA-1", "PLAIN"])
        #expect(elements[3].text.hasPrefix("cj1meWtv"))
        #expect(elements[4].firstChild(named: "query")?.firstChild(named: "name")?.text == "Load & Test")
        #expect(elements[5].name == "success")

        let roster = try #require(elements[8].firstChild(named: "query", namespace: XMPPNamespace.roster))
        let items = roster.children(named: "item", namespace: XMPPNamespace.roster)
        #expect(items.map { $0.attribute("name") } == ["User \"Two\" & co", "it's > 2"])
        #expect(items[0].firstChild(named: "group")?.text == "Load")

        let message = elements[10]
        #expect(message.firstChild(named: "body")?.text == "tricky <success/> & </stream:stream> with 'single' and \"double\"")
        let stamp = try #require(message.firstChild(named: "stamp", namespace: XMPPNamespace.stamp))
        #expect(stamp.attribute("seq") == "1")

        #expect(elements[11].firstChild(named: "body")?.text == "cdata <b>bold</b> ]] ] > </message> ]")
        let attributes = try #require(elements[12].firstChild(named: "x")).attributes
        #expect(attributes == [XMLAttribute("a", "a>b"), XMLAttribute("b", "c/>d"), XMLAttribute("c", "</x>"), XMLAttribute("d", "'")])
        #expect(elements[13].firstChild(named: "ping", namespace: XMPPNamespace.ping) != nil)
        #expect(elements[14].firstChild(named: "body")?.text == "héllo 👋 — 中文 😀")
        let form = try #require(elements[15].firstChild(named: "x", namespace: "jabber:x:data"))
        #expect(form.elementChildren.count == 2)
        #expect(form.firstChild(named: "x")?.firstChild(named: "x")?.text == "deep")

        let streamError = elements[16]
        #expect(streamError.firstChild(named: "conflict", namespace: XMPPNamespace.streamErrors) != nil)
        #expect(streamError.firstChild(named: "text")?.attribute("xml:lang") == "en")
    }

    @Test func everySingleByteChunking() throws {
        let driver = try FramerDriver.run(FramerTranscript.segments) { Array(repeating: 1, count: $0) }
        #expect(driver.events == reference)
        #expect(driver.framer.bufferedByteCount == 0)
        #expect(driver.framer.bufferCapacity == 0)
    }

    @Test(arguments: 0..<200)
    func randomChunkSizes(seed: Int) throws {
        var generator = SeededGenerator(seed: UInt64(seed))
        let maximum = [2, 7, 64, 512][seed % 4]
        let driver = try FramerDriver.run(FramerTranscript.segments) { length in
            var sizes: [Int] = []
            var covered = 0
            while covered < length {
                let size = Int.random(in: 1...maximum, using: &generator)
                sizes.append(size)
                covered += size
            }
            return sizes
        }
        #expect(driver.events == reference, "seed \(seed)")
        #expect(driver.framer.bufferedByteCount == 0)
    }

    @Test(arguments: 0..<200)
    func shuffledChunkBoundaries(seed: Int) throws {
        var generator = SeededGenerator(seed: 0xC0FFEE &+ UInt64(seed))
        let driver = try FramerDriver.run(FramerTranscript.segments) { length in
            let cuts = Set(
                (0..<Int.random(in: 1...24, using: &generator)).map { _ in
                    Int.random(in: 1..<length, using: &generator)
                })
            var sizes: [Int] = []
            var previous = 0
            for cut in cuts.sorted() + [length] {
                sizes.append(cut - previous)
                previous = cut
            }
            return sizes
        }
        #expect(driver.events == reference, "seed \(seed)")
    }

    @Test func everyTwoChunkSplitOfEachSegment() throws {
        for (index, segment) in FramerTranscript.segments.enumerated() {
            for cut in 1..<segment.count {
                let driver = try FramerDriver.run(FramerTranscript.segments) { length in
                    length == segment.count ? [cut, length - cut] : [length]
                }
                #expect(driver.events == reference, "segment \(index) cut at \(cut)")
            }
        }
    }

    @Test func bufferHoldsOnlyTheIncompleteElement() throws {
        // Drip-fed byte by byte, the buffer never holds more than the largest unit of the stream.
        var largestUnit = 0
        for segment in FramerTranscript.segments {
            var framer = XMLStreamFramer()
            framer.append(segment)
            while let unit = try framer.next() {
                switch unit {
                case .streamOpen(let bytes), .element(let bytes): largestUnit = max(largestUnit, bytes.count)
                case .streamClose: break
                }
            }
        }
        let driver = try FramerDriver.run(FramerTranscript.segments) { Array(repeating: 1, count: $0) }
        #expect(driver.peakBuffered < largestUnit)
        #expect(driver.peakBuffered > 0)
    }

    @Test func storageIsReleasedAfterWholeSegments() throws {
        let driver = try FramerDriver.run(FramerTranscript.segments) { [$0] }
        #expect(driver.framer.bufferedByteCount == 0)
        #expect(driver.framer.bufferCapacity == 0)
    }
}

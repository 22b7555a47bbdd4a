import Foundation
import NIOCore
import NIOEmbedded
import Testing
import XMPPCore

@testable import LoadEngine

/// A recorded client–server conversation: `C ` lines are what the client must send (compared by
/// meaning: element name, namespace, iq type), `S ` lines are the server's bytes, replayed verbatim.
/// `#` lines are comments. Files live in Tests/LoadEngineTests/Transcripts.
struct Transcript {
    enum Entry {
        case client(String)
        case server(String)
    }

    let entries: [Entry]

    init(named name: String) throws {
        let url = try #require(Bundle.module.url(forResource: name, withExtension: "txt", subdirectory: "Transcripts"))
        try self.init(text: String(contentsOf: url, encoding: .utf8))
    }

    init(text: String) throws {
        var entries: [Entry] = []
        for line in text.split(separator: "\n", omittingEmptySubsequences: true) where !line.hasPrefix("#") {
            if line.hasPrefix("C ") {
                entries.append(.client(String(line.dropFirst(2))))
            } else if line.hasPrefix("S ") {
                entries.append(.server(String(line.dropFirst(2))))
            }
        }
        self.entries = entries
    }
}

/// One unit of what the client wrote: its stream header, an element, or the stream close.
enum ClientUnit: Equatable, CustomStringConvertible {
    case header
    case element(name: String, namespace: String, type: String?)
    case close

    var description: String {
        switch self {
        case .header: return "<stream:stream>"
        case .close: return "</stream:stream>"
        case .element(let name, let namespace, let type): return "<\(name) xmlns='\(namespace)' type=\(type ?? "-")>"
        }
    }

    /// The unit a transcript's `C ` line stands for. A bare `<iq` means "some iq".
    init(expected line: String, parser: StanzaParser, header: StreamHeader) throws {
        if line.hasPrefix("<?xml") || line.hasPrefix("<stream:stream") {
            self = .header
            return
        }
        if line.hasPrefix("</stream:stream") {
            self = .close
            return
        }
        if line == "<iq" {
            self = .element(name: "iq", namespace: XMPPNamespace.client, type: nil)
            return
        }
        let element = try parser.parseElement(Array(line.utf8), in: header)
        self = .element(name: element.name, namespace: element.namespace, type: element.attribute("type"))
    }

    func matches(_ expected: ClientUnit) -> Bool {
        switch (self, expected) {
        case (.element(let name, let namespace, let type), .element(let expectedName, let expectedNamespace, let expectedType)):
            return name == expectedName && namespace == expectedNamespace && (expectedType == nil || type == expectedType)
        default:
            return self == expected
        }
    }
}

/// Splits the client's output bytes into units (headers restart the stream, as the client does).
struct ClientOutputSplitter {
    private var pending: [UInt8] = []
    private var framer = XMLStreamFramer()
    private let parser: StanzaParser
    private let header: StreamHeader

    init(parser: StanzaParser, header: StreamHeader) {
        self.parser = parser
        self.header = header
    }

    mutating func append(_ bytes: [UInt8]) { pending += bytes }

    mutating func next() throws -> ClientUnit? {
        // Skip whitespace.
        while let first = pending.first, first == 0x20 || first == 0x0A { pending.removeFirst() }
        guard !pending.isEmpty else { return nil }
        let text = String(decoding: pending, as: UTF8.self)
        if text.hasPrefix("<?xml") || text.hasPrefix("<stream:stream") {
            guard let start = text.range(of: "<stream:stream"), let end = text[start.upperBound...].firstIndex(of: ">") else { return nil }
            pending.removeFirst(text[...end].utf8.count)
            return .header
        }
        if text.hasPrefix("</stream:stream>") {
            pending.removeFirst("</stream:stream>".utf8.count)
            return .close
        }
        // One element: frame it inside a synthetic stream.
        var framer = XMLStreamFramer()
        framer.append(Array("<stream:stream xmlns='jabber:client' xmlns:stream='http://etherx.jabber.org/streams'>".utf8))
        framer.append(pending)
        _ = try framer.next()
        guard case .element(let bytes)? = try framer.next() else { return nil }
        pending.removeFirst(bytes.count)
        let element = try parser.parseElement(bytes, in: header)
        return .element(name: element.name, namespace: element.namespace, type: element.attribute("type"))
    }
}

/// What a client wrote, checked unit by unit against a transcript's `C ` lines: its output bytes go in
/// (`append`), whole units come out (`next`), each compared by meaning (`ClientUnit.matches`).
struct ClientOutputChecker {
    let parser = StanzaParser()
    let header: StreamHeader
    private var splitter: ClientOutputSplitter

    init() throws {
        header = try parser.parseHeader(Array("<stream:stream xmlns='jabber:client' xmlns:stream='http://etherx.jabber.org/streams'>".utf8))
        splitter = ClientOutputSplitter(parser: parser, header: header)
    }

    /// The unit a `C ` line stands for.
    func expected(_ line: String) throws -> ClientUnit {
        try ClientUnit(expected: line, parser: parser, header: header)
    }

    mutating func append(_ bytes: [UInt8]) { splitter.append(bytes) }

    /// The next whole unit the client wrote, or nil when there is none yet.
    mutating func next() throws -> ClientUnit? { try splitter.next() }
}

extension PipelineHarness {
    /// Replays `transcript` over a TCP session: checks each client unit in order, feeds each server block.
    func replay(_ transcript: Transcript) throws {
        var client = try ClientOutputChecker()
        for entry in transcript.entries {
            switch entry {
            case .client(let line):
                let expected = try client.expected(line)
                client.append(try clientBytes())
                let actual = try #require(try client.next(), "client sent nothing; expected \(expected)")
                #expect(actual.matches(expected), "client sent \(actual), transcript expects \(expected)")
            case .server(let text):
                try serverSends(text)
            }
        }
    }
}

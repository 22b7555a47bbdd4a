import Foundation
import LoadResults
import Testing

@testable import LoadEngine

/// A scrape's HTTP response read from bytes in every chunking: Content-Length, chunked and
/// read-to-close bodies, refusals, and the byte limits.
@Suite struct HTTPResponseReaderTests {
    static var small: ScrapeLimits {
        var limits = ScrapeLimits()
        limits.maxBodyBytes = 64
        limits.maxHeaderBytes = 128
        return limits
    }

    /// Feeds `response` in pieces of `piece` bytes; the outcome once complete, or at the close.
    static func read(_ response: String, piece: Int, limits: ScrapeLimits = small) -> Result<[UInt8], ScrapeHTTPClient.Failure> {
        var reader = HTTPResponseReader(limits: limits)
        let bytes = Array(response.utf8)
        var index = 0
        while index < bytes.count {
            reader.append(bytes[index..<min(index + piece, bytes.count)])
            if let outcome = reader.outcome { return outcome }
            index += piece
        }
        return reader.finish()
    }

    static func body(_ text: String) -> Result<[UInt8], ScrapeHTTPClient.Failure> { .success(Array(text.utf8)) }

    struct Row: Sendable, CustomStringConvertible {
        var name: String
        var response: String
        var outcome: Result<[UInt8], ScrapeHTTPClient.Failure>
        var description: String { name }
    }

    static let rows: [Row] = [
        Row(name: "Content-Length", response: "HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\na 1\nEXTRA", outcome: body("a 1\n")),
        Row(
            name: "chunked, with an extension and a trailer",
            response: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4;x=y\r\na 1\n\r\n6\r\nb 22\n\n\r\n0\r\nX-T: 1\r\n\r\n",
            outcome: body("a 1\nb 22\n\n")),
        Row(name: "until the close", response: "HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\na 1\n", outcome: body("a 1\n")),
        Row(name: "a status other than 200", response: "HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n", outcome: .failure(.status(403))),
        Row(name: "not HTTP", response: "SSH-2.0-OpenSSH_9.2\r\n\r\n", outcome: .failure(.malformed("not an HTTP/1.x response"))),
        Row(name: "nothing", response: "", outcome: .failure(.malformed("the connection closed without a response"))),
        Row(
            name: "headers without an end", response: "HTTP/1.1 200 OK\r\nX: " + String(repeating: "y", count: 200),
            outcome: .failure(.malformed("response headers longer than 128 bytes"))),
        Row(
            name: "a declared body over the limit", response: "HTTP/1.1 200 OK\r\nContent-Length: 65\r\n\r\n",
            outcome: .failure(.tooLarge("the body is 65 bytes, over the 64 bytes limit"))),
        Row(
            name: "a chunked body over the limit",
            response: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n20\r\n" + String(repeating: "a", count: 32) + "\r\n21\r\n",
            outcome: .failure(.tooLarge("the chunked body is over the 64 bytes limit"))),
        Row(
            name: "a read-to-close body over the limit", response: "HTTP/1.1 200 OK\r\n\r\n" + String(repeating: "a", count: 65),
            outcome: .failure(.tooLarge("the body is over the 64 bytes limit"))),
        Row(
            name: "compressed", response: "HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: 3\r\n\r\nabc",
            outcome: .failure(.malformed("a gzip-encoded body (only identity is read)"))),
        Row(
            name: "cut short", response: "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc",
            outcome: .failure(.malformed("the body was cut short (3 of 10 bytes)"))),
        Row(
            name: "chunked, cut short", response: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nab",
            outcome: .failure(.malformed("the chunked body was cut short"))),
        Row(
            name: "a bad chunk size", response: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
            outcome: .failure(.malformed("\"zz\" is not a chunk size"))),
    ]

    @Test(arguments: rows, [1, 3, 7, 1000]) func readsEveryChunking(_ row: Row, piece: Int) {
        #expect(Self.read(row.response, piece: piece) == row.outcome)
    }
}

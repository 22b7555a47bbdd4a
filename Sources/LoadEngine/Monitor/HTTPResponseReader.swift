/// Reads one HTTP/1.1 response from bytes as they arrive (any chunking), for a scrape: the status
/// line and headers (at most `maxHeaderBytes`), then a body framed by `Content-Length`, by chunked
/// transfer coding, or by the connection's close — at most `maxBodyBytes` of body. A value with no
/// I/O: `append` what was read, `outcome` is set once the response is complete or refused, `finish`
/// says what a close means at this point.
struct HTTPResponseReader {
    typealias Failure = ScrapeHTTPClient.Failure

    private let limits: ScrapeLimits
    /// Bytes appended so far (headers and framing included).
    private(set) var received = 0
    /// Until the headers end: everything; then only the body (decoded when chunked).
    private var bytes: [UInt8] = []
    private var inBody = false
    private var contentLength: Int?
    private var chunked: ChunkedDecoder?
    /// The body, or why there is none; nil while more is needed.
    private(set) var outcome: Result<[UInt8], Failure>?

    init(limits: ScrapeLimits) {
        self.limits = limits
    }

    mutating func append(_ data: ArraySlice<UInt8>) {
        guard outcome == nil else { return }
        received += data.count
        if inBody {
            appendBody(data)
            return
        }
        bytes.append(contentsOf: data)
        guard let end = headerEnd() else {
            if bytes.count > limits.maxHeaderBytes {
                outcome = .failure(.malformed("response headers longer than \(limits.maxHeaderBytes) bytes"))
            }
            return
        }
        let rest = bytes[end...]
        guard parseHeaders(bytes[..<end]) else { return }
        inBody = true
        bytes = []
        appendBody(rest)
    }

    /// The connection closed: the body if it was complete.
    mutating func finish() -> Result<[UInt8], Failure> {
        if let outcome { return outcome }
        guard inBody else {
            return .failure(.malformed(received == 0 ? "the connection closed without a response" : "the response ended within its headers"))
        }
        if chunked != nil { return .failure(.malformed("the chunked body was cut short")) }
        if let contentLength, bytes.count < contentLength {
            return .failure(.malformed("the body was cut short (\(bytes.count) of \(contentLength) bytes)"))
        }
        return .success(bytes)
    }

    private func headerEnd() -> Int? {
        guard bytes.count >= 4 else { return nil }
        for index in 0...(bytes.count - 4)
        where bytes[index] == 0x0D && bytes[index + 1] == 0x0A && bytes[index + 2] == 0x0D && bytes[index + 3] == 0x0A {
            return index + 4
        }
        return nil
    }

    private mutating func parseHeaders(_ head: ArraySlice<UInt8>) -> Bool {
        let text = String(decoding: head, as: UTF8.self)
        var lines = text.split(separator: "\r\n", omittingEmptySubsequences: true)
        guard let statusLine = lines.first, statusLine.hasPrefix("HTTP/1."),
            let code = statusLine.split(separator: " ").dropFirst().first.flatMap({ Int($0) })
        else {
            outcome = .failure(.malformed("not an HTTP/1.x response"))
            return false
        }
        guard code == 200 else {
            outcome = .failure(.status(code))
            return false
        }
        lines.removeFirst()
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let name = line[..<colon].lowercased()
            let value = line[line.index(after: colon)...].trimmingSpaces.lowercased()
            switch name {
            case "content-length":
                guard let length = Int(value), length >= 0 else {
                    outcome = .failure(.malformed("Content-Length \"\(value)\" is not a number"))
                    return false
                }
                guard length <= limits.maxBodyBytes else {
                    outcome = .failure(.tooLarge("the body is \(length) bytes, over the \(limits.bodyLimitText) limit"))
                    return false
                }
                contentLength = length
            case "transfer-encoding":
                if value.contains("chunked") { chunked = ChunkedDecoder() }
            case "content-encoding":
                if value != "identity" {
                    outcome = .failure(.malformed("a \(value)-encoded body (only identity is read)"))
                    return false
                }
            default: break
            }
        }
        if chunked != nil { contentLength = nil }
        return true
    }

    private mutating func appendBody(_ data: ArraySlice<UInt8>) {
        if var decoder = chunked {
            switch decoder.feed(data, into: &bytes, limit: limits.maxBodyBytes) {
            case .more: chunked = decoder
            case .done:
                chunked = nil
                outcome = .success(bytes)
            case .invalid(let problem): outcome = .failure(.malformed(problem))
            case .tooLarge: outcome = .failure(.tooLarge("the chunked body is over the \(limits.bodyLimitText) limit"))
            }
            return
        }
        if let contentLength {
            bytes.append(contentsOf: data.prefix(contentLength - bytes.count))
            if bytes.count >= contentLength { outcome = .success(bytes) }
            return
        }
        guard bytes.count + data.count <= limits.maxBodyBytes else {
            outcome = .failure(.tooLarge("the body is over the \(limits.bodyLimitText) limit"))
            return
        }
        bytes.append(contentsOf: data)
    }
}

/// Chunked transfer coding (RFC 9112 §7.1), decoded incrementally: chunk-size lines (extensions
/// ignored, at most 1 KiB), data, CRLF, then the last chunk and trailers.
struct ChunkedDecoder {
    enum Progress: Equatable {
        case more, done, tooLarge
        case invalid(String)
    }

    private enum Phase {
        case size
        case data(remaining: Int)
        case dataEnd
        case trailers
    }

    private var phase = Phase.size
    private var line: [UInt8] = []

    mutating func feed(_ data: ArraySlice<UInt8>, into body: inout [UInt8], limit: Int) -> Progress {
        var index = data.startIndex
        while index < data.endIndex {
            switch phase {
            case .data(let remaining):
                let take = min(remaining, data.endIndex - index)
                guard body.count + take <= limit else { return .tooLarge }
                body.append(contentsOf: data[index..<(index + take)])
                index += take
                phase = remaining - take == 0 ? .dataEnd : .data(remaining: remaining - take)
            case .size, .dataEnd, .trailers:
                let byte = data[index]
                index += 1
                guard byte == 0x0A else {
                    line.append(byte)
                    if line.count > 1024 { return .invalid("a chunk-size line longer than 1 KiB") }
                    continue
                }
                if line.last == 0x0D { line.removeLast() }
                let text = String(decoding: line, as: UTF8.self)
                line = []
                switch phase {
                case .size:
                    let hex = text.split(separator: ";", maxSplits: 1).first.map { $0.trimmingSpaces } ?? ""
                    guard !hex.isEmpty, hex.count <= 8, let size = Int(hex, radix: 16) else {
                        return .invalid("\"\(text.prefix(20))\" is not a chunk size")
                    }
                    if size == 0 {
                        phase = .trailers
                    } else {
                        guard body.count + size <= limit else { return .tooLarge }
                        phase = .data(remaining: size)
                    }
                case .dataEnd:
                    guard text.isEmpty else { return .invalid("a chunk is longer than its size") }
                    phase = .size
                case .trailers:
                    if text.isEmpty { return .done }
                case .data:
                    break
                }
            }
        }
        return .more
    }
}

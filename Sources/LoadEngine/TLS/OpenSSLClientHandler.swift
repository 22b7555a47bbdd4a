// One connection's TLS client over OpenSSL's libssl, as a NIO channel handler on NIO's public API:
// ciphertext in and out through a BIO that reads the channel's buffers and writes into ByteBuffers.

import CLibSSL
import NIOCore
import NIOTLS

#if canImport(Glibc)
import Glibc
#endif

/// The TLS client of one connection (STARTTLS, direct TLS, wss, https): sits at the bottom of the
/// pipeline, turns the channel's ciphertext into plaintext for the handlers above and back.
///
/// - The handshake starts when the channel is active, or at once when added to a live channel
///   (STARTTLS after `<proceed/>`). Writes from above wait until it completed. On completion it fires
///   NIOTLS's `TLSUserEvent.handshakeCompleted(negotiatedProtocol:)` (the ALPN choice).
/// - SNI is `serverHostname` (nil for an IP literal: none sent). With a verifying context the
///   certificate is checked for that name, or, without one, for the IP address connected to.
/// - A failed handshake fires an `OpenSSLError` (`.certificate` with the verify result and problem,
///   `.handshake`, `.unexpectedEOF`) and closes the channel.
/// - No buffers are held while idle: the BIO keeps ciphertext only during the call that consumes it
///   (the rest of a partial record until the next read), and OpenSSL's record buffers are freed once
///   empty (`SSL_MODE_RELEASE_BUFFERS`, and `SSL_free_buffers` after each read and flush).
/// - `close(mode: .all)` sends close_notify first; the server's close_notify ends the input.
///
/// Loop-bound: one instance per channel, used only on its event loop.
public final class OpenSSLClientHandler: ChannelDuplexHandler, RemovableChannelHandler {
    public typealias InboundIn = ByteBuffer
    public typealias InboundOut = ByteBuffer
    public typealias OutboundIn = ByteBuffer
    public typealias OutboundOut = ByteBuffer

    private enum State { case idle, handshaking, active, closing, closed }

    private let sslContext: OpenSSLContext
    private let serverHostname: String?
    private var ssl: OpaquePointer?
    private var state = State.idle
    var allocator = ByteBufferAllocator()
    /// Ciphertext received and not yet consumed by OpenSSL (nil when none).
    var inbound: ByteBuffer?
    /// Ciphertext OpenSSL wrote, not yet handed to the channel (nil when none).
    var outbound: ByteBuffer?
    /// Plaintext writes made before the handshake completed, and whether a flush followed them.
    private var pendingWrites: [(ByteBuffer, EventLoopPromise<Void>?)] = []
    private var pendingFlush = false

    /// `serverHostname` must not be an IP literal (`TLSSetup.isIPLiteral`): it is sent as SNI.
    public init(context: OpenSSLContext, serverHostname: String?) {
        sslContext = context
        self.serverHostname = serverHostname
    }

    deinit {
        if let ssl { SSL_free(ssl) }
    }

    /// The negotiated protocol version ("TLSv1.3", "TLSv1.2"), once the handshake completed.
    public var tlsVersion: String? {
        guard state == .active || state == .closing, let ssl else { return nil }
        return String(cString: SSL_get_version(ssl))
    }

    /// The negotiated cipher suite's IANA name (e.g. "TLS_AES_128_GCM_SHA256"), once completed.
    public var cipherSuite: String? {
        guard state == .active || state == .closing, let ssl, let cipher = SSL_get_current_cipher(ssl),
            let name = SSL_CIPHER_standard_name(cipher)
        else { return nil }
        return String(cString: name)
    }

    /// The ALPN protocol the server chose (nil: none).
    public var negotiatedProtocol: String? {
        guard let ssl else { return nil }
        var data: UnsafePointer<UInt8>?
        var length: UInt32 = 0
        SSL_get0_alpn_selected(ssl, &data, &length)
        guard let data, length > 0 else { return nil }
        return String(decoding: UnsafeBufferPointer(start: data, count: Int(length)), as: UTF8.self)
    }

    /// The server's leaf certificate as DER bytes (nil before its Certificate message).
    public var peerCertificateDER: [UInt8]? {
        guard let ssl, let leaf = xl_SSL_peer_leaf(ssl) else { return nil }
        return OpenSSLError.der(of: leaf)
    }

    // MARK: Pipeline events

    public func handlerAdded(context: ChannelHandlerContext) {
        allocator = context.channel.allocator
        if context.channel.isActive { startHandshake(context: context) }
    }

    public func handlerRemoved(context: ChannelHandlerContext) {
        failPendingWrites(ChannelError.ioOnClosedChannel)
        if let ssl { SSL_free(ssl) }
        ssl = nil
        inbound = nil
        outbound = nil
        state = .closed
    }

    public func channelActive(context: ChannelHandlerContext) {
        startHandshake(context: context)
        context.fireChannelActive()
    }

    public func channelInactive(context: ChannelHandlerContext) {
        let wasHandshaking = state == .handshaking
        state = .closed
        failPendingWrites(ChannelError.ioOnClosedChannel)
        if wasHandshaking {
            context.fireErrorCaught(
                OpenSSLError(kind: .unexpectedEOF, reason: "the server closed the connection during the TLS handshake"))
        }
        context.fireChannelInactive()
    }

    public func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var bytes = unwrapInboundIn(data)
        guard state == .handshaking || state == .active || state == .closing else { return }
        if inbound == nil {
            inbound = bytes
        } else {
            inbound!.writeBuffer(&bytes)
        }
        if state == .handshaking { continueHandshake(context: context) }
        if state == .active || state == .closing { readPlaintext(context: context) }
        if inbound?.readableBytes == 0 { inbound = nil }
        releaseBuffers()
    }

    public func channelReadComplete(context: ChannelHandlerContext) {
        // OpenSSL may have answered something (a key update) while reading.
        if let bytes = takeOutbound() { context.writeAndFlush(wrapOutboundOut(bytes), promise: nil) }
        context.fireChannelReadComplete()
    }

    public func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let plaintext = unwrapOutboundIn(data)
        switch state {
        case .idle, .handshaking:
            pendingWrites.append((plaintext, promise))
        case .active:
            encrypt(context: context, plaintext, promise: promise)
        case .closing, .closed:
            promise?.fail(ChannelError.ioOnClosedChannel)
        }
    }

    public func flush(context: ChannelHandlerContext) {
        if state == .idle || state == .handshaking {
            pendingFlush = true
        } else {
            context.flush()
            releaseBuffers()
        }
    }

    public func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
        guard mode == .all, state == .active, let ssl else {
            if mode == .all { state = .closed }
            context.close(mode: mode, promise: promise)
            return
        }
        state = .closing
        ERR_clear_error()
        _ = SSL_shutdown(ssl)  // queues close_notify; the server's answer is not awaited
        guard let notify = takeOutbound() else {
            context.close(mode: mode, promise: promise)
            return
        }
        let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
        context.writeAndFlush(wrapOutboundOut(notify)).whenComplete { _ in
            bound.value.close(mode: .all, promise: promise)
        }
    }

    // MARK: Handshake

    private func startHandshake(context: ChannelHandlerContext) {
        guard state == .idle else { return }
        guard let ssl = SSL_new(sslContext.pointer) else {
            fail(context: context, OpenSSLError(kind: .setup, reason: "SSL_new: " + OpenSSLError.drainQueue()))
            return
        }
        self.ssl = ssl
        let bio = BIO_new(ChannelBIO.method)
        BIO_set_data(bio, Unmanaged.passUnretained(self).toOpaque())
        BIO_set_init(bio, 1)
        SSL_set_bio(ssl, bio, bio)
        SSL_set_connect_state(ssl)
        if let serverHostname {
            _ = xl_SSL_set_tlsext_host_name(ssl, serverHostname)
        }
        if sslContext.verifies {
            let parameters = SSL_get0_param(ssl)
            if let serverHostname {
                X509_VERIFY_PARAM_set_hostflags(parameters, UInt32(X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS))
                _ = X509_VERIFY_PARAM_set1_host(parameters, serverHostname, 0)
            } else if let address = context.channel.remoteAddress?.ipAddress {
                _ = X509_VERIFY_PARAM_set1_ip_asc(parameters, address)
            } else {
                fail(context: context, OpenSSLError(kind: .setup, reason: "no host name or peer address to verify"))
                return
            }
        }
        state = .handshaking
        continueHandshake(context: context)
    }

    private func continueHandshake(context: ChannelHandlerContext) {
        guard let ssl else { return }
        ERR_clear_error()
        let result = SSL_do_handshake(ssl)
        if result == 1 {
            if let bytes = takeOutbound() { context.writeAndFlush(wrapOutboundOut(bytes), promise: nil) }
            state = .active
            context.fireUserInboundEventTriggered(TLSUserEvent.handshakeCompleted(negotiatedProtocol: negotiatedProtocol))
            let writes = pendingWrites
            pendingWrites = []
            for (plaintext, promise) in writes where state == .active {
                encrypt(context: context, plaintext, promise: promise)
            }
            if pendingFlush {
                pendingFlush = false
                context.flush()
            }
            return
        }
        let code = SSL_get_error(ssl, result)
        if code == SSL_ERROR_WANT_READ {
            if let bytes = takeOutbound() { context.writeAndFlush(wrapOutboundOut(bytes), promise: nil) }
            releaseBuffers()
            return
        }
        let reason = OpenSSLError.drainQueue()
        let verify = SSL_get_verify_result(ssl)
        let error: OpenSSLError
        if sslContext.verifies && verify != Int(X509_V_OK) {
            let text = String(cString: X509_verify_cert_error_string(verify))
            error = OpenSSLError(
                kind: .certificate, reason: text, verifyResult: verify,
                problem: OpenSSLError.problem(verifyResult: verify, leaf: xl_SSL_peer_leaf(ssl), now: time(nil)))
        } else {
            error = OpenSSLError(kind: .handshake, reason: reason.isEmpty ? "SSL_do_handshake error \(code)" : reason)
        }
        // The alert OpenSSL queued goes out before the close.
        if let bytes = takeOutbound() { context.writeAndFlush(wrapOutboundOut(bytes), promise: nil) }
        fail(context: context, error)
    }

    // MARK: Records

    /// Decrypts everything the received ciphertext holds and passes it up.
    private func readPlaintext(context: ChannelHandlerContext) {
        guard let ssl else { return }
        var plaintext: ByteBuffer?
        while true {
            // Plaintext is never longer than the ciphertext that carried it.
            if plaintext == nil || plaintext!.writableBytes == 0 {
                if let full = plaintext { context.fireChannelRead(wrapInboundOut(full)) }
                plaintext = allocator.buffer(capacity: max(inbound?.readableBytes ?? 0, 256))
            }
            var count = 0
            ERR_clear_error()
            let result = plaintext!.writeWithUnsafeMutableBytes(minimumWritableBytes: 0) { buffer in
                let result = SSL_read_ex(ssl, buffer.baseAddress, buffer.count, &count)
                return result == 1 ? count : 0
            }
            if result > 0 { continue }
            let code = SSL_get_error(ssl, 0)
            if let plaintext, plaintext.readableBytes > 0 { context.fireChannelRead(wrapInboundOut(plaintext)) }
            switch code {
            case SSL_ERROR_WANT_READ:
                return
            case SSL_ERROR_ZERO_RETURN:
                // The server's close_notify: no more input.
                context.fireUserInboundEventTriggered(TLSUserEvent.shutdownCompleted)
                if state == .active { close(context: context, mode: .all, promise: nil) }  // answers it
                return
            default:
                fail(context: context, OpenSSLError(kind: .record, reason: OpenSSLError.drainQueue()))
                return
            }
        }
    }

    private func encrypt(context: ChannelHandlerContext, _ plaintext: ByteBuffer, promise: EventLoopPromise<Void>?) {
        guard let ssl, plaintext.readableBytes > 0 else {
            promise?.succeed(())
            return
        }
        ERR_clear_error()
        var written = 0
        let result = plaintext.withUnsafeReadableBytes { bytes in
            SSL_write_ex(ssl, bytes.baseAddress, bytes.count, &written)
        }
        guard result == 1 else {
            let error = OpenSSLError(kind: .record, reason: OpenSSLError.drainQueue())
            promise?.fail(error)
            fail(context: context, error)
            return
        }
        if let bytes = takeOutbound() {
            context.write(wrapOutboundOut(bytes), promise: promise)
        } else {
            promise?.succeed(())
        }
    }

    /// Frees OpenSSL's record buffers when they hold nothing. SSL_MODE_RELEASE_BUFFERS alone left one
    /// ~16 KiB buffer per idle connection here (OpenSSL 3.0; Benchmarks/tls-floor measured 42 KiB of
    /// heap per idle connection without this call, 25 KiB with it).
    private func releaseBuffers() {
        if let ssl { _ = SSL_free_buffers(ssl) }  // 0: still in use (a partial record), kept
    }

    private func takeOutbound() -> ByteBuffer? {
        defer { outbound = nil }
        return outbound
    }

    private func failPendingWrites(_ error: any Error) {
        let writes = pendingWrites
        pendingWrites = []
        pendingFlush = false
        for (_, promise) in writes { promise?.fail(error) }
    }

    private func fail(context: ChannelHandlerContext, _ error: OpenSSLError) {
        state = .closed
        failPendingWrites(error)
        context.fireErrorCaught(error)
        context.close(promise: nil)
    }
}

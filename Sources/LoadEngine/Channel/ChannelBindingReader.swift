import NIOCore
import NIOSSL
import XMPPCore

/// Reads a TLS connection's channel-binding data right after its handshake, for
/// `LoginMachine.tlsEstablished(channelBinding:)`:
/// - `tls-server-end-point` (RFC 5929) from the server's certificate (NIOSSL's `peerCertificate`);
/// - `tls-exporter` (RFC 9266, TLS 1.3 only) from the exporter master secret the TLS context's key log
///   gave `TLSExporterSecrets` on this thread, derived with `ChannelBindingDerivation.tlsExporter`
///   (HKDF-Expand-Label, as OpenSSL's `SSL_export_keying_material` does). NIOSSL has no exporter
///   API; this is the way around it.
///
/// Call on the channel's loop, from the handler of `TLSUserEvent.handshakeCompleted` (synchronously:
/// the exporter secret is the one this thread's handshake step just logged). Cost: one SHA over the
/// certificate and, with an exporter, a few HMACs; only when the run asked for channel binding.
package enum ChannelBindingReader {
    package static func read(_ pipeline: ChannelPipeline.SynchronousOperations, secrets: TLSExporterSecrets?) -> ChannelBindingData {
        var data = ChannelBindingData()
        if let tls = try? pipeline.handler(type: NIOSSLClientHandler.self), let der = try? tls.peerCertificate?.toDERBytes() {
            data.tlsServerEndPoint = ChannelBindingDerivation.tlsServerEndPoint(certificateDER: der)
        }
        if let secret = secrets?.takeForCurrentThread() {
            data.tlsExporter = ChannelBindingDerivation.tlsExporter(exporterMasterSecret: secret)
        }
        return data
    }
}

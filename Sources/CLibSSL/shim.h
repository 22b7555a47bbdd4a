/* CLibSSL: OpenSSL's libssl (Debian: libssl-dev) for the TLS client handler, plus static inline
 * wrappers for the macros Swift cannot call (LoadEngine/TLS/OpenSSLClientHandler.swift). */
#ifndef XMPPLOAD_CLIBSSL_SHIM_H
#define XMPPLOAD_CLIBSSL_SHIM_H
#include <openssl/ssl.h>
#include <openssl/err.h>
#include <openssl/bio.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <openssl/x509_vfy.h>

/* SSL_MODE_RELEASE_BUFFERS: an idle connection keeps no read or write buffer (OpenSSL frees them */
/* once empty). */
static inline long xl_SSL_CTX_set_release_buffers(SSL_CTX *ctx) {
    return SSL_CTX_set_mode(ctx, SSL_MODE_RELEASE_BUFFERS);
}
static inline long xl_SSL_CTX_get_mode(SSL_CTX *ctx) { return SSL_CTX_get_mode(ctx); }
static inline long xl_SSL_MODE_RELEASE_BUFFERS(void) { return SSL_MODE_RELEASE_BUFFERS; }
static inline int xl_SSL_CTX_set_min_proto_version(SSL_CTX *ctx, int version) {
    return (int)SSL_CTX_set_min_proto_version(ctx, version);
}
static inline int xl_SSL_CTX_set_max_proto_version(SSL_CTX *ctx, int version) {
    return (int)SSL_CTX_set_max_proto_version(ctx, version);
}
static inline int xl_SSL_set_tlsext_host_name(SSL *ssl, const char *name) {
    return (int)SSL_set_tlsext_host_name(ssl, name);
}
static inline long xl_BIO_get_mem_ptr(BIO *bio, BUF_MEM **pointer) { return BIO_get_mem_ptr(bio, pointer); }
static inline void xl_BIO_set_retry_read(BIO *bio) { BIO_set_retry_read(bio); }
static inline void xl_BIO_clear_retry_flags(BIO *bio) { BIO_clear_retry_flags(bio); }
static inline int xl_BIO_TYPE_SOURCE_SINK(void) { return BIO_TYPE_SOURCE_SINK; }
static inline int xl_BIO_CTRL_FLUSH(void) { return BIO_CTRL_FLUSH; }
static inline int xl_BIO_CTRL_PUSH(void) { return BIO_CTRL_PUSH; }
static inline int xl_BIO_CTRL_POP(void) { return BIO_CTRL_POP; }
static inline int xl_BIO_CTRL_DUP(void) { return BIO_CTRL_DUP; }
static inline int xl_BIO_CTRL_GET_CLOSE(void) { return BIO_CTRL_GET_CLOSE; }
static inline int xl_BIO_CTRL_SET_CLOSE(void) { return BIO_CTRL_SET_CLOSE; }
static inline int xl_BIO_CTRL_PENDING(void) { return BIO_CTRL_PENDING; }
static inline int xl_BIO_CTRL_WPENDING(void) { return BIO_CTRL_WPENDING; }
static inline int xl_BIO_CTRL_EOF(void) { return BIO_CTRL_EOF; }
/* The leaf of the chain the server sent (NULL before its Certificate message); not owned. */
static inline X509 *xl_SSL_peer_leaf(const SSL *ssl) {
    STACK_OF(X509) *chain = SSL_get_peer_cert_chain(ssl);
    if (chain == NULL || sk_X509_num(chain) < 1) return NULL;
    return sk_X509_value(chain, 0);
}
static inline int xl_SSL_peer_chain_count(const SSL *ssl) {
    STACK_OF(X509) *chain = SSL_get_peer_cert_chain(ssl);
    return chain == NULL ? 0 : sk_X509_num(chain);
}
static inline X509 *xl_SSL_peer_chain_at(const SSL *ssl, int index) {
    return sk_X509_value(SSL_get_peer_cert_chain(ssl), index);
}
#endif

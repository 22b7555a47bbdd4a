#ifndef XMPPLOAD_CCRYPTO_SHIM_H
#define XMPPLOAD_CCRYPTO_SHIM_H
/* The low-level SHA functions below are deprecated in OpenSSL 3.0 but kept (and not going through
   the provider layer, so they allocate nothing): the HMAC helper uses them on the stack. */
#define OPENSSL_SUPPRESS_DEPRECATED 1
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/sha.h>
#include <openssl/rand.h>
#include <string.h>

/* One hash context of SHA-1, SHA-256 or SHA-512 (`bits` 1, 256 or 512), on the caller's stack. */
typedef struct {
    int bits;
    union {
        SHA_CTX sha1;
        SHA256_CTX sha256;
        SHA512_CTX sha512;
    } u;
} xmppload_hash_ctx;

static inline int xmppload_hash_init(xmppload_hash_ctx *c, int bits) {
    c->bits = bits;
    switch (bits) {
    case 1: return SHA1_Init(&c->u.sha1);
    case 256: return SHA256_Init(&c->u.sha256);
    case 512: return SHA512_Init(&c->u.sha512);
    default: return 0;
    }
}

static inline void xmppload_hash_update(xmppload_hash_ctx *c, const void *data, size_t count) {
    switch (c->bits) {
    case 1: SHA1_Update(&c->u.sha1, data, count); break;
    case 256: SHA256_Update(&c->u.sha256, data, count); break;
    case 512: SHA512_Update(&c->u.sha512, data, count); break;
    }
}

static inline void xmppload_hash_final(xmppload_hash_ctx *c, unsigned char *out) {
    switch (c->bits) {
    case 1: SHA1_Final(out, &c->u.sha1); break;
    case 256: SHA256_Final(out, &c->u.sha256); break;
    case 512: SHA512_Final(out, &c->u.sha512); break;
    }
}

/* HMAC (RFC 2104) of `data` under `key` with SHA-1, SHA-256 or SHA-512 (`bits` 1, 256, 512) into
   `out` (room for 64 bytes); returns the digest size, or 0 for an unknown `bits`. No allocation. */
static inline int xmppload_hmac(int bits, const unsigned char *key, size_t keyCount, const unsigned char *data,
                                size_t dataCount, unsigned char *out) {
    const size_t block = bits == 512 ? 128 : 64;
    const int size = bits == 1 ? 20 : bits == 256 ? 32 : bits == 512 ? 64 : 0;
    unsigned char padded[128], pad[128], inner[64];
    xmppload_hash_ctx c;
    size_t i;
    if (size == 0) return 0;
    memset(padded, 0, sizeof padded);
    if (keyCount > block) {
        xmppload_hash_init(&c, bits);
        xmppload_hash_update(&c, key, keyCount);
        xmppload_hash_final(&c, padded);
    } else if (keyCount > 0) {
        memcpy(padded, key, keyCount);
    }
    for (i = 0; i < block; i++) pad[i] = padded[i] ^ 0x36;
    xmppload_hash_init(&c, bits);
    xmppload_hash_update(&c, pad, block);
    xmppload_hash_update(&c, data, dataCount);
    xmppload_hash_final(&c, inner);
    for (i = 0; i < block; i++) pad[i] = padded[i] ^ 0x5C;
    xmppload_hash_init(&c, bits);
    xmppload_hash_update(&c, pad, block);
    xmppload_hash_update(&c, inner, (size_t)size);
    xmppload_hash_final(&c, out);
    OPENSSL_cleanse(padded, sizeof padded);
    OPENSSL_cleanse(pad, sizeof pad);
    return size;
}
#endif

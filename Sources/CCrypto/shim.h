#ifndef XMPPLOAD_CCRYPTO_SHIM_H
#define XMPPLOAD_CCRYPTO_SHIM_H
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/sha.h>
#include <openssl/rand.h>
#endif

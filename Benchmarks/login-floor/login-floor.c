// login-floor — the least CPU any client can spend on xmppload's login profile on this machine.
//
// A deliberately minimal XMPP client in C doing exactly the exchange xmppload does for
// profiles/login.yaml over plain TCP, byte for byte on the wire (checked against `strace -e write`
// of xmppload, 2026-11-28): stream header, SCRAM-SHA-1, stream restart, bind (id 'bind1'), roster get
// (id 'q1') once bound, initial presence once the roster came, until the server echoes it, then
// unavailable presence and </stream:stream> in one write, until the server closes. TCP_NODELAY on, as
// NIO sets it. The crypto is xmppload's, call for call: the nonce is 18 bytes taken from a 4 KiB block
// of libcrypto's generator refilled when spent (Sources/XMPPCore/SASL/RandomPool.swift: one
// RAND_bytes per 227 logins, not one per login); ClientKey, StoredKey and ServerKey are derived once per
// (salt, iterations) and kept (SCRAMKeyCache caches the keys, not only SaltedPassword), so a login
// makes two HMACs, ClientSignature and ServerSignature, both with the CCrypto shim's
// xmppload_hmac (libcrypto's low-level SHA-1 on the stack, no EVP, no allocation); the server's
// signature is base64-decoded and compared in constant time, as SCRAMClient does.
//
// What it leaves out, being a floor: an XML parser (substring matching on the bytes of this login),
// SASLprep and the server-first grammar checks, metrics, timeouts, and more than one login at a time.
// The first session of an xmppload run also asks the server for its version, disco#info and three
// XEP-0202 clock samples (run facts); the floor does not, which is one session in a thousand.
// What it spends per login is the kernel's share (socket, connect, one write and one wake-up plus read
// per round trip, close) plus two HMACs: the floor under any client doing this work. scripts/bench-sessions
// prints it next to xmppload's own figure. Not a load tool: no error recovery beyond exiting with a
// message.
//
// Like xmppload it uses non-blocking sockets and epoll (a blocking variant measured the same). It
// expects Prosody's way of writing XML (single-quoted attributes), i.e. scripts/local-server.
//
// usage: login-floor HOST PORT DOMAIN PASSWORD FIRST COUNT RATE
//   logs in user<FIRST>..user<FIRST+COUNT-1>, starting one every 1/RATE s (late starts run at once);
//   prints: logins cpu_seconds user_seconds kernel_seconds wall_seconds (CPU of the login loop only)
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include "../../Sources/CCrypto/shim.h" // xmppload_hmac, and libcrypto's headers
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static int ep = -1;
static char in[65536];
static size_t in_len;

static void die(const char *what, const char *detail) {
  fprintf(stderr, "login-floor: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
  exit(1);
}

static void send_all(int fd, const char *s, size_t n) {
  while (n > 0) {
    ssize_t w = write(fd, s, n);
    if (w < 0 && errno == EAGAIN) continue; // a few hundred bytes on loopback: not expected
    if (w <= 0) die("write failed", strerror(errno));
    s += w; n -= (size_t)w;
  }
}

static void send_str(int fd, const char *s) { send_all(fd, s, strlen(s)); }

// Reads until `needle` appears after offset `from` in the bytes of this login (NULL: until EOF).
// Returns a pointer just past the needle.
static char *wait_for(int fd, const char *needle, size_t from) {
  for (;;) {
    if (needle) {
      in[in_len] = 0;
      char *hit = strstr(in + from, needle);
      if (hit) return hit + strlen(needle);
      if (strstr(in + from, "<failure") || strstr(in + from, "<stream:error"))
        die("the server refused the login", in + from);
    }
    struct epoll_event ev;
    if (epoll_wait(ep, &ev, 1, 30000) != 1) die("no answer within 30 s waiting for", needle ? needle : "the close");
    ssize_t r = read(fd, in + in_len, sizeof in - 1 - in_len);
    if (r < 0 && errno == EAGAIN) continue;
    if (r < 0) die("read failed", strerror(errno));
    if (r == 0) {
      if (!needle) return in + in_len;
      die("server closed the connection waiting for", needle);
    }
    in_len += (size_t)r;
    if (in_len >= sizeof in - 1) die("more than 64 KiB in one login", NULL);
  }
}

static void b64(const unsigned char *src, int n, char *out) { EVP_EncodeBlock((unsigned char *)out, src, n); }
static int unb64(const char *src, int n, unsigned char *out) {
  int len = EVP_DecodeBlock(out, (const unsigned char *)src, n);
  while (n > 0 && src[n - 1] == '=') { len--; n--; }
  return len;
}

// RandomPool: 18 bytes per nonce from a 4 KiB block of libcrypto's generator, each byte handed out once.
enum { pool_size = 4096 };
static unsigned char pool[pool_size];
static size_t pool_next = pool_size;

static void pooled_random(unsigned char *out, size_t n) {
  if (pool_size - pool_next < n) {
    if (RAND_bytes(pool, pool_size) != 1) die("RAND_bytes failed", NULL);
    pool_next = 0;
  }
  memcpy(out, pool + pool_next, n);
  pool_next += n;
}

// SCRAMKeyCache: the keys derived from (salt, iterations), as RFC 5802 allows and xmppload does.
static char cached_salt[256];
static int cached_iterations;
static unsigned char client_key[SHA_DIGEST_LENGTH], stored_key[SHA_DIGEST_LENGTH], server_key[SHA_DIGEST_LENGTH];

static void derive_keys(const char *password, const unsigned char *salt, int salt_len, int iterations) {
  unsigned char salted[SHA_DIGEST_LENGTH];
  unsigned int len;
  if (PKCS5_PBKDF2_HMAC(password, (int)strlen(password), salt, salt_len, iterations, EVP_sha1(), sizeof salted, salted) != 1)
    die("PBKDF2 failed", NULL);
  xmppload_hmac(1, salted, sizeof salted, (const unsigned char *)"Client Key", 10, client_key);
  if (EVP_Digest(client_key, sizeof client_key, stored_key, &len, EVP_sha1(), NULL) != 1) die("SHA-1 failed", NULL);
  xmppload_hmac(1, salted, sizeof salted, (const unsigned char *)"Server Key", 10, server_key);
}

static void login(const struct sockaddr_in *addr, const char *domain, const char *password, long user) {
  char header[512], buf[2048], first_bare[256], server_first[512], final_bare[512], auth_message[1536];
  unsigned char raw[512], nonce[18], signature[64], proof[SHA_DIGEST_LENGTH], server_signature[64];
  char nonce_b64[32], proof_b64[64];
  in_len = 0;

  int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
  if (fd < 0) die("socket failed", strerror(errno));
  int on = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
  if (connect(fd, (const struct sockaddr *)addr, sizeof *addr) != 0) {
    if (errno != EINPROGRESS) die("connect failed", strerror(errno));
  }
  struct epoll_event ev = {.events = EPOLLOUT, .data.fd = fd};
  epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
  if (epoll_wait(ep, &ev, 1, 30000) != 1) die("connect timed out", NULL);
  int err = 0; socklen_t l = sizeof err;
  getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &l);
  if (err) die("connect failed", strerror(err));
  ev.events = EPOLLIN;
  epoll_ctl(ep, EPOLL_CTL_MOD, fd, &ev);
  snprintf(header, sizeof header,
           "<?xml version='1.0'?><stream:stream xmlns='jabber:client' xmlns:stream='http://etherx.jabber.org/streams' "
           "version='1.0' to='%s'>", domain);
  send_str(fd, header);
  char *at = wait_for(fd, "</stream:features>", 0);

  pooled_random(nonce, sizeof nonce);
  b64(nonce, sizeof nonce, nonce_b64);
  snprintf(first_bare, sizeof first_bare, "n=user%ld,r=%s", user, nonce_b64);
  snprintf(buf, sizeof buf, "n,,%s", first_bare);
  char encoded[1024];
  b64((unsigned char *)buf, (int)strlen(buf), encoded);
  snprintf(buf, sizeof buf, "<auth xmlns='urn:ietf:params:xml:ns:xmpp-sasl' mechanism='SCRAM-SHA-1'>%s</auth>", encoded);
  send_str(fd, buf);
  size_t mark = (size_t)(at - in);
  char *challenge = wait_for(fd, "</challenge>", mark);
  char *open = memmem(in + mark, (size_t)(challenge - in) - mark, "<challenge", 10);
  if (!open) die("no <challenge>", NULL);
  open = strchr(open, '>') + 1;
  int n = unb64(open, (int)(challenge - strlen("</challenge>") - open), raw);
  if (n <= 0 || n >= (int)sizeof server_first) die("bad challenge", NULL);
  memcpy(server_first, raw, (size_t)n); server_first[n] = 0;
  char *r = strstr(server_first, "r="), *s = strstr(server_first, ",s="), *i = strstr(server_first, ",i=");
  if (!r || !s || !i) die("bad server-first-message", server_first);
  char salt_b64[256]; size_t salt_len = (size_t)(i - (s + 3));
  if (salt_len >= sizeof salt_b64) die("salt too long", NULL);
  memcpy(salt_b64, s + 3, salt_len); salt_b64[salt_len] = 0;
  int iterations = atoi(i + 3);
  if (iterations != cached_iterations || strcmp(salt_b64, cached_salt) != 0) {
    unsigned char salt[256];
    int sl = unb64(salt_b64, (int)salt_len, salt);
    derive_keys(password, salt, sl, iterations);
    strcpy(cached_salt, salt_b64); cached_iterations = iterations;
  }
  snprintf(final_bare, sizeof final_bare, "c=biws,r=%.*s", (int)(s - (r + 2)), r + 2);
  size_t auth_len = (size_t)snprintf(auth_message, sizeof auth_message, "%s,%s,%s", first_bare, server_first, final_bare);
  // SCRAMClient.clientFinalMessage(keys:): both signatures now, the proof from the first.
  xmppload_hmac(1, stored_key, sizeof stored_key, (unsigned char *)auth_message, auth_len, signature);
  xmppload_hmac(1, server_key, sizeof server_key, (unsigned char *)auth_message, auth_len, server_signature);
  for (int k = 0; k < SHA_DIGEST_LENGTH; k++) proof[k] = client_key[k] ^ signature[k];
  b64(proof, sizeof proof, proof_b64);
  snprintf(buf, sizeof buf, "%s,p=%s", final_bare, proof_b64);
  b64((unsigned char *)buf, (int)strlen(buf), encoded);
  snprintf(buf, sizeof buf, "<response xmlns='urn:ietf:params:xml:ns:xmpp-sasl'>%s</response>", encoded);
  send_str(fd, buf);
  mark = (size_t)(challenge - in);
  char *success = wait_for(fd, "</success>", mark);
  char *v = memmem(in + mark, (size_t)(success - in) - mark, "<success", 8);
  if (!v) die("no <success>", NULL);
  v = strchr(v, '>') + 1;
  n = unb64(v, (int)(success - strlen("</success>") - v), raw);
  // verifyServerFinal: v=base64(ServerSignature), decoded and compared in constant time.
  unsigned char got[SHA_DIGEST_LENGTH + 3];
  int got_len = n >= 3 && memcmp(raw, "v=", 2) == 0 ? unb64((char *)raw + 2, n - 2, got) : -1;
  unsigned char difference = got_len == SHA_DIGEST_LENGTH ? 0 : 1;
  for (int k = 0; k < SHA_DIGEST_LENGTH; k++) difference |= got[k] ^ server_signature[k];
  if (difference) die("server signature mismatch", NULL);

  send_str(fd, header);
  mark = (size_t)(success - in);
  at = wait_for(fd, "</stream:features>", mark);
  send_str(fd, "<iq type='set' id='bind1'><bind xmlns='urn:ietf:params:xml:ns:xmpp-bind'><resource>load</resource></bind></iq>");
  at = wait_for(fd, "</iq>", (size_t)(at - in));
  send_str(fd, "<iq type='get' id='q1'><query xmlns='jabber:iq:roster'/></iq>");
  char *roster = wait_for(fd, "id='q1'", (size_t)(at - in));
  at = wait_for(fd, "</iq>", (size_t)(roster - in));
  send_str(fd, "<presence/>");
  // The server's echo of our own presence: the first <presence after this point whose from is us.
  char own[128];
  snprintf(own, sizeof own, "from='user%ld@%s/load'", user, domain);
  for (size_t from = (size_t)(at - in);;) {
    char *p = wait_for(fd, "<presence", from);
    char *end = wait_for(fd, ">", (size_t)(p - in));
    char saved = *end; *end = 0;
    int mine = strstr(p, own) != NULL;
    *end = saved;
    from = (size_t)(end - in);
    if (mine) break;
  }
  send_str(fd, "<presence type='unavailable'/></stream:stream>");
  wait_for(fd, NULL, 0); // until the server closes
  close(fd);               // also removes it from the epoll set
}

static double now_s(clockid_t clock) {
  struct timespec t; clock_gettime(clock, &t); return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static double seconds_between(struct timeval from, struct timeval to) {
  return (double)(to.tv_sec - from.tv_sec) + (double)(to.tv_usec - from.tv_usec) / 1e6;
}

int main(int argc, char **argv) {
  if (argc != 8) die("usage: login-floor HOST PORT DOMAIN PASSWORD FIRST COUNT RATE", NULL);
  struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(argv[2]))};
  if (inet_pton(AF_INET, argv[1], &addr.sin_addr) != 1) die("HOST must be an IPv4 address", argv[1]);
  long first = atol(argv[5]), count = atol(argv[6]);
  double rate = atof(argv[7]);
  if (first < 1 || count < 1 || rate <= 0) die("FIRST and COUNT must be at least 1, RATE above 0", NULL);
  ep = epoll_create1(0);
  double start = now_s(CLOCK_MONOTONIC);
  struct rusage before, after;
  getrusage(RUSAGE_SELF, &before);
  for (long k = 0; k < count; k++) {
    double due = start + (double)k / rate, wait = due - now_s(CLOCK_MONOTONIC);
    if (wait > 0) {
      struct timespec t = {.tv_sec = (time_t)wait, .tv_nsec = (long)((wait - (double)(time_t)wait) * 1e9)};
      nanosleep(&t, NULL);
    }
    login(&addr, argv[3], argv[4], first + k);
  }
  getrusage(RUSAGE_SELF, &after);
  double user = seconds_between(before.ru_utime, after.ru_utime), kernel = seconds_between(before.ru_stime, after.ru_stime);
  printf("%ld %.4f %.4f %.4f %.3f\n", count, user + kernel, user, kernel, now_s(CLOCK_MONOTONIC) - start);
  return 0;
}

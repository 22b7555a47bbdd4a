// message-floor — the least CPU any client can spend per one-to-one chat message on this machine.
//
// A deliberately minimal XMPP client in C, the message counterpart of Benchmarks/login-floor: two
// connections over plain TCP log in with SASL PLAIN (no SCRAM: the login is not what is measured; as
// xmppload's message runs in scripts/bench-sessions), bind the resource 'load' and send initial presence
// until it is echoed; then COUNT chat messages go back and forth between them, one in flight: the first
// connection sends to the second, which on its arrival sends the next to the first, and so on (the
// exchange xmppload's "floors' exchange" run makes, `message` then `wait: {for: message}`, whose two
// sessions settle into exactly this ping-pong). Each message is the stanza xmppload writes, byte for
// byte but for its numbers: to the peer's bare JID, type chat, the 20-byte filler body
// `xmppload-filler-0123` and xmppload's stamp (run id, sender serial, per-sender sequence from 1, sent
// and intended time in nanoseconds of a monotonic clock since the loop began; `t` = `i`, as in a send
// on receipt). So every message is one write, one wake-up and one read, as in xmppload. No XML parser:
// the receiving connection looks for the closing `</message>`, and the stamp is not read back (xmppload
// parses it for latency and loss). What it spends per message (send + server round trip + receive) is
// the kernel's share under any real client; scripts/bench-sessions prints it next to xmppload's figure.
// Not a load tool: no error recovery beyond exiting with a message. Expects Prosody's way of writing
// XML (scripts/local-server).
//
// usage: message-floor HOST PORT DOMAIN PASSWORD FIRST SECOND COUNT
//   FIRST and SECOND are account numbers (user<N>), FIRST sends the first message; prints:
//   messages cpu_seconds user_seconds kernel_seconds wall_seconds (CPU of the message loop only)
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

// One connection: its socket and what it received and has not yet consumed.
struct conn {
  int fd;
  char in[65536];
  size_t len;
};

static int ep = -1;

static void die(const char *what, const char *detail) {
  fprintf(stderr, "message-floor: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
  exit(1);
}

static void send_str(struct conn *c, const char *s) {
  size_t n = strlen(s);
  while (n > 0) {
    ssize_t w = write(c->fd, s, n);
    if (w < 0 && errno == EAGAIN) continue; // a few hundred bytes on loopback: not expected
    if (w <= 0) die("write failed", strerror(errno));
    s += w; n -= (size_t)w;
  }
}

// Reads into c until `needle` is in its buffer; drops everything up to and including the needle.
static void wait_for(struct conn *c, const char *needle) {
  for (;;) {
    c->in[c->len] = 0;
    char *hit = strstr(c->in, needle);
    if (hit) {
      size_t used = (size_t)(hit - c->in) + strlen(needle);
      memmove(c->in, c->in + used, c->len - used);
      c->len -= used;
      return;
    }
    if (strstr(c->in, "<failure") || strstr(c->in, "<stream:error")) die("the server refused", c->in);
    struct epoll_event ev;
    if (epoll_wait(ep, &ev, 1, 30000) != 1) die("no answer within 30 s waiting for", needle);
    struct conn *ready = ev.data.ptr;
    ssize_t r = read(ready->fd, ready->in + ready->len, sizeof ready->in - 1 - ready->len);
    if (r < 0 && errno == EAGAIN) continue;
    if (r <= 0) die("read failed or the server closed waiting for", needle);
    ready->len += (size_t)r;
    if (ready != c) ready->len = 0; // the other connection's stanzas (a contact's presence): not waited for
    if (ready->len >= sizeof ready->in - 1) die("more than 64 KiB unconsumed", NULL);
  }
}

static void login(struct conn *c, const struct sockaddr_in *addr, const char *domain, const char *password,
                  long user) {
  char header[512], plain[512], encoded[1024], buf[2048];
  c->len = 0;
  c->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
  if (c->fd < 0) die("socket failed", strerror(errno));
  int on = 1;
  setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on); // as NIO (so xmppload) sets it
  if (connect(c->fd, (const struct sockaddr *)addr, sizeof *addr) != 0 && errno != EINPROGRESS)
    die("connect failed", strerror(errno));
  struct epoll_event ev = {.events = EPOLLOUT, .data.ptr = c};
  epoll_ctl(ep, EPOLL_CTL_ADD, c->fd, &ev);
  if (epoll_wait(ep, &ev, 1, 30000) != 1) die("connect timed out", NULL);
  int err = 0; socklen_t l = sizeof err;
  getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &l);
  if (err) die("connect failed", strerror(err));
  ev.events = EPOLLIN;
  epoll_ctl(ep, EPOLL_CTL_MOD, c->fd, &ev);
  snprintf(header, sizeof header,
           "<?xml version='1.0'?><stream:stream xmlns='jabber:client' xmlns:stream='http://etherx.jabber.org/streams' "
           "version='1.0' to='%s'>", domain);
  send_str(c, header);
  wait_for(c, "</stream:features>");
  int n = snprintf(plain, sizeof plain, "%cuser%ld%c%s", 0, user, 0, password);
  EVP_EncodeBlock((unsigned char *)encoded, (unsigned char *)plain, n);
  snprintf(buf, sizeof buf, "<auth xmlns='urn:ietf:params:xml:ns:xmpp-sasl' mechanism='PLAIN'>%s</auth>", encoded);
  send_str(c, buf);
  wait_for(c, "<success");
  send_str(c, header);
  wait_for(c, "</stream:features>");
  send_str(c, "<iq type='set' id='bind1'><bind xmlns='urn:ietf:params:xml:ns:xmpp-bind'><resource>load</resource></bind></iq>");
  wait_for(c, "</iq>");
  send_str(c, "<presence/>");
  // The server's echo of our own initial presence.
  char own[128];
  snprintf(own, sizeof own, "from='user%ld@%s/load'", user, domain);
  wait_for(c, own);
}

static double now_s(void) {
  struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static unsigned long long now_ns(void) {
  struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return (unsigned long long)t.tv_sec * 1000000000ull + (unsigned long long)t.tv_nsec;
}

static double seconds_between(struct timeval from, struct timeval to) {
  return (double)(to.tv_sec - from.tv_sec) + (double)(to.tv_usec - from.tv_usec) / 1e6;
}

int main(int argc, char **argv) {
  if (argc != 8) die("usage: message-floor HOST PORT DOMAIN PASSWORD FIRST SECOND COUNT", NULL);
  struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(argv[2]))};
  if (inet_pton(AF_INET, argv[1], &addr.sin_addr) != 1) die("HOST must be an IPv4 address", argv[1]);
  long sender = atol(argv[5]), receiver = atol(argv[6]), count = atol(argv[7]);
  if (sender < 1 || receiver < 1 || sender == receiver || count < 1)
    die("FIRST and SECOND must be different account numbers of at least 1, COUNT at least 1", NULL);
  const char *domain = argv[3];
  ep = epoll_create1(0);
  static struct conn a, b;
  login(&a, &addr, domain, argv[4], sender);
  login(&b, &addr, domain, argv[4], receiver);
  // A run id of xmppload's length (yyyymmdd-hhmmss-xxxxxxx).
  char run[32], message[512];
  time_t wall = time(NULL);
  strftime(run, sizeof run, "%Y%m%d-%H%M%S-floor00", gmtime(&wall));
  // Nanoseconds since a clock origin 2 s back: an xmppload session sends its first message after logging
  // in and thinking 2 s, so its stamps carry times of 10 digits; these do too.
  unsigned long long origin = now_ns() - 2000000000ull;
  double start = now_s();
  struct rusage before, after;
  getrusage(RUSAGE_SELF, &before);
  for (long k = 0; k < count; k++) {
    // Even k: the first connection (serial 0) to the second; odd k: back. Sequences count from 1 per sender.
    struct conn *from = k % 2 == 0 ? &a : &b, *to = k % 2 == 0 ? &b : &a;
    unsigned long long sent = now_ns() - origin;
    snprintf(message, sizeof message,
             "<message to='user%ld@%s' type='chat'><body>xmppload-filler-0123</body><stamp xmlns='urn:xmppload:stamp:0'"
             " r='%s' s='%ld' q='%ld' t='%llu' i='%llu'/></message>",
             k % 2 == 0 ? receiver : sender, domain, run, k % 2, k / 2 + 1, sent, sent);
    send_str(from, message);
    wait_for(to, "</message>");
  }
  getrusage(RUSAGE_SELF, &after);
  double user = seconds_between(before.ru_utime, after.ru_utime), kernel = seconds_between(before.ru_stime, after.ru_stime);
  printf("%ld %.4f %.4f %.4f %.3f\n", count, user + kernel, user, kernel, now_s() - start);
  send_str(&a, "</stream:stream>");
  send_str(&b, "</stream:stream>");
  close(a.fd);
  close(b.fd);
  return 0;
}

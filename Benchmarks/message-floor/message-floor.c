// message-floor — the least CPU any client can spend per one-to-one chat message on this machine.
//
// A deliberately minimal XMPP client in C, the message counterpart of Benchmarks/login-floor: two
// connections over plain TCP log in with SASL PLAIN (no SCRAM: the login is not what is measured),
// bind a resource and send initial presence; then the first sends COUNT chat messages to the second's
// full JID, one at a time, each sent only after the previous one arrived (as xmppload's chat steps are
// spaced, every message is its own write, wake-up and read on both sides). No XML parser: the receiver
// counts closing `</message>` tags. What it spends per message (send + server round trip + receive) is
// the kernel's share under any real client; scripts/bench-sessions prints it next to xmppload's figure.
// Not a load tool: no error recovery beyond exiting with a message. Expects Prosody's way of writing
// XML (scripts/local-server).
//
// usage: message-floor HOST PORT DOMAIN PASSWORD SENDER RECEIVER COUNT
//   SENDER and RECEIVER are account numbers (user<N>); prints:
//   messages cpu_seconds user_seconds kernel_seconds wall_seconds (CPU of the message loop only)
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
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
           "to='%s' version='1.0'>", domain);
  send_str(c, header);
  wait_for(c, "</stream:features>");
  int n = snprintf(plain, sizeof plain, "%cuser%ld%c%s", 0, user, 0, password);
  EVP_EncodeBlock((unsigned char *)encoded, (unsigned char *)plain, n);
  snprintf(buf, sizeof buf, "<auth xmlns='urn:ietf:params:xml:ns:xmpp-sasl' mechanism='PLAIN'>%s</auth>", encoded);
  send_str(c, buf);
  wait_for(c, "<success");
  send_str(c, header);
  wait_for(c, "</stream:features>");
  send_str(c, "<iq type='set' id='b1'><bind xmlns='urn:ietf:params:xml:ns:xmpp-bind'><resource>floor</resource></bind></iq>");
  wait_for(c, "</iq>");
  send_str(c, "<presence/>");
  // The server's echo of our own initial presence.
  char own[128];
  snprintf(own, sizeof own, "from='user%ld@%s/floor'", user, domain);
  wait_for(c, own);
}

static double now_s(void) {
  struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static double seconds_between(struct timeval from, struct timeval to) {
  return (double)(to.tv_sec - from.tv_sec) + (double)(to.tv_usec - from.tv_usec) / 1e6;
}

int main(int argc, char **argv) {
  if (argc != 8) die("usage: message-floor HOST PORT DOMAIN PASSWORD SENDER RECEIVER COUNT", NULL);
  struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(argv[2]))};
  if (inet_pton(AF_INET, argv[1], &addr.sin_addr) != 1) die("HOST must be an IPv4 address", argv[1]);
  long sender = atol(argv[5]), receiver = atol(argv[6]), count = atol(argv[7]);
  if (sender < 1 || receiver < 1 || sender == receiver || count < 1)
    die("SENDER and RECEIVER must be different account numbers of at least 1, COUNT at least 1", NULL);
  const char *domain = argv[3];
  ep = epoll_create1(0);
  static struct conn a, b;
  login(&a, &addr, domain, argv[4], sender);
  login(&b, &addr, domain, argv[4], receiver);
  char message[512];
  double start = now_s();
  struct rusage before, after;
  getrusage(RUSAGE_SELF, &before);
  for (long k = 0; k < count; k++) {
    snprintf(message, sizeof message,
             "<message to='user%ld@%s/floor' type='chat' id='m%ld'><body>message-floor %ld</body></message>",
             receiver, domain, k, k);
    send_str(&a, message);
    wait_for(&b, "</message>");
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

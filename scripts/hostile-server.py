#!/usr/bin/env python3
"""A deliberately hostile XMPP "server" on loopback, for testing that xmppload stays bounded.

    scripts/hostile-server.py CASE [--port P] [--host 127.0.0.1] [--every N]

Plays one misbehaviour per run, one thread per connection, stdlib only. Prints `port N` once
listening (use --port 0 for a free port) and one line per notable event (`auth-received …`), so a
test can read both from its output. Stops on SIGTERM/SIGINT. Loopback only: --host must be a
127.0.0.0/8 or ::1 address.

With --every N only every N-th connection (1st, N+1-th, …) is hostile; the others get a well-behaved
login (PLAIN, no TLS, bind, roster, presence echo, pings answered), so a test can check that the
other sessions are unaffected.

Cases (the typed error xmppload should end the hostile session with):
  ns-flood        header with 45,000 xmlns declarations, then tiny stanzas   xml-limit-attributes
  ns-many         header with 40 xmlns declarations (under the attribute cap) xml-limit-namespaces
  attrs-header    header with 100,000 attributes                            xml-limit-attributes
  attrs-stanza    features element with 100,000 attributes                  xml-limit-attributes
  deep            10,000 nested elements                                    xml-limit-depth
  big             a 50 MB stanza                                            xml-limit-element-size
  large           logs in, then a legal 300 KiB message (over the 256 KiB default; passes with
                  --max-element-size 1MiB)                                  xml-limit-element-size
  dtd             a DOCTYPE before the header                               xml-restricted
  entity-bomb     billion-laughs DTD                                        xml-restricted
  bad-utf8        invalid UTF-8 inside a stanza                             xml-malformed
  scram-iterations  SCRAM with i=10,000,000                                 sasl-iteration-count
  scram-nonce     SCRAM server nonce not extending ours                     sasl-nonce
  scram-signature SCRAM success with a wrong server signature               sasl-server-signature
  no-starttls     offers PLAIN but not STARTTLS (run with --tls starttls)   tls-not-offered
  unique-errors   logs in, then answers every iq with a new error condition and a long <text/> with
                  markup and control characters (errors and their examples stay bounded)
  reset           TCP reset after the header                                (a connection error)
  silence         accepts and never answers                                 (a timeout)
  no-read         logs in, then floods pings and never reads again          write-stalled
                  (the answers fill the socket; the client stops reading while it does not drain)
  normal          a well-behaved login

Modern login (SASL2 XEP-0388, Bind2 XEP-0386, FAST XEP-0484, channel binding XEP-0440/0474). The
sasl2-/fast-/bind2- cases speak plaintext (run the client with --tls none --login sasl2); the tls-
cases speak direct TLS with a self-signed certificate made at start (--tls direct --insecure) and
check SCRAM against --password (default: secret):
  sasl2-continue  answers every SASL2 <authenticate/> and <next/> with <continue/>  sasl2-continue
  fast-flood      PLAIN logins succeed with a bogus FAST token and 100 oversized ones (ignored);
                  every FAST <authenticate/> fails: the client falls back on the same stream
  bind2-silence   never answers the <authenticate/> that asks for Bind2          (timeout-login at bind)
  tls-cb-mismatch SCRAM-SHA-1-PLUS over tls-server-end-point; the server signs other binding data
                                                                            sasl-server-signature
  tls-downgrade   after TLS: channel-binding types advertised, -PLUS removed    sasl-downgrade
  tls-downgrade-hash  after TLS: -PLUS and the types removed, but the SCRAM server-first's XEP-0474
                  hash covers them                                          sasl-downgrade
"""
import argparse
import base64
import hashlib
import hmac
import itertools
import os
import re
import signal
import socket
import struct
import sys
import threading

DOMAIN = "load.test"
STREAM_NS = "http://etherx.jabber.org/streams"
SASL_NS = "urn:ietf:params:xml:ns:xmpp-sasl"


def header(extra=""):
    return ("<?xml version='1.0'?><stream:stream xmlns='jabber:client' "
            f"xmlns:stream='{STREAM_NS}' id='h{os.getpid()}' from='{DOMAIN}' version='1.0'{extra}>").encode()


FEATURES_PLAIN = (f"<stream:features><mechanisms xmlns='{SASL_NS}'><mechanism>PLAIN</mechanism>"
                  "</mechanisms></stream:features>").encode()
FEATURES_SCRAM = (f"<stream:features><mechanisms xmlns='{SASL_NS}'><mechanism>SCRAM-SHA-1</mechanism>"
                  "</mechanisms></stream:features>").encode()
FEATURES_BIND = (b"<stream:features><bind xmlns='urn:ietf:params:xml:ns:xmpp-bind'/></stream:features>")
SASL2_NS = "urn:xmpp:sasl:2"
FEATURES_SASL2 = (f"<stream:features><authentication xmlns='{SASL2_NS}'><mechanism>PLAIN</mechanism><inline>"
                  "<bind xmlns='urn:xmpp:bind:0'><inline><feature var='urn:xmpp:sm:3'/></inline></bind>"
                  "<fast xmlns='urn:xmpp:fast:0'><mechanism>HT-SHA-256-NONE</mechanism></fast>"
                  "</inline></authentication></stream:features>").encode()
PASSWORD = "secret"
TLS_CONTEXT = None

counter = itertools.count()
print_lock = threading.Lock()


def event(text):
    with print_lock:
        print(text, flush=True)


class Connection:
    """One client connection: a receive buffer and helpers to wait for what the client sends."""

    def __init__(self, sock):
        self.sock = sock
        self.buffer = b""

    def send(self, data):
        self.sock.sendall(data)

    def fill(self):
        chunk = self.sock.recv(65536)
        if not chunk:
            raise ConnectionError("client closed")
        self.buffer += chunk

    def wait_for(self, pattern):
        """Waits until `pattern` (a bytes regex) matches the buffer; consumes through the match."""
        regex = re.compile(pattern, re.S)
        while True:
            match = regex.search(self.buffer)
            if match:
                self.buffer = self.buffer[match.end():]
                return match
            self.fill()

    def stream_header(self):
        return self.wait_for(rb"<stream:stream[^>]*>")


def login_plain(conn):
    """Header, PLAIN, restart, bind: the well-behaved part of every logged-in case."""
    conn.stream_header()
    conn.send(header() + FEATURES_PLAIN)
    conn.wait_for(rb"<auth[^>]*>[^<]*</auth>")
    conn.send(f"<success xmlns='{SASL_NS}'/>".encode())
    conn.stream_header()
    conn.send(header() + FEATURES_BIND)
    match = conn.wait_for(rb"<iq[^>]*id=['\"]([^'\"]+)['\"][^>]*>.*?</iq>")
    conn.send(f"<iq type='result' id='{match.group(1).decode()}'><bind xmlns='urn:ietf:params:xml:ns:xmpp-bind'>"
              f"<jid>user@{DOMAIN}/load</jid></bind></iq>".encode())


STANZA = re.compile(rb"<(iq|presence|message)\b([^>]*?)(/>|>.*?</\1>)|</stream:stream>", re.S)


def serve_logged_in(conn, error_for_iq=None, until_presence=False):
    """Answers iqs (result, or `error_for_iq(n)`), echoes presence, closes on </stream:stream>;
    with `until_presence`, returns once the initial presence was echoed (whatever queries came first)."""
    number = 0
    while True:
        match = STANZA.search(conn.buffer)
        if not match:
            conn.fill()
            continue
        conn.buffer = conn.buffer[match.end():]
        if match.group(0) == b"</stream:stream>":
            conn.send(b"</stream:stream>")
            return
        name, attributes = match.group(1), match.group(2)
        found = re.search(rb"\bid=['\"]([^'\"]+)['\"]", attributes)
        stanza_id = found.group(1).decode() if found else ""
        if name == b"iq" and re.search(rb"\btype=['\"](get|set)['\"]", attributes):
            number += 1
            if error_for_iq:
                conn.send(f"<iq type='error' id='{stanza_id}'><error type='cancel'>{error_for_iq(number)}"
                          "</error></iq>".encode())
            elif b"jabber:iq:roster" in match.group(0):
                conn.send(f"<iq type='result' id='{stanza_id}'><query xmlns='jabber:iq:roster'/></iq>".encode())
            else:
                conn.send(f"<iq type='result' id='{stanza_id}'/>".encode())
        elif name == b"presence" and b"to=" not in attributes:
            conn.send(f"<presence from='user@{DOMAIN}/load' to='user@{DOMAIN}/load'/>".encode())
            if until_presence:
                return


def scram(conn, variant):
    conn.stream_header()
    conn.send(header() + FEATURES_SCRAM)
    match = conn.wait_for(rb"<auth[^>]*>([^<]*)</auth>")
    event("auth-received SCRAM")
    client_first = base64.b64decode(match.group(1)).decode()
    bare = client_first.split(",", 2)[2]
    client_nonce = dict(part.split("=", 1) for part in bare.split(","))["r"]
    salt = b"hostile-salt-16b"
    iterations = 10_000_000 if variant == "iterations" else 4096
    nonce = ("someoneelse" if variant == "nonce" else client_nonce) + "srv"
    server_first = f"r={nonce},s={base64.b64encode(salt).decode()},i={iterations}"
    conn.send(f"<challenge xmlns='{SASL_NS}'>{base64.b64encode(server_first.encode()).decode()}</challenge>".encode())
    conn.wait_for(rb"<response[^>]*>([^<]*)</response>")
    # A wrong signature: the server cannot prove it knows the password.
    conn.send(f"<success xmlns='{SASL_NS}'>{base64.b64encode(b'v=' + base64.b64encode(bytes(20))).decode()}</success>".encode())
    conn.wait_for(rb"</stream:stream>")


def mechanisms(names):
    return f"<mechanisms xmlns='{SASL_NS}'>" + "".join(f"<mechanism>{n}</mechanism>" for n in names) + "</mechanisms>"


def channel_binding_types(types):
    return "<sasl-channel-binding xmlns='urn:xmpp:sasl-cb:0'>" + "".join(
        f"<channel-binding type='{t}'/>" for t in types) + "</sasl-channel-binding>"


def scram_sha1_server(conn, offered, types, server_cbind=None, ssdp=None):
    """A SCRAM-SHA-1(-PLUS) exchange against PASSWORD: server-first (with XEP-0474's h= over `ssdp`,
    when given), then a server signature over the AuthMessage — with `server_cbind` in place of the
    client's c= when given (a man in the middle's view of the channel)."""
    conn.stream_header()
    conn.send(header() + f"<stream:features>{mechanisms(offered)}{channel_binding_types(types) if types else ''}"
              "</stream:features>".encode())
    match = conn.wait_for(rb"<auth[^>]*>([^<]*)</auth>|</stream:stream>")
    if match.group(0) == b"</stream:stream>":
        event("closed-before-auth")
        conn.send(b"</stream:stream>")
        return
    event("auth-received SCRAM")
    client_first = base64.b64decode(match.group(1)).decode()
    bare = client_first.split(",", 2)[2]
    nonce = dict(part.split("=", 1) for part in bare.split(","))["r"] + "srv"
    salt = b"hostile-salt-16b"
    server_first = f"r={nonce},s={base64.b64encode(salt).decode()},i=4096"
    if ssdp:
        server_first += ",h=" + base64.b64encode(hashlib.sha1(ssdp.encode()).digest()).decode()
    conn.send(f"<challenge xmlns='{SASL_NS}'>{base64.b64encode(server_first.encode()).decode()}</challenge>".encode())
    match = conn.wait_for(rb"<response[^>]*>([^<]*)</response>|</stream:stream>")
    if match.group(0) == b"</stream:stream>":
        event("closed-after-server-first")
        conn.send(b"</stream:stream>")
        return
    final = base64.b64decode(match.group(1)).decode()
    without_proof = final[:final.index(",p=")]
    if server_cbind is not None:
        without_proof = "c=" + base64.b64encode(server_cbind).decode() + without_proof[without_proof.index(",r="):]
    salted = hashlib.pbkdf2_hmac("sha1", PASSWORD.encode(), salt, 4096)
    server_key = hmac.new(salted, b"Server Key", "sha1").digest()
    auth_message = f"{bare},{server_first},{without_proof}".encode()
    signature = hmac.new(server_key, auth_message, "sha1").digest()
    conn.send(f"<success xmlns='{SASL_NS}'>{base64.b64encode(b'v=' + base64.b64encode(signature)).decode()}</success>".encode())
    conn.wait_for(rb"</stream:stream>")


def sasl2_success(extra=""):
    return (f"<success xmlns='{SASL2_NS}'>{extra}<bound xmlns='urn:xmpp:bind:0'/>"
            f"<authorization-identifier>user@{DOMAIN}/hostile</authorization-identifier></success>").encode()


def sasl2(conn, case):
    conn.stream_header()
    conn.send(header() + FEATURES_SASL2)
    while True:
        match = conn.wait_for(rb"<authenticate[^>]*mechanism=['\"]([^'\"]+)['\"][^>]*>.*?</authenticate>|<next[^>]*>|</stream:stream>")
        if match.group(0) == b"</stream:stream>":
            conn.send(b"</stream:stream>")
            return
        mechanism = (match.group(1) or b"next").decode()
        event(f"sasl2-received {mechanism}")
        if case == "sasl2-continue":
            conn.send(f"<continue xmlns='{SASL2_NS}'><tasks><task>HOSTILE-TASK</task></tasks>"
                      "<text>one more task</text></continue>".encode())
        elif case == "bind2-silence":
            continue
        elif mechanism.startswith("HT-"):
            conn.send(f"<failure xmlns='{SASL2_NS}'><not-authorized xmlns='{SASL_NS}'/><text>token unknown</text></failure>".encode())
        else:
            tokens = f"<token xmlns='urn:xmpp:fast:0' token='bogus-{next(counter)}' expiry='2030-01-01T00:00:00Z'/>"
            tokens += "".join(f"<token xmlns='urn:xmpp:fast:0' token='{'x' * 2000}' expiry='2030-01-01T00:00:00Z'/>"
                              for _ in range(100))
            conn.send(sasl2_success(tokens) + b"<stream:features><sm xmlns='urn:xmpp:sm:3'/></stream:features>")
            serve_logged_in(conn)
            return


def attributes(count):
    return "".join(f" a{n}='v'" for n in range(count))


def play(case, conn):
    if case == "normal":
        login_plain(conn)
        serve_logged_in(conn)
    elif case == "ns-flood":
        conn.stream_header()
        declarations = "".join(f" xmlns:p{n}='urn:x:{n}'" for n in range(45_000))
        conn.send(header(declarations) + FEATURES_PLAIN)
        while True:
            conn.send(b"<a/>")
            conn.fill()
    elif case == "ns-many":
        conn.stream_header()
        conn.send(header("".join(f" xmlns:p{n}='urn:x:{n}'" for n in range(40))) + FEATURES_PLAIN)
        conn.wait_for(rb"</stream:stream>")
    elif case == "attrs-header":
        conn.stream_header()
        conn.send(header(attributes(100_000)))
        conn.wait_for(rb"</stream:stream>")
    elif case == "attrs-stanza":
        conn.stream_header()
        conn.send(header() + f"<stream:features{attributes(100_000)}/>".encode())
        conn.wait_for(rb"</stream:stream>")
    elif case == "deep":
        conn.stream_header()
        conn.send(header() + b"<stream:features>" + b"<a>" * 10_000 + b"</a>" * 10_000 + b"</stream:features>")
        conn.wait_for(rb"</stream:stream>")
    elif case == "big":
        conn.stream_header()
        conn.send(header() + b"<message><body>")
        chunk = b"x" * 65536
        for _ in range(50 * 16):   # 50 MiB, until the client gives up
            conn.send(chunk)
    elif case == "dtd":
        conn.stream_header()
        conn.send(b"<?xml version='1.0'?><!DOCTYPE stream [<!ENTITY x 'y'>]>" + header()[21:])
        conn.wait_for(rb"</stream:stream>")
    elif case == "entity-bomb":
        conn.stream_header()
        lol = "<!ENTITY lol 'lol'>" + "".join(
            f"<!ENTITY lol{n} '{('&lol' + (str(n - 1) if n > 1 else '') + ';') * 10}'>" for n in range(1, 10))
        conn.send(header() + f"<!DOCTYPE message [{lol}]><message><body>&lol9;</body></message>".encode())
        conn.wait_for(rb"</stream:stream>")
    elif case == "bad-utf8":
        conn.stream_header()
        conn.send(header() + b"<stream:features><x>\xff\xfe\xc3\x28</x></stream:features>")
        conn.wait_for(rb"</stream:stream>")
    elif case.startswith("scram-"):
        scram(conn, case[len("scram-"):])
    elif case in ("sasl2-continue", "fast-flood", "bind2-silence"):
        sasl2(conn, case)
    elif case == "tls-cb-mismatch":
        scram_sha1_server(conn, ["SCRAM-SHA-1-PLUS", "SCRAM-SHA-1"], ["tls-server-end-point"],
                          server_cbind=b"p=tls-server-end-point,," + bytes(32))
    elif case == "tls-downgrade":
        scram_sha1_server(conn, ["SCRAM-SHA-1", "PLAIN"], ["tls-server-end-point"])
    elif case == "tls-downgrade-hash":
        scram_sha1_server(conn, ["SCRAM-SHA-1", "PLAIN"], None,
                          ssdp="PLAIN\x1eSCRAM-SHA-1\x1eSCRAM-SHA-1-PLUS\x1ftls-server-end-point")
    elif case == "no-starttls":
        conn.stream_header()
        conn.send(header() + FEATURES_PLAIN)
        match = conn.wait_for(rb"<auth[^>]*>[^<]*</auth>|</stream:stream>")
        if match.group(0).startswith(b"<auth"):
            event("auth-received PLAIN in cleartext")
            conn.send(f"<success xmlns='{SASL_NS}'/>".encode())
    elif case == "unique-errors":
        login_plain(conn)
        serial = next(counter) * 1_000_000
        serve_logged_in(conn, error_for_iq=lambda n: f"<made-up-{serial + n} xmlns='urn:ietf:params:xml:ns:xmpp-stanzas'/>"
                        f"<text xmlns='urn:ietf:params:xml:ns:xmpp-stanzas'>condition {serial + n}&#9;&lt;script&gt;"
                        f"{'x' * 1000}</text>")
    elif case == "large":
        login_plain(conn)
        conn.send(f"<message from='{DOMAIN}' to='user@{DOMAIN}/load'><body>".encode()
                  + b"x" * (300 * 1024) + b"</body></message>")
        serve_logged_in(conn)
    elif case == "reset":
        conn.stream_header()
        conn.send(header())
        conn.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    elif case == "silence":
        while True:
            conn.fill()
    elif case == "no-read":
        login_plain(conn)
        serve_logged_in(conn, until_presence=True)   # roster get (and the probe's queries), initial presence
        event("stops-reading")
        ping = b"<iq type='get' id='p' from='load.test'><ping xmlns='urn:xmpp:ping'/></iq>" * 64
        while True:   # never reads again: the client's replies pile up on its side
            conn.send(ping)
    else:
        raise SystemExit(f"unknown case {case}")


def handle(case, every, sock, number):
    hostile = every <= 1 or number % every == 0
    try:
        if case.startswith("tls-"):
            sock = TLS_CONTEXT.wrap_socket(sock, server_side=True)
        conn = Connection(sock)
        play(case if hostile else "normal", conn)
    except (ConnectionError, OSError):
        pass
    finally:
        try:
            sock.close()
        except OSError:
            pass


def make_tls_context():
    """A TLS server context with a fresh self-signed ECDSA (SHA-256) certificate for DOMAIN."""
    import ssl
    import subprocess
    import tempfile
    directory = tempfile.mkdtemp(prefix="hostile-tls-")
    key, cert = os.path.join(directory, "key.pem"), os.path.join(directory, "cert.pem")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-sha256", "-nodes",
                    "-days", "2", "-subj", f"/CN={DOMAIN}", "-keyout", key, "-out", cert],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    for path in (key, cert):
        os.remove(path)
    os.rmdir(directory)
    return context


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("case")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--every", type=int, default=1)
    parser.add_argument("--password", default="secret")
    options = parser.parse_args()
    global PASSWORD, TLS_CONTEXT
    PASSWORD = options.password
    if options.case.startswith("tls-"):
        TLS_CONTEXT = make_tls_context()
    if not (options.host.startswith("127.") or options.host == "::1"):
        raise SystemExit("loopback only: --host must be 127.0.0.0/8 or ::1")
    family = socket.AF_INET6 if ":" in options.host else socket.AF_INET
    listener = socket.socket(family, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind((options.host, options.port))
    listener.listen(1024)
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    event(f"port {listener.getsockname()[1]}")
    for number in itertools.count():
        sock, _ = listener.accept()
        threading.Thread(target=handle, args=(options.case, options.every, sock, number), daemon=True).start()


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        pass

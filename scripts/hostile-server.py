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
    conn = Connection(sock)
    hostile = every <= 1 or number % every == 0
    try:
        play(case if hostile else "normal", conn)
    except (ConnectionError, OSError):
        pass
    finally:
        try:
            sock.close()
        except OSError:
            pass


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("case")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--every", type=int, default=1)
    options = parser.parse_args()
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

#!/usr/bin/env python3
"""A loopback TCP proxy that makes a server measurably slower without touching it, for measuring what
`xmppload compare` and `ab` can detect (scripts/compare-false-positives --power).

Usage: delay-proxy.py UPSTREAM_PORT DELAY_MS [LISTEN_PORT]

Listens on 127.0.0.1:LISTEN_PORT (default: a free port; the port is printed on the first line of
stdout once it listens) and forwards every connection to 127.0.0.1:UPSTREAM_PORT. Every chunk the
server sends is passed on to the client DELAY_MS milliseconds (a float) after it arrived, in order;
client-to-server bytes pass at once. Unlike the integration tests' DelayProxy, chunks that arrive
during a hold are not bunched: each waits DELAY_MS from its own arrival, so every server-to-client
round trip of a login (stream features, TLS flights, SASL, bind) costs DELAY_MS more.

Blocking sockets and threads (three per connection), with TCP_NODELAY both ways, so holds are timed
by nanosleep (tens of microseconds late on an idle machine) rather than by an event loop's
millisecond timer: an asyncio version held a 0.26 ms delay for ~1 ms. Runs until SIGTERM or SIGINT."""
import collections
import signal
import socket
import sys
import threading
import time


def nodelay(sock):
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


def close(sock):
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    sock.close()


def pump_now(source, target):
    try:
        while data := source.recv(65536):
            target.sendall(data)
    except OSError:
        pass
    try:
        target.shutdown(socket.SHUT_WR)
    except OSError:
        pass


def pump_delayed(source, target, delay):
    queue, ready = collections.deque(), threading.Condition()

    def deliver():
        try:
            while True:
                with ready:
                    while not queue:
                        ready.wait()
                    due, data = queue.popleft()
                wait = due - time.monotonic()
                if wait > 0:
                    time.sleep(wait)
                if data is None:
                    break
                target.sendall(data)
        except OSError:
            pass
        close(target)
        close(source)

    deliverer = threading.Thread(target=deliver, daemon=True)
    deliverer.start()
    try:
        while data := source.recv(65536):
            with ready:
                queue.append((time.monotonic() + delay, data))
                ready.notify()
    except OSError:
        pass
    with ready:
        queue.append((time.monotonic() + delay, None))
        ready.notify()


def handle(client, upstream_port, delay):
    try:
        server = socket.create_connection(("127.0.0.1", upstream_port))
    except OSError:
        close(client)
        return
    nodelay(client)
    nodelay(server)
    threading.Thread(target=pump_now, args=(client, server), daemon=True).start()
    pump_delayed(server, client, delay)


def main():
    upstream_port, delay = int(sys.argv[1]), float(sys.argv[2]) / 1000.0
    listen_port = int(sys.argv[3]) if len(sys.argv) > 3 else 0
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", listen_port))
    listener.listen(1024)
    print(listener.getsockname()[1], flush=True)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    try:
        while True:
            client, _ = listener.accept()
            threading.Thread(target=handle, args=(client, upstream_port, delay), daemon=True).start()
    except KeyboardInterrupt:
        pass


main()

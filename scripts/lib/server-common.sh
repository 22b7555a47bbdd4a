# scripts/lib/server-common.sh — shell shared by the scripts that run private servers on loopback
# (scripts/local-server, jabberd2-server, ejabberd-cluster, servers). Sourced, not run; needs python3.

# free_ports N [AVOID] [ADDRESS...]: N distinct TCP ports, each free on every ADDRESS (default
# 127.0.0.1) and none equal to AVOID, on one line. One python3 start (each costs ~0.3 s on a busy
# machine); all N are held at once, so they differ.
free_ports() { python3 -c '
import socket, sys
n, avoid, addresses = int(sys.argv[1]), sys.argv[2], sys.argv[3:] or ["127.0.0.1"]
ports, held = [], []
for _ in range(1000):
    if len(ports) == n:
        break
    s = socket.socket(); s.bind((addresses[0], 0)); port = s.getsockname()[1]
    others = []
    try:
        for address in addresses[1:]:
            t = socket.socket(); others.append(t); t.bind((address, port))
    except OSError:
        s.close(); [t.close() for t in others]; continue
    held += [s] + others
    if str(port) != avoid and port not in ports:
        ports.append(port)
if len(ports) < n:
    sys.exit("no free ports on " + " ".join(addresses))
print(" ".join(map(str, ports)))' "$1" "${2:-}" "${@:3}"; }

# port_open PORT [ADDRESS]: true when something accepts connections on ADDRESS:PORT (default 127.0.0.1).
port_open() { python3 -c "import socket,sys; s=socket.socket(); s.settimeout(0.5); sys.exit(0 if s.connect_ex(('${2:-127.0.0.1}',$1))==0 else 1)"; }

# wait_ports PID SECONDS [ADDRESS:]PORT...: waits (one python3 process, polling every 0.1 s, at most
# SECONDS) until every port accepts connections (address default 127.0.0.1) while process PID runs.
# Exit 0: all open; 1: timeout (prints the ports still closed); 2: the process exited.
wait_ports() { python3 -c '
import os, socket, sys, time
pid, deadline = int(sys.argv[1]), time.monotonic() + float(sys.argv[2])
ports = [(p.rpartition(":")[0] or "127.0.0.1", int(p.rpartition(":")[2])) for p in sys.argv[3:]]
while ports and time.monotonic() < deadline:
    try:
        os.kill(pid, 0)
    except OSError:
        sys.exit(2)
    closed = []
    for address in ports:
        with socket.socket() as s:
            s.settimeout(0.5)
            if s.connect_ex(address) != 0:
                closed.append(address)
    ports = closed
    if ports:
        time.sleep(0.1)
if ports:
    print(" ".join(f"{a}:{p}" for a, p in ports)); sys.exit(1)' "$@"; }

# pid_alive PID: true while process PID runs. A zombie (exited, not yet reaped: where PID 1 reaps
# slowly, a server killed outside its parent stays one for a while) counts as gone.
pid_alive() {
  [ -n "$1" ] && kill -0 "$1" 2>/dev/null || return 1
  ! grep -q '^State:[[:space:]]*Z' "/proc/$1/status" 2>/dev/null
}

# stop_pids PID...: TERM to every PID still running, then waits up to 10 s for all of them and KILLs
# what is left. Prints the PIDs it signalled (none: nothing was running).
stop_pids() {
  local pid signalled=()
  for pid in "$@"; do
    pid_alive "$pid" && kill -TERM "$pid" 2>/dev/null && signalled+=("$pid")
  done
  for _ in $(seq 1 50); do
    local left=0
    for pid in ${signalled[@]+"${signalled[@]}"}; do pid_alive "$pid" && left=1; done
    [ "$left" = 0 ] && break
    sleep 0.2
  done
  for pid in ${signalled[@]+"${signalled[@]}"}; do
    pid_alive "$pid" && kill -KILL "$pid" 2>/dev/null || true
  done
  echo ${signalled[@]+"${signalled[@]}"}
}

# make_cert DIR DOMAIN [pem]: a self-signed certificate for DOMAIN, conference.DOMAIN and IP 127.0.0.1
# as DIR/DOMAIN.crt and DIR/DOMAIN.key unless DIR/DOMAIN.crt is already there; with `pem`, both also
# in DIR/DOMAIN.pem (certificate + key, as jabberd2 and ejabberd read them).
make_cert() {
  local dir=$1 domain=$2 pem=${3:-}
  mkdir -p "$dir"
  if [ ! -f "$dir/$domain.crt" ]; then
    openssl req -x509 -newkey rsa:2048 -nodes -days 365 -subj "/CN=$domain" \
      -addext "subjectAltName=DNS:$domain,DNS:conference.$domain,IP:127.0.0.1" \
      -keyout "$dir/$domain.key" -out "$dir/$domain.crt" 2>/dev/null
  fi
  chmod 600 "$dir/$domain.key"
  if [ -n "$pem" ] && [ ! -f "$dir/$domain.pem" ]; then
    cat "$dir/$domain.crt" "$dir/$domain.key" > "$dir/$domain.pem"
    chmod 600 "$dir/$domain.pem"
  fi
}

# usage_of SCRIPT: prints the script's header comment (from line 2 to the first line that is not a
# comment) without the leading '# ', and exits 2.
usage_of() { sed -n '2,/^[^#]/{/^#/p}' "$1" | sed 's/^# \{0,1\}//'; exit 2; }

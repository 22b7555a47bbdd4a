#!/usr/bin/env bash
# Paired A/B of CPU per chat message (issue 42): scripts/bench-sessions' message_run (two sessions, PLAIN
# login, plain TCP) for BIN_A and BIN_B interleaved (odd rounds A B, even rounds B A), paced (MESSAGES/2
# per session 2 ms apart vs MESSAGES/20 20 ms apart) and reply (each sent on receipt of the last); per
# message = (CPU big - CPU small) / (received big - received small). Against the Prosody of SERVER_ENV
# (pinned to CPU 0), the generator on CPU 1. Prints rows "round side mode us_per_message load1".
set -euo pipefail
. "${SERVER_ENV:?}"
rounds=${ROUNDS:-5}; messages=${MESSAGES:-5000}; out=${OUT:?}
mkdir -p "$out"
quiet() { local b a; for _ in $(seq 60); do b=$(awk '{print $14 + $15}' "/proc/$XMPPLOAD_PID/stat"); sleep 1
  a=$(awk '{print $14 + $15}' "/proc/$XMPPLOAD_PID/stat"); [ $(( a - b )) -le $(( $(getconf CLK_TCK) / 20 )) ] && return 0; done; }
run() { # $1 binary $2 per-session $3 interval|reply $4 label -> "cpu received"
  local dir="$out/$4" send ramp=0s
  if [ "$3" = reply ]; then ramp=1s
    send="  - repeat: {count: $2, steps: [{message: {to: next, body_size: 20}}, {wait: {for: message, timeout: 2s}}]}"
  else send="  - message: {to: random, body_size: 20, count: $2, interval: $3}"; fi
  printf 'name: message-cost\ndescription: msg-ab\nlogin:\n  resource: load\nsteps:\n  - login\n  - presence: available\n  - think: 2s\n%s\n  - think: 2s\n  - logout\n' "$send" >"$dir.yaml"
  quiet
  /usr/bin/time -f "%U %S" -o "$dir.time" taskset -c 1 "$1" run "$dir.yaml" --server "127.0.0.1:$XMPPLOAD_PORT" \
    --domain "$XMPPLOAD_DOMAIN" --password "$XMPPLOAD_PASSWORD" --tls none --sasl PLAIN --accounts 1-2 --sessions 2 --ramp "$ramp" \
    --out "$dir" >"$dir.log" 2>&1 || true
  python3 -c "import json,sys; s=json.load(open('$dir/summary.json')); u,k=open('$dir.time').read().split()[-2:]; print(float(u)+float(k), s['messages']['received'])"
}
for round in $(seq "$rounds"); do
  order="a b"; [ $(( round % 2 )) = 0 ] && order="b a"
  for side in $order; do
    bin=$BIN_A; [ $side = b ] && bin=$BIN_B
    for mode in paced reply; do
      if [ $mode = paced ]; then ib=2ms; is=20ms; else ib=reply; is=reply; fi
      read -r cb gb < <(run "$bin" $(( messages / 2 )) $ib "$round-$side-$mode-big")
      read -r cs gs < <(run "$bin" $(( messages / 20 )) $is "$round-$side-$mode-small")
      echo "$round $side $mode $(python3 -c "print(f'{($cb - $cs) / ($gb - $gs) * 1e6:.1f}')") $(cut -d' ' -f1 /proc/loadavg) $cb $gb $cs $gs" | tee -a "$out/rows"
    done
  done
done
python3 - "$out/rows" <<'PY'
import statistics, sys, random
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
for mode in ("paced", "reply"):
    d = {}
    for r in rows:
        if r[2] == mode: d.setdefault(r[0], {})[r[1]] = float(r[3])
    pairs = [(v["a"], v["b"]) for v in d.values() if "a" in v and "b" in v]
    diffs = [b - a for a, b in pairs]
    random.seed(1)
    boots = sorted(statistics.mean(random.choices(diffs, k=len(diffs))) for _ in range(10000))
    print(f"{mode}: A median {statistics.median(a for a, _ in pairs):.1f} us [{min(a for a, _ in pairs):.1f}-{max(a for a, _ in pairs):.1f}], "
          f"B median {statistics.median(b for _, b in pairs):.1f} us [{min(b for _, b in pairs):.1f}-{max(b for _, b in pairs):.1f}]; "
          f"B-A mean {statistics.mean(diffs):+.1f} us, 95% bootstrap [{boots[250]:+.1f}, {boots[9750]:+.1f}], n={len(pairs)}; "
          f"B/A of medians {statistics.median(b for _, b in pairs) / statistics.median(a for a, _ in pairs):.3f}")
PY

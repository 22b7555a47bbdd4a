#!/usr/bin/env bash
# The `xmppload ab` comparisons behind docs/SERVER-BUILDS.md: Prosody 0.12.3 vs 13.0.1 and ejabberd
# 23.01 vs 24.12, each pair for the shipped login (SCRAM-SHA-1 and PLAIN, plaintext and STARTTLS),
# chat, MUC and idle profiles, 5 interleaved rounds each. Needs the builds up with 200 accounts:
#   for b in prosody@0.12 prosody@13 ejabberd@23.01 ejabberd@24.12; do scripts/servers up $b --accounts 200 --install; done
# Writes OUT/<pair>-<profile>/ (the rounds) and OUT/<pair>-<profile>.txt (ab's output, exit code on
# its last line); ONLY=<pair>-<profile> runs one. OUT defaults to /tmp/server-builds-ab.
# The generator runs with a CPU share of nice $GEN_NICE (default -10) against the machine's other jobs
# and the servers: run.sh starts its own session, whose scheduler autogroup (one per session on
# this kernel) gets that nice, so ab and its runs share it; the servers, each in its own session,
# keep nice 0. Without it, on the shared 2-core machine (load 8-12 from other jobs), the generator's
# event loop was starved for > 50 ms in one or two intervals of ten runs, and `ab` refuses a
# comparison with any saturated interval. (`nice -n` alone does not reach the runs: Foundation's
# Thread resets the nice of the thread that spawns them.)
set -uo pipefail
if [ -z "${SERVER_BUILDS_SESSION:-}" ]; then SERVER_BUILDS_SESSION=1 exec setsid "$0" "$@"; fi
[ -w /proc/self/autogroup ] && echo "${GEN_NICE:--10}" > /proc/self/autogroup
cd "$(dirname "$0")/../../.."
out=${OUT:-/tmp/server-builds-ab}
mkdir -p "$out"
common=(--rounds 5 --accounts 1-200 --interval 1s --seed 7 --overwrite)
ab() {  # name baseline candidate profile flags...
  local name=$1 a=$2 b=$3 profile=$4; shift 4
  [ -n "${ONLY:-}" ] && [ "$ONLY" != "$name" ] && return 0
  echo "== $name: $a vs $b, $profile $* ($(date -u +%H:%M:%S), load $(cut -d' ' -f1 /proc/loadavg))"
  scripts/servers ab "$a" "$b" "$profile" "${common[@]}" --out "$out/$name" "$@" > "$out/$name.txt" 2>&1
  local status=$?
  echo "exit $status" >> "$out/$name.txt"
  echo "   exit $status"
}
for pair in "prosody prosody@0.12 prosody@13" "ejabberd ejabberd@23.01 ejabberd@24.12"; do
  read -r server a b <<<"$pair"
  ab "$server-login-scram-plain" "$a" "$b" profiles/login.yaml --tls none --sasl SCRAM-SHA-1 --sessions 150 --ramp 10s
  ab "$server-login-plain-plain" "$a" "$b" profiles/login.yaml --tls none --sasl PLAIN --sessions 150 --ramp 10s
  ab "$server-login-scram-starttls" "$a" "$b" profiles/login.yaml --tls starttls --sasl SCRAM-SHA-1 --sessions 150 --ramp 10s
  ab "$server-login-plain-starttls" "$a" "$b" profiles/login.yaml --tls starttls --sasl PLAIN --sessions 150 --ramp 10s
  ab "$server-chat" "$a" "$b" profiles/chat.yaml --sessions 100 --ramp 5s --duration 20s --message-grace 2s
  ab "$server-muc" "$a" "$b" profiles/muc.yaml --sessions 100 --ramp 5s --duration 40s --message-grace 2s
  ab "$server-idle" "$a" "$b" profiles/idle.yaml --sessions 200 --ramp 10s --duration 15s
done

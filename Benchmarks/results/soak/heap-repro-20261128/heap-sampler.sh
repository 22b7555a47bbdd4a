#!/usr/bin/env bash
# Every restart (2 min) at +100 s: RSS and glibc malloc_stats (via gdb) of the soak's xmppload.
out=/work/soak-out/heap-repro
until pid=$(pgrep -f -- "run .*--out $out" | head -1) && [ -n "$pid" ]; do sleep 1; done
start=$(date +%s)
for t in 100 220 340 460 580 700 820 940 1060; do
  while [ $(( $(date +%s) - start )) -lt $t ]; do sleep 1; done
  kill -0 "$pid" 2>/dev/null || break
  rss=$(awk '/VmRSS/{print $2}' /proc/$pid/status)
  echo "t=$t rss_kib=$rss" >> /work/soak-out/heap-samples.txt
  gdb -p "$pid" -batch -ex 'call (void)malloc_stats()' >/dev/null 2>&1
done

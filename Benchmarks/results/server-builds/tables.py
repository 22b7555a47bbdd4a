#!/usr/bin/env python3
"""Markdown tables for docs/SERVER-BUILDS.md from the `ab` comparisons run.sh made.

Usage: tables.py DIR   (DIR holds NAME/ab.json and NAME.txt per comparison, as run.sh writes them,
                        or NAME/ab.json and NAME/ab.txt, as they are kept here)

Per comparison: its exit code and outcome, then one row per key metric (login and its phases,
message, MUC, roster, presence, throughput, errors, loss, fan-out) plus every other row judged
regressed or improved: baseline, candidate, change with its 95 % interval, tolerance, verdict."""
import json
import os
import sys

KEY = [
    "login.p50", "login.p90", "login.p99", "login.connect.p50", "login.tls.p50", "login.features.p50",
    "login.sasl.p50", "login.bind.p50", "roster.get.p50", "presence.p50", "message.p50", "message.p99",
    "muc.join.p50", "muc.message.p50", "muc.message.p99", "throughput.logins", "throughput.messages",
    "error_rate", "loss", "muc.fanout",
]


def key(row):
    return row["metric"]["key"] if isinstance(row["metric"], dict) else row["metric"]


def value(row, side):
    v = row.get(side)
    if v is None:
        return "–"
    metric = key(row)
    if metric.startswith("throughput"):
        return f"{v:.1f} /s"
    if metric in ("error_rate", "loss", "muc.fanout"):
        return f"{v:.2f} %"
    return f"{v:.2f} ms"


def change(row):
    if row.get("change") is None:
        return "–"
    unit = " pp" if key(row) in ("error_rate", "loss", "muc.fanout") else " %"
    low, high = row.get("ci_low"), row.get("ci_high")
    interval = f" [{low:+.1f}, {high:+.1f}]" if low is not None and high is not None else ""
    return f"{row['change']:+.1f}{unit}{interval}"


def main():
    base = sys.argv[1]
    names = sorted(n[:-4] for n in os.listdir(base) if n.endswith(".txt"))
    names += sorted(n for n in os.listdir(base) if os.path.exists(os.path.join(base, n, "ab.txt")))
    order = ["login-scram-plain", "login-plain-plain", "login-scram-starttls", "login-plain-starttls", "chat", "muc", "idle"]
    rank = lambda n: (0 if n.startswith("prosody") else 1, next((i for i, o in enumerate(order) if n.endswith(o)), 99), n)
    for name in sorted(names, key=rank):
        output = os.path.join(base, name + ".txt")
        if not os.path.exists(output):
            output = os.path.join(base, name, "ab.txt")
        text = open(output).read().strip().splitlines()
        status = text[-1] if text and text[-1].startswith("exit") else "exit ?"
        path = os.path.join(base, name, "ab.json")
        if not os.path.exists(path):
            print(f"#### {name}: {status}, no judgement (a run could not run)\n")
            continue
        ab = json.load(open(path))
        b, c = ab["baseline"], ab["candidate"]
        forced = " (judged with --force)" if ab.get("forced") else ""
        print(f"#### {name}: {' / '.join(b['server_software'])} → {' / '.join(c['server_software'])}; "
              f"{status}, outcome {ab['outcome']}{forced}, {b['units']} rounds\n")
        if ab.get("problems"):
            for problem in ab["problems"]:
                print(f"- refused: {problem}")
            print()
        print("| metric | baseline | candidate | change [95 % interval] | tolerance | verdict |")
        print("|---|---:|---:|---|---:|---|")
        for row in ab["rows"]:
            if key(row) not in KEY and row["verdict"] not in ("regressed", "improved"):
                continue
            if row.get("baseline") is None and row.get("candidate") is None:
                continue
            unit = "pp" if key(row) in ("error_rate", "loss", "muc.fanout") else "%"
            print(f"| {key(row)} | {value(row, 'baseline')} | {value(row, 'candidate')} | {change(row)} | "
                  f"±{row['tolerance']:.1f} {unit} | {row['verdict']} |")
        print()


main()

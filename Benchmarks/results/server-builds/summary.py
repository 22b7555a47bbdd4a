import json,os,sys
base=sys.argv[1]
names=sorted(d for d in os.listdir(base) if os.path.isdir(os.path.join(base,d)))
print("| comparison | login p50, A → B | change [95 %] | login p99, A → B | change [95 %] | messages, A → B | outcome |")
print("|---|---|---|---|---|---|---|")
def k(r): return r["metric"]["key"] if isinstance(r["metric"],dict) else r["metric"]
for n in names:
    j=json.load(open(os.path.join(base,n,"ab.json")))
    rows={k(r):r for r in j.get("rows",[])}
    def cell(m):
        r=rows.get(m)
        if not r or r.get("change") is None: return ("–","–")
        return (f"{r['baseline']:.2f} → {r['candidate']:.2f} ms", f"{r['change']:+.1f} % [{r['ci_low']:+.1f}, {r['ci_high']:+.1f}]")
    a=cell("login.p50"); b=cell("login.p99")
    other="–"
    for m in ("muc.message.p50","message.p50"):
        r=rows.get(m)
        if r and r.get("change") is not None:
            other=f"{m}: {r['baseline']:.2f} → {r['candidate']:.2f} ms, {r['change']:+.1f} % [{r['ci_low']:+.1f}, {r['ci_high']:+.1f}]"; break
    print(f"| {n} | {a[0]} | {a[1]} | {b[0]} | {b[1]} | {other} | {j.get('outcome','?')} |")

#!/usr/bin/env python3
"""tests/stress/loadclient.py - N concurrent mTLS clients, each on one
kept-alive connection, sending RUNS runs in total to a sharnessd.

Client c's i-th run is {"cmd": "echo c-i"}; a 200 reply must be, byte for
byte, exit 0, signal null, timed_out false, stdout "c-i\\n", stderr "",
filtered 0, truncated false, the right profile, a 32-hex run_id that no
other run had.  A 503 must carry Retry-After and the at_capacity error body;
the client then retries the same run after a short pause (it does not wait
the full Retry-After, to keep the pressure on).  Any other status, a
malformed reply, a dropped connection or a request taking longer than
--timeout seconds is a failure ("never a hang").

Prints a JSON summary on stdout: runs, ok, busy (503s), errors (first 20),
seconds, runs_per_s, latency percentiles.
"""
import argparse
import http.client
import json
import random
import re
import ssl
import sys
import threading
import time

ap = argparse.ArgumentParser()
ap.add_argument("--port", type=int, required=True)
ap.add_argument("--certs", required=True, help="dir with ca.pem app.pem app.key")
ap.add_argument("--role", default="app")
ap.add_argument("--clients", type=int, default=4)
ap.add_argument("--runs", type=int, default=200, help="total runs over all clients")
ap.add_argument("--timeout", type=float, default=30.0)
ap.add_argument("--profile", default="analyse")
args = ap.parse_args()

ctx = ssl.create_default_context(cafile=f"{args.certs}/ca.pem")
ctx.load_cert_chain(f"{args.certs}/{args.role}.pem", f"{args.certs}/{args.role}.key")
ctx.check_hostname = False  # the server certificate names localhost, we dial 127.0.0.1

lock = threading.Lock()
errors = []
run_ids = set()
lat = []
stats = {"ok": 0, "busy": 0, "reconnects": 0}
HEX32 = re.compile(r"^[0-9a-f]{32}$")
KEYS = {"exit", "signal", "timed_out", "stdout", "stderr", "filtered", "truncated", "ms", "denials",
        "profile", "policy_hash", "run_id", "timeout_s", "usage"}


def err(msg):
    with lock:
        errors.append(msg)


def client(c, n):
    conn = http.client.HTTPSConnection("127.0.0.1", args.port, context=ctx, timeout=args.timeout)
    i = 0
    while i < n:
        want = f"{c}-{i}"
        body = json.dumps({"cmd": f"echo {want}", "profile": args.profile})
        t0 = time.monotonic()
        try:
            conn.request("POST", "/v0/run", body, {"Content-Type": "application/json"})
            r = conn.getresponse()
            data = r.read()
        except Exception as e:  # timeouts included: a hang is a failure
            err(f"client {c} run {i}: {type(e).__name__}: {e}")
            conn.close()
            with lock:
                stats["reconnects"] += 1
                if len(errors) > 50:
                    return
            conn = http.client.HTTPSConnection("127.0.0.1", args.port, context=ctx,
                                               timeout=args.timeout)
            i += 1
            continue
        dt = time.monotonic() - t0
        if r.status == 503:
            ra = r.getheader("Retry-After")
            try:
                e = json.loads(data)["error"]
                good = ra is not None and ra.isdigit() and e["code"] == "at_capacity" and e["message"]
            except Exception:
                good = False
            if not good:
                err(f"client {c} run {i}: bad 503: Retry-After={ra!r} body={data[:200]!r}")
                i += 1
            with lock:
                stats["busy"] += 1
            time.sleep(random.uniform(0.005, 0.03))
            continue
        i += 1
        if r.status != 200:
            err(f"client {c} run {i - 1}: status {r.status}: {data[:200]!r}")
            continue
        try:
            o = json.loads(data)
        except Exception:
            err(f"client {c} run {i - 1}: reply is not JSON: {data[:200]!r}")
            continue
        bad = []
        if set(o) != KEYS:
            bad.append(f"keys {sorted(set(o) ^ KEYS)}")
        if o.get("stdout") != want + "\n":
            bad.append(f"stdout {o.get('stdout')!r}")
        for k, v in (("exit", 0), ("signal", None), ("timed_out", False), ("stderr", ""),
                     ("filtered", 0), ("truncated", False), ("profile", args.profile)):
            if o.get(k) != v or type(o.get(k)) is not type(v):
                bad.append(f"{k} {o.get(k)!r}")
        rid = o.get("run_id", "")
        if not HEX32.match(str(rid)):
            bad.append(f"run_id {rid!r}")
        with lock:
            if rid in run_ids:
                bad.append(f"run_id {rid} seen twice")
            run_ids.add(rid)
            lat.append(dt)
        if bad:
            err(f"client {c} run {i - 1}: " + ", ".join(bad))
        else:
            with lock:
                stats["ok"] += 1
    conn.close()


per = [args.runs // args.clients + (1 if c < args.runs % args.clients else 0)
       for c in range(args.clients)]
threads = [threading.Thread(target=client, args=(c, per[c])) for c in range(args.clients)]
t0 = time.monotonic()
for t in threads:
    t.start()
for t in threads:
    t.join()
secs = time.monotonic() - t0
lat.sort()


def pct(p):
    return round(lat[min(len(lat) - 1, int(p * len(lat)))] * 1000, 1) if lat else None


print(json.dumps({
    "runs": args.runs, "clients": args.clients, "ok": stats["ok"], "busy": stats["busy"],
    "reconnects": stats["reconnects"], "errors": errors[:20], "n_errors": len(errors),
    "seconds": round(secs, 2), "runs_per_s": round(stats["ok"] / secs, 1) if secs else 0,
    "p50_ms": pct(0.5), "p90_ms": pct(0.9), "p99_ms": pct(0.99), "max_ms": pct(1.0),
}))
sys.exit(0 if not errors and stats["ok"] == args.runs else 1)

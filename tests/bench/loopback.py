#!/usr/bin/python3
# multitcp — Copyright (C) 2026 the multitcp authors
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Loopback goodput and CPU per GB: multitcpsink -> multitcpsrc with 1, 4
and 8 connections against tcpserversink -> tcpclientsrc, same buffer size,
interleaved in the same run. Writes a table to docs/benchmarks.md.

  tests/bench/loopback.py [--build build] [--gb 1] [--size 65536] [--reps 3]
      [--tls]   (adds 4 connections with TLS, certificate made by openssl)
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
PEER = os.path.join(HERE, "peer.py")


def run_once(system, connections, port, total, size, env):
    sender = subprocess.Popen(
        ["/usr/bin/python3", PEER, "send", system, str(port), str(total),
         str(size), str(connections)],
        stdout=subprocess.PIPE, text=True, env=env)
    try:
        line = sender.stdout.readline()
        if not line or "listening" not in line:
            raise RuntimeError("sender did not start: %r" % line)
        receiver = subprocess.run(
            ["/usr/bin/python3", PEER, "recv", system, str(port), str(size),
             str(connections)],
            capture_output=True, text=True, env=env, timeout=180)
        rx = json.loads(receiver.stdout.strip().splitlines()[-1])
        tx = json.loads(sender.stdout.readline())
        sender.wait(timeout=30)
    finally:
        if sender.poll() is None:
            sender.kill()
    if rx.get("error") or not tx.get("ok"):
        raise RuntimeError("run failed: rx=%s tx=%s" % (rx, tx))
    gb = rx["bytes"] / 1e9
    return {
        "bytes": rx["bytes"],
        "complete": rx["bytes"] == (total // size) * size,
        "goodput_mbps": rx["bytes"] * 8 / rx["seconds"] / 1e6,
        "cpu_per_gb": (rx["cpu"] + tx["cpu"]) / gb,
        "cpu_rx": rx["cpu"], "cpu_tx": tx["cpu"],
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(TOP, "build"))
    ap.add_argument("--gb", type=float, default=1.0)
    ap.add_argument("--size", type=int, default=65536)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--tls", action="store_true")
    ap.add_argument("--out", default=os.path.join(TOP, "docs", "benchmarks.md"))
    args = ap.parse_args()

    env = dict(os.environ)
    env["GST_PLUGIN_PATH"] = os.path.join(args.build, "gst")
    total = int(args.gb * 1e9)
    systems = [("tcp", 1), ("mtcp", 1), ("mtcp", 4), ("mtcp", 8)]
    tls_dir = None
    if args.tls:
        tls_dir = tempfile.mkdtemp(prefix="multitcp-bench-tls-")
        subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048",
                        "-nodes", "-days", "1", "-subj", "/CN=localhost",
                        "-addext", "subjectAltName=IP:127.0.0.1",
                        "-keyout", os.path.join(tls_dir, "key.pem"),
                        "-out", os.path.join(tls_dir, "cert.pem")],
                       check=True, capture_output=True)
        env["MTCP_TLS_DIR"] = tls_dir
        systems.append(("mtcp-tls", 4))
    results = {s: [] for s in systems}
    port = 47000
    for rep in range(args.reps):
        for system, n in systems:
            port += 1
            r = run_once(system, n, port, total, args.size, env)
            results[(system, n)].append(r)
            print(f"rep {rep} {system} x{n}: {r['goodput_mbps']:.0f} Mbit/s, "
                  f"{r['cpu_per_gb']:.2f} CPU s/GB, complete={r['complete']}",
                  flush=True)
            time.sleep(0.5)

    if tls_dir:
        shutil.rmtree(tls_dir)
    cc = open("/proc/sys/net/ipv4/tcp_congestion_control").read().strip()
    base = results[("tcp", 1)]
    base_good = statistics.median(r["goodput_mbps"] for r in base)
    base_cpu = statistics.median(r["cpu_per_gb"] for r in base)
    rows = []
    for (system, n), rs in results.items():
        good = statistics.median(r["goodput_mbps"] for r in rs)
        cpu = statistics.median(r["cpu_per_gb"] for r in rs)
        name = ("tcpserversink -> tcpclientsrc" if system == "tcp"
                else f"multitcpsink -> multitcpsrc, {n} connection(s)" +
                (", TLS" if system == "mtcp-tls" else ""))
        rows.append((name, good, cpu, good / base_good, cpu / base_cpu,
                     all(r["complete"] for r in rs)))
    four = [r for r in rows if r[0].endswith("4 connection(s)")][0]
    verdict_good = four[3] >= 1.0
    verdict_cpu = four[4] <= 1.2

    lines = [
        "## Loopback goodput and CPU per GB",
        "",
        f"Measured {time.strftime('%Y-%m-%d')} by `tests/bench/loopback.py "
        f"--gb {args.gb} --size {args.size} --reps {args.reps}`: "
        f"{args.gb} GB per run in {args.size}-byte buffers from a non-live "
        "`fakesrc`, sinks with sync=false, sender and receiver in separate "
        "processes; CPU is user+system time of both processes while "
        "streaming. Systems run interleaved, medians of the runs. "
        f"TCP congestion control: {cc} (both ends, loopback). "
        f"Machine: {os.cpu_count()} cores.",
        "",
        "| system | goodput (Mbit/s) | CPU s per GB | goodput vs TCP | CPU/GB vs TCP | all bytes arrived |",
        "|---|---:|---:|---:|---:|---|",
    ]
    for name, good, cpu, rg, rc, complete in rows:
        lines.append(f"| {name} | {good:.0f} | {cpu:.2f} | {rg:.2f} | {rc:.2f} "
                     f"| {'yes' if complete else 'NO'} |")
    tls_row = [r for r in rows if r[0].endswith("TLS")]
    if tls_row:
        lines += ["", f"TLS (GnuTLS through glib-networking, the cipher "
                  f"GnuTLS negotiates, TLS 1.3 here) on 4 connections costs "
                  f"{tls_row[0][2]:.2f} CPU s per GB against "
                  f"{four[2]:.2f} without: {tls_row[0][2] / four[2]:.2f}x, "
                  f"goodput {tls_row[0][1]:.0f} against {four[1]:.0f} "
                  "Mbit/s."]
    lines += [
        "",
        f"Target (issue 2): with 4 connections goodput >= TCP's "
        f"({'met' if verdict_good else 'NOT met'}: {four[3]:.2f}x) and CPU per GB "
        f"<= 1.2x TCP's ({'met' if verdict_cpu else 'NOT met'}: {four[4]:.2f}x).",
        "",
    ]
    text = "\n".join(lines)
    print(text)
    write_section(args.out, "## Loopback goodput and CPU per GB", text)
    return 0 if (verdict_good and verdict_cpu) else 1


def write_section(path, heading, text):
    """Replace the section under @heading in @path, keep the rest."""
    old = open(path).read() if os.path.exists(path) else "# Benchmarks\n\n"
    if heading in old:
        start = old.index(heading)
        nxt = old.find("\n## ", start + len(heading))
        old = old[:start] + text + ("\n" + old[nxt + 1:] if nxt >= 0 else "")
        new = old
    else:
        new = old.rstrip("\n") + "\n\n" + text
    with open(path, "w") as f:
        f.write(new)


if __name__ == "__main__":
    sys.exit(main())

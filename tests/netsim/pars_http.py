#!/usr/bin/python3
# multitcp — Copyright (C) 2026 the multitcp authors
# SPDX-License-Identifier: LGPL-2.1-or-later
"""ParS (seed 003) on netsim: multitcphttpsrc downloading from nginx over
an emulated access link, n = 1..8 connections per chunk.

Each condition is one netsim run (namespaces A and B, one link; the loss is
on the data's direction, B to A); inside it, nginx serves from namespace B
and this script, re-run with --client in namespace A, downloads with
multitcphttpsrc in-process and prints one JSON line per download. The
connection counts alternate within each repeat, so a drift of the machine
touches all of them.

    /usr/bin/python3 tests/netsim/pars_http.py [--build DIR] [--cc cubic]
        [--repeats 3] [--only fig5 fig6 fig7 fig8 table2 first]

Writes results/pars/*.json, docs/pars.md's "Measured" sections and
docs/pars/*.png.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(TOP, "tests", "http"))

MB = 1024 * 1024
PORT = 8080

# the paper's centre: 10 Mbit/s, 50 ms RTT, 1% loss
CENTRE = {"rate": 10, "rtt": 50, "loss": 0.01, "queue": 100}


def cond(**kw):
    c = dict(CENTRE)
    c.update(kw)
    return c


def cond_name(c):
    return (f"{c['rate']}mbit-{c['rtt']}ms-{c['loss'] * 100:g}pct-"
            f"{c['queue']}p")


def link_spec(c):
    ow = c["rtt"] / 2
    base = f"rate={c['rate']}mbit,delay={ow:g}ms,queue={c['queue']}p"
    loss = f",loss={c['loss']}" if c["loss"] > 0 else ""
    return f"{base}/{base}{loss}"


# ---------------------------------------------------------------- client

def client(args):
    """In namespace A: nginx in B, downloads here, JSON lines out."""
    import random
    import httpd
    import gi
    gi.require_version("Gst", "1.0")
    from gi.repository import Gst
    Gst.init(None)

    root = tempfile.mkdtemp(prefix="mtcp-pars-")
    rng = random.Random(3)
    sizes = sorted(set(args.sizes))
    for s in sizes:
        with open(os.path.join(root, f"f{s}.bin"), "wb") as f:
            f.write(rng.randbytes(s))
    web = httpd.Nginx(root, host=args.addr, tls=False, port=PORT,
                      prefix=["ip", "netns", "exec", args.ns_b]
                      if args.ns_b else [])
    web.start()

    def download(path, n, chunk):
        pipe = Gst.parse_launch(
            f"multitcphttpsrc name=src location={web.url(path)} "
            f"connections={n} chunk-size={chunk} timeout=60 ! "
            "fakesink sync=false")
        t0 = time.monotonic()
        pipe.set_state(Gst.State.PLAYING)
        msg = pipe.get_bus().timed_pop_filtered(
            600 * Gst.SECOND, Gst.MessageType.EOS | Gst.MessageType.ERROR)
        took = time.monotonic() - t0
        stats = pipe.get_by_name("src").get_property("stats")
        err = None if msg and msg.type == Gst.MessageType.EOS else \
            (msg.parse_error()[0].message if msg else "timeout")
        pipe.set_state(Gst.State.NULL)
        return took, err, stats

    def different(n, size):
        """n connections each fetching a chunk of its own (the scheme ParS
        is compared with): when the first chunk is whole, and all."""
        pipes, done = [], {}
        t0 = time.monotonic()
        for i in range(n):
            p = Gst.parse_launch(
                f"multitcphttpsrc location={web.url(f'/f{size}.bin')} "
                f"connections=1 chunk-size={size} ! fakesink sync=false")
            p.set_state(Gst.State.PLAYING)
            pipes.append(p)
        while len(done) < n and time.monotonic() - t0 < 600:
            for i, p in enumerate(pipes):
                if i in done:
                    continue
                m = p.get_bus().timed_pop_filtered(
                    10 * Gst.MSECOND,
                    Gst.MessageType.EOS | Gst.MessageType.ERROR)
                if m:
                    done[i] = time.monotonic() - t0
        for p in pipes:
            p.set_state(Gst.State.NULL)
        return done.get(0, float("nan")), max(done.values() or [0])

    try:
        for rep in range(args.repeats):
            for size in sizes:
                for n in args.conns:
                    chunk = args.chunk or size
                    if args.mode == "different":
                        first, last = different(n, size)
                        print(json.dumps({"mode": "different", "n": n,
                                          "rep": rep, "size": size,
                                          "first": first, "all": last}),
                              flush=True)
                        continue
                    took, err, stats = download(f"/f{size}.bin", n, chunk)
                    print(json.dumps({
                        "mode": "parallel", "n": n, "rep": rep,
                        "size": size, "chunk": chunk, "seconds": took,
                        "mbps": size * 8 / took / 1e6, "error": err,
                        "chunks": stats.get_value("chunks"),
                        "asked_again": stats.get_value("parts-asked-again")}),
                        flush=True)
    finally:
        web.stop()
        shutil.rmtree(root, ignore_errors=True)


# ---------------------------------------------------------------- driver

def run_condition(args, c, conns, sizes, chunk=0, mode="parallel",
                  repeats=None):
    import nstest
    build = os.path.abspath(args.build)
    env = (f"GST_PLUGIN_PATH_1_0={build}/gst "
           f"GST_REGISTRY_1_0={build}/tests/registry-pars.bin "
           "GST_PLUGIN_SYSTEM_PATH_1_0=/usr/lib/x86_64-linux-gnu/"
           "gstreamer-1.0")
    script = (f"ip netns exec $NETSIM_NS_A env {env} /usr/bin/python3 "
              f"{os.path.abspath(__file__)} --client --addr $NETSIM_ADDR_B "
              f"--ns-b $NETSIM_NS_B --repeats {repeats or args.repeats} "
              f"--mode {mode} --chunk {chunk} "
              f"--conns {' '.join(map(str, conns))} "
              f"--sizes {' '.join(map(str, sizes))}")
    print(f"  {cond_name(c)} {mode} n={conns} sizes={sizes}", flush=True)
    out, stats = nstest.run([link_spec(c)], script, cc=args.cc,
                            timeout=7200)
    rows = [json.loads(line) for line in out.splitlines()
            if line.startswith("{")]
    for r in rows:
        r["condition"] = c
    link = stats["links"][0] if "links" in stats else {}
    return rows, link


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--client", action="store_true")
    ap.add_argument("--addr")
    ap.add_argument("--ns-b")
    ap.add_argument("--mode", default="parallel")
    ap.add_argument("--chunk", type=int, default=0)
    ap.add_argument("--conns", type=int, nargs="+", default=list(range(1, 9)))
    ap.add_argument("--sizes", type=int, nargs="+", default=[4 * MB])
    ap.add_argument("--build", default=os.path.join(TOP, "build"))
    ap.add_argument("--cc", default="cubic")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--only", nargs="+")
    args = ap.parse_args()
    if args.client:
        return client(args)

    out_dir = os.path.join(TOP, "results", "pars")
    os.makedirs(out_dir, exist_ok=True)
    want = set(args.only or ["fig5", "fig6", "fig7", "fig8", "table2",
                             "first"])
    results = {}
    path = os.path.join(out_dir, "results.json")
    if os.path.exists(path):
        results = json.load(open(path))
    conns = list(range(1, 9))
    started = time.strftime("%Y-%m-%d %H:%M")

    def save():
        with open(path, "w") as f:
            json.dump(results, f, indent=1)

    sweeps = {
        "fig5": [cond(loss=p) for p in (0.001, 0.005, 0.01, 0.02)],
        "fig6": [cond(rtt=r) for r in (25, 50, 100, 150)] +
                [cond(rtt=150, loss=0.001)],
        "fig7": [cond(rate=r) for r in (5, 10, 20)],
    }
    for fig, conds in sweeps.items():
        if fig not in want:
            continue
        print(f"== {fig}", flush=True)
        results[fig] = []
        for c in conds:
            rows, _ = run_condition(args, c, conns, [4 * MB], chunk=MB)
            results[fig].append({"condition": c, "rows": rows})
            save()
    if "fig8" in want:
        print("== fig8", flush=True)
        rows, _ = run_condition(args, CENTRE, [1, 2, 4, 8],
                                [MB // 4, MB, 4 * MB])
        results["fig8"] = [{"condition": CENTRE, "rows": rows}]
        save()
    if "table2" in want:
        print("== table2", flush=True)
        results["table2"] = []
        for n in (1, 2, 4, 8):
            c = cond(loss=0)
            # about 20 s of the link as one chunk: n flows from start to
            # end, as the paper's ns-3 flows (no pauses between rounds)
            rows, link = run_condition(args, c, [n], [24 * MB],
                                       chunk=24 * MB, repeats=1)
            results["table2"].append({"condition": c, "n": n, "rows": rows,
                                      "link": link})
            save()
    if "first" in want:
        print("== first", flush=True)
        results["first"] = []
        for n in (2, 4):
            par, _ = run_condition(args, CENTRE, [n], [2 * MB])
            dif, _ = run_condition(args, CENTRE, [n], [2 * MB],
                                   mode="different")
            results["first"].append({"n": n, "parallel": par,
                                     "different": dif})
            save()
    results["meta"] = {"cc": args.cc, "repeats": args.repeats,
                       "started": started,
                       "commit": subprocess.run(
                           ["git", "-C", TOP, "rev-parse", "--short",
                            "HEAD"], capture_output=True,
                           text=True).stdout.strip()}
    save()
    import pars_report
    pars_report.write(results)


if __name__ == "__main__":
    sys.exit(main())

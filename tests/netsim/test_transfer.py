#!/usr/bin/python3
# multitcp — Copyright (C) 2026 the multitcp authors
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Issue 28 on netsim: a stored video (10 s of a 4.6 Mbit/s raw stream,
from a non-live upstream) over a 20 Mbit/s, 40 ms path. Greedy sends all
of it as fast as the path takes it; transfer-control=network-friendly
(seed 004) keeps only what playback and its buffer target need ahead;
both deliver every frame, and the receiver reports its playout buffer.

Asserted: both deliver all 300 frames and end; greedy has sent 90% by
3 s; network-friendly at most 55% by 3 s (3 s of playback plus the 1 s
latency is 40%; its buffer target on top; 32% in the first run, greedy
100%) and keeps sending until the end; the sink saw a playout buffer > 0;
under network-friendly the stream's rate the sink reports to the receiver
(what it sizes its connections for) is the playback rate, not how fast the
file is pushed: within 0.5-1.5 times 4.6 Mbit/s in every report to 8 s
(it said up to 26 Mbit/s in the first second before stop 57: the file's
push into the sink's queue)."""
import json
import os
import tempfile

import nstest

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.abspath(os.path.join(HERE, "..", ".."))
BUILD = os.environ.get("MULTITCP_BUILD", os.path.join(TOP, "build"))
FRAMES = 300
TOTAL = FRAMES * 160 * 120
PLAYBACK_BPS = 30 * 160 * 120 * 8
SECONDS = 16

nstest.require_namespaces()
nstest.require_gst(("videotestsrc", "fakesink"), "the transfer test", BUILD)

f = nstest.Failures()


def run(control):
    with tempfile.TemporaryDirectory() as out:
        env = f"GST_PLUGIN_PATH={BUILD}/gst"
        peer = f"{HERE}/transfer_peer.py"
        script = (
            f"ip netns exec $NETSIM_NS_A env {env} /usr/bin/python3 {peer} "
            f"sender 5600 {control} {FRAMES} {SECONDS} > {out}/tx.jsonl & "
            f"sleep 1; ip netns exec $NETSIM_NS_B env {env} /usr/bin/python3 "
            f"{peer} receiver $NETSIM_ADDR_A 5600 {SECONDS - 2} "
            f"> {out}/rx.jsonl; wait")
        stdout, stats = nstest.run(
            ["rate=20mbit,delay=20ms,queue=100p"], script, cc="cubic",
            timeout=120)
        tx = [json.loads(line) for line in open(f"{out}/tx.jsonl")]
        rx = [json.loads(line) for line in open(f"{out}/rx.jsonl")]
    return tx, rx, stats


def at(rows, t):
    """the last row at or before t seconds"""
    best = None
    for r in rows:
        if "t" in r and r["t"] <= t:
            best = r
    return best or {"sent": 0, "playout": 0}


results = {}
for control in ("greedy", "network-friendly"):
    tx, rx, stats = run(control)
    end = [r for r in rx if r.get("end")]
    sent3 = at(tx, 3.0)["sent"]
    saw = max((r.get("playout", 0) for r in tx), default=0)
    results[control] = (tx, rx)
    print(f"{control}: sent by 3 s {sent3} of {TOTAL} "
          f"({sent3 / TOTAL:.0%}); the sink saw a playout up to {saw}; "
          f"receiver: {end[0] if end else 'no end'}; link "
          f"{stats['links'][0]['ab']['forwarded_bytes']} bytes A to B")
    f.check(end and end[0]["eos"] and end[0]["frames"] == FRAMES,
            f"{control}: every frame played, EOS")
    f.check(saw > 0, f"{control}: the sink saw the receiver's playout")
    if control == "greedy":
        f.check(sent3 >= TOTAL * 0.9, "greedy: 90% sent within 3 s")
    else:
        f.check(sent3 <= TOTAL * 0.55,
                "network-friendly: at most 55% sent by 3 s")
        sent8 = at(tx, 8.0)["sent"]
        f.check(sent8 > sent3, "network-friendly: still sending at 8 s")
        told = [r["stream_bitrate"] for r in rx
                if r.get("t", 99) <= 8 and r.get("stream_bitrate")]
        print(f"network-friendly: the stream's rate reported, to 8 s: "
              f"{min(told, default=0)}-{max(told, default=0)} bit/s "
              f"(playback {PLAYBACK_BPS}); connections "
              f"{sorted(set(r.get('connections') for r in rx if 't' in r))}")
        f.check(told and 0.5 * PLAYBACK_BPS <= min(told) and
                max(told) <= 1.5 * PLAYBACK_BPS,
                "network-friendly: the playback rate reported as the "
                "stream's")
f.exit()

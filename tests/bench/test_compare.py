#!/usr/bin/python3
# multitcp — Copyright (C) 2026 the multitcp authors
# SPDX-License-Identifier: LGPL-2.1-or-later
"""compare.py's receiver analysis on made-up runs: a frame that arrives
with other bytes than the sender's encoder made counts as lost, a missing
PTS counts as lost, a late one as late, and the PTS offset between the two
ends may drift while tsdemux locks on, or move by frames mid-run; bytes on the wire are counted as
netsim forwarded them and as the senders offered them (lost ones too)."""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.join(HERE, "..", "netsim")]
import compare  # noqa: E402
import nstest  # noqa: E402

FRAME_NS = int(1e9 / compare.FPS)
f = nstest.Failures()
check = f.check


def sent_frames(n):
    # sizes that do not repeat nearby, as x264's do
    return [(3600 * 10**9 + i * FRAME_NS, 4000 + (i * 7919) % 9000)
            for i in range(n)]


def received(sent, offset_ns, drift_ns=0, damage=(), drop=(), late=(),
             budget_s=1.0):
    """The receiver's (arrival, PTS, size) list for @sent: PTS moved by
    @offset_ns plus a drift over the first 30 frames."""
    frames = []
    for i, (pts, size) in enumerate(sent):
        if i in drop:
            continue
        rx_pts = pts + offset_ns + drift_ns * max(0, 30 - i) // 30
        arrival = 100.0 + i / compare.FPS + (budget_s + 0.5 if i in late
                                             else 0.05)
        frames.append((arrival, rx_pts, size - 1316 if i in damage else size))
    return frames


sent = sent_frames(900)
netsim = {"links": [{"ab": {"forwarded_bytes": 0},
                     "ba": {"forwarded_bytes": 0}}]}

# a clean run, with 30 ms of drift at the start (seen with multitcpsrc)
rx = {"frames": received(sent, -3599 * 10**9, drift_ns=30 * 10**6),
      "ts_bytes": 10**7}
damaged, unmatched, made, _ = compare.damaged_frames(
    sorted(rx["frames"], key=lambda f: f[1]), sent)
check(not damaged and unmatched == 0 and made == 900,
      f"clean run: {len(damaged)} damaged, {unmatched} unmatched, "
      f"{made} of 900 made")
res = compare.analyse(rx, {"frames_sent": sent}, netsim, 30, 1.0, 8000)
check(res["late_fraction"] == 0 and res["damaged"] == 0,
      f"clean run: late or lost {res['late_fraction']}")

# the first 80 frames all damaged (SRT dropping packets on a path short
# of the stream at the start): the offset still comes from the rest
rx = {"frames": received(sent, -3599 * 10**9, damage=range(80)),
      "ts_bytes": 10**7}
damaged, unmatched, made, _ = compare.damaged_frames(
    sorted(rx["frames"], key=lambda f: f[1]), sent)
check(len(damaged) == 80 and unmatched == 0 and made == 900,
      f"damaged start: {len(damaged)} of 80 damaged, {unmatched} "
      f"unmatched, {made} of 900 made")

# tsdemux moves its PTS by three frames mid-run (seen after a skip: every
# frame after it was counted damaged, stop 38): the match locks on again,
# and a frame damaged after the move still counts
moved = [(a, p + (100 * 10**6 if k >= 300 else 0), s_) for k, (a, p, s_) in
         enumerate(received(sent, -3599 * 10**9, damage=(450,)))]
damaged, unmatched, made, _ = compare.damaged_frames(moved, sent)
check(len(damaged) == 1 and unmatched == 0,
      f"PTS moved by 100 ms: {len(damaged)} damaged of 1, {unmatched} "
      "unmatched")

# two damaged frames (one of them also late), one dropped, one late
# (a drift under half a frame: the expected count comes from the PTS span)
rx = {"frames": received(sent, -3599 * 10**9, drift_ns=10 * 10**6,
                         damage=(5, 400), drop=(600,), late=(400, 700)),
      "ts_bytes": 10**7}
res = compare.analyse(rx, {"frames_sent": sent}, netsim, 30, 1.0, 8000)
check(res["damaged"] == 2, f"damaged {res['damaged']} of 2")
check(res["lost"] == 1, f"lost {res['lost']} of 1")
check(res["late"] == 3, f"late or damaged {res['late']} of 3 "
      "(a damaged late frame counts once)")
check(abs(res["late_fraction"] - 4 / 900) < 1e-9,
      f"late or lost {res['late_fraction'] * 900:.2f} of 900 frames")

# tsdemux's skew correction stretches the receiver's PTS by 0.1%: the
# span is then 900.9 frames, yet no frame is missing (the sender's clock
# counts them), and a frame dropped on top of it is one lost
stretched = [(a, p0 + (p - p0) * 1001 // 1000, s_)
             for (a, p, s_) in received(sent, -3599 * 10**9)
             for p0 in [sent[0][0] - 3599 * 10**9]]
res = compare.analyse({"frames": stretched, "ts_bytes": 10**7},
                      {"frames_sent": sent}, netsim, 30, 1.0, 8000)
check(res["lost"] == 0 and res["expected"] == 900,
      f"stretched PTS: lost {res['lost']}, expected {res['expected']}")
res = compare.analyse({"frames": [f_ for i, f_ in enumerate(stretched)
                                  if i != 450], "ts_bytes": 10**7},
                      {"frames_sent": sent}, netsim, 30, 1.0, 8000)
check(res["lost"] == 1 and res["expected"] == 900,
      f"stretched PTS, one dropped: lost {res['lost']}, "
      f"expected {res['expected']}")

# on the sender's clock: a frame is late when it comes more than the
# cell's floor + budget + two frames after its encoder gave it out; the
# warm-up's backlog (frames 3 and 10 here) is left out, a later one is not
sent_at = [100.0 + i / compare.FPS - 0.01 for i in range(900)]
rx_late = {"frames": received(sent, -3599 * 10**9, late=(3, 10, 400, 700)),
           "ts_bytes": 10**7}
res = compare.analyse(rx_late, {"frames_sent": sent,
                                "frames_sent_at": sent_at},
                      netsim, 30, 1.0, 8000)
res.update(budget=1000)
check(abs(res["delay_p50"] - 0.06) < 1e-6
      and abs(res["delay_max"] - 1.51) < 1e-6
      and compare.cell_floor([res]) == 0.06,
      f"sender clock: p50 {res['delay_p50']}, max {res['delay_max']}")
late = compare.late_on_sender_clock(res, 0.06)
check(abs(late * len(res["delays_ms"]) - 2) < 1e-6
      and 838 <= len(res["delays_ms"]) <= 840,
      f"sender clock: {late * len(res['delays_ms']):.2f} of 2 late, "
      f"{len(res['delays_ms'])} frames after the warm-up")
# a damaged frame has no delay but is lost to the viewer: it counts
res["damaged"] = 9
whole = (res["expected"] - res["lost"] - 9) / res["expected"]
check(abs(compare.late_on_sender_clock(res, 0.06) -
          (1 - (1 - late) * whole)) < 1e-9
      and compare.late_on_sender_clock(dict(res, damaged=10**6), 0.06) == 1,
      "sender clock: damaged frames count as lost, at most all")
# a system that holds every frame for its budget (SRT's TSBPD) is on time
# against the cell's floor another system set; later than that, late
held = dict(rx_late, frames=[(a + 1.0, p_, s_) for a, p_, s_ in
                             received(sent, -3599 * 10**9)])
res = compare.analyse(held, {"frames_sent": sent, "frames_sent_at": sent_at},
                      netsim, 30, 1.0, 8000)
res.update(budget=1000)
check(compare.late_on_sender_clock(res, 0.06) == 0
      and compare.late_on_sender_clock(res, 0.06 - 0.1) > 0.9,
      "held for the budget: on time against a 60 ms floor, late against 0")
# a receiver that got nothing after the warm-up: every frame late
early = dict(rx_late, frames=received(sent, -3599 * 10**9)[:40])
res = compare.analyse(early, {"frames_sent": sent, "frames_sent_at": sent_at},
                      netsim, 30, 1.0, 8000)
res.update(budget=1000)
check(compare.late_on_sender_clock(res, 0.06) == 1.0,
      "nothing after the warm-up: all late on the sender's clock")
res = compare.analyse(rx_late, {"frames_sent": sent}, netsim, 30, 1.0, 8000)
check(compare.late_on_sender_clock(res, 0.06) is None,
      "no sender times: no sender-clock figure")

# a viewer's frame is whole, decodable and on time: after a frame that
# never came whole (dropped 600, damaged 5), the rest of its GOP (a
# keyframe every 30) cannot be decoded; a late frame (700) still reaches
# the decoder and breaks nothing; without keyframes no figure
keys = [pts for i, (pts, _) in enumerate(sent) if i % 30 == 0]
rx_gop = {"frames": received(sent, -3599 * 10**9, damage=(5,), drop=(600,),
                             late=(700,)), "ts_bytes": 10**7}
res = compare.analyse(rx_gop, {"frames_sent": sent, "frames_key": keys,
                           "frames_sent_at": sent_at}, netsim, 30, 1.0, 8000)
res.update(budget=1000)
# 6..29 after the damaged 5, 601..629 after the dropped 600
check(res["undecodable"] == 24 + 29,
      f"undecodable {res['undecodable']} of {24 + 29}")
check(abs(res["late_fraction"] - 3 / 900) < 1e-9
      and abs(res["late_fraction_decodable"] - (3 + 53) / 900) < 1e-9,
      f"late or lost {res['late_fraction'] * 900:.1f} of 3, with the "
      f"undecodable {res['late_fraction_decodable'] * 900:.1f} of 56")
# on the sender's clock they count as lost, and their delays are not
# counted (600's GOP is after the warm-up: 29 fewer delays)
check(len(res["delays_ms"]) == 839 - 1 - 29
      and abs(compare.late_on_sender_clock(res, 0.06) -
              (1 - (1 - 1 / len(res["delays_ms"])) *
               (900 - 1 - 1 - 53) / 900)) < 1e-9,
      f"sender clock with undecodable frames: {len(res['delays_ms'])} "
      "delays")
# a receiver that starts inside a GOP cannot decode until a keyframe
joined = {"frames": received(sent, -3599 * 10**9)[10:], "ts_bytes": 10**7}
res = compare.analyse(joined, {"frames_sent": sent, "frames_key": keys},
                      netsim, 30, 1.0, 8000)
check(res["undecodable"] == 20 and res["late_fraction"] == 0,
      f"joined at frame 10: {res['undecodable']} of 20 undecodable")
res = compare.analyse(joined, {"frames_sent": sent}, netsim, 30, 1.0, 8000)
check(res["undecodable"] is None and res["late_fraction_decodable"] is None,
      "no keyframes recorded: no decodable figure")

# a sender that did not record its frames: nothing is called damaged
res = compare.analyse(rx, {}, netsim, 30, 1.0, 8000)
check(res["damaged"] is None and res["late"] == 2,
      f"no sender record: damaged {res['damaged']}, late {res['late']}")

# wire bytes: forwarded (what crossed) and offered (what the senders put
# on the link, lost packets too), whole run and between two marks
netsim = {"links": [{"ab": {"forwarded_bytes": 1_050_000,
                            "offered_bytes": 1_080_000},
                     "ba": {"forwarded_bytes": 20_000,
                            "offered_bytes": 20_000}}]}
marks = [{"t": 110.0, "links": [{"ab": 100_000, "ba": 2_000,
                                 "ab_offered": 103_000, "ba_offered": 2_000}]},
         {"t": 120.0, "links": [{"ab": 600_000, "ba": 12_000,
                                 "ab_offered": 618_000,
                                 "ba_offered": 12_000}]}]
rx = {"frames": received(sent, -3599 * 10**9), "ts_bytes": 10**6,
      "ts_series": [(100.0, 0), (130.0, 1_500_000)]}
res = compare.analyse(rx, {"frames_sent": sent}, netsim, 30, 1.0, 8000,
                      marks)
check(abs(res["wire_per_byte"] - 1.07) < 1e-9
      and abs(res["sent_per_byte"] - 1.10) < 1e-9,
      f"whole run: wire {res['wire_per_byte']}, sent {res['sent_per_byte']}")
# 500 000 TS bytes between the marks
check(abs(res["wire_per_byte_steady"] - 510_000 / 500_000) < 1e-9
      and abs(res["sent_per_byte_steady"] - 525_000 / 500_000) < 1e-9,
      f"steady: wire {res['wire_per_byte_steady']}, "
      f"sent {res['sent_per_byte_steady']}")
# marks from a netsim without offered bytes: no sent figure
for m in marks:
    for link in m["links"]:
        del link["ab_offered"], link["ba_offered"]
res = compare.analyse(rx, {"frames_sent": sent}, netsim, 30, 1.0, 8000,
                      marks)
check(res["sent_per_byte_steady"] is None and res["wire_per_byte_steady"],
      "old marks: no steady sent figure, the wire one stays")

# the live share (share.py): the bulk flows' bytes over the marks' span,
# 1 s intervals prorated at its ends, and the stream's wire bytes the
# link's less theirs (whole segments plus retransmissions)
import json  # noqa: E402
import share  # noqa: E402
import tempfile  # noqa: E402

check(share.parse_kind("share-cubic8") == ("cubic", 8),
      "share-cubic8: 8 cubic flows")
intervals = [{"sum": {"start": float(i), "end": float(i + 1),
                      "bytes": 1448 * 100, "retransmits": 2}}
             for i in range(20)]
got, retrans = share.bulk_in_span(intervals, 2.5, 12.5)
check(abs(got - 1448 * 1000) < 1e-6 and abs(retrans - 20) < 1e-9,
      f"10 s of 1 s intervals from 2.5 s: {got} bytes, {retrans} resent")
with tempfile.TemporaryDirectory() as d:
    out = os.path.join(d, "run")
    # the sender wrote more than the receiver got (its socket's buffer):
    # the receiver's bytes count
    sender = [{"sum": dict(iv["sum"], bytes=iv["sum"]["bytes"] * 2)}
              for iv in intervals]
    json.dump({"intervals": sender,
               "server_output_json": {"intervals": intervals}},
              open(out + ".bulk.json", "w"))
    json.dump({"t0": 1000.0}, open(out + ".bulk_t0.json", "w"))
    # 10 s; the bulk flows' 1000 segments received are 1500 bytes each on
    # the link, the rest (5 MB) the stream's
    span = [{"t": 1002.5, "links": [{"ab": 0, "ba": 0}]},
            {"t": 1012.5, "links": [{"ab": 1000 * 1500 + 5_000_000,
                                     "ba": 0}]}]
    fig = share.figures(out, span, 2)
    check(abs(fig["bulk_mbps"] - 1448 * 1000 * 8 / 10 / 1e6) < 1e-9
          and abs(fig["bulk_per_flow_mbps"] - fig["bulk_mbps"] / 2) < 1e-9
          and abs(fig["stream_wire_mbps"] - 4.0) < 1e-9
          and abs(fig["bulk_retransmits"] - 20) < 1e-9,
          f"share figures {fig}")
    check(share.figures(out, span[:1], 2) == {}, "one mark: no figures")
    json.dump({"intervals": sender}, open(out + ".bulk.json", "w"))
    check(share.figures(out, span, 2) == {},
          "no receiver's record: no figures")
    os.unlink(out + ".bulk.json")
    check(share.figures(out, span, 2) == {}, "no iperf3 record: no figures")
    check(share.spread([0.1, 0.3], "{:.2f}") == "0.10-0.30"
          and share.spread([0.1], "{:.2f}") == "0.10",
          "a cell's spread over its runs")

# what came late once the bonding cells' links settled: frames made from
# 8 s on (netsim's clock) only; one lost and one late of those count,
# the ones before do not
sent = sent_frames(600)
rx = {"frames": received(sent, 0, drop=(10, 400), late=(20, 500))}
t0 = 100.05 - 2.0       # the first frame arrives 2 s into netsim's run
got = compare.late_from(rx, t0, 8.0, 1.0)
made = 600 - 6 * compare.FPS
check(got is not None and abs(got - 2 / made) < 1e-9,
      f"late or lost from 8 s on: {got}, want {2 / made}")
damaged = {rx["frames"][450][1]}
got = compare.late_from(rx, t0, 8.0, 1.0, damaged)
check(abs(got - 3 / made) < 1e-9, f"and one damaged: {got}, want {3 / made}")
check(compare.late_from(rx, None, 8.0, 1.0) is None
      and compare.late_from({"frames": rx["frames"][:1]}, t0, 8.0, 1.0)
      is None, "no netsim start or one frame: nothing to say")

# bond-cut: link 1 is back at the first sample that shows its bytes
# growing, once within a second it carries a quarter of both links'; a
# trickle under a held-low stream counts, a few bytes next to a full link
# 0 do not
back = 10.0 + compare.BONDING_CUT[0] + 2 + compare.BONDING_CUT[1]
netsim = {"links": [{"ab": {"forwarded_bytes": 1}}] * 2}


def series(link1_from, link1_rate, link0_rate):
    out, b0, b1 = [], 0, 0
    for i in range(-4, 16):
        # bytes sent until the sample at t
        t = back + i * 0.25
        b0 += link0_rate / 4
        if t > back + link1_from:
            b1 += link1_rate / 4
        out.append((t, [b0, b1], ["up", "up" if t >= back else "down"]))
    return out


fig = compare.bonding_figures({"path_series": series(0.1, 40000, 40000)},
                              netsim, "bond-cut", 10.0)
check(fig["back_s"] == 0.25, f"a trickle that is its half: {fig}")
fig = compare.bonding_figures({"path_series": series(0.1, 2000, 900000)},
                              netsim, "bond-cut", 10.0)
check(fig["back_s"] is None, f"a few bytes next to a full link: {fig}")
fig = compare.bonding_figures({"path_series": series(0.6, 900000, 900000)},
                              netsim, "bond-cut", 10.0)
check(fig["back_s"] == 0.75, f"its bytes from 0.6 s: {fig}")

f.exit()

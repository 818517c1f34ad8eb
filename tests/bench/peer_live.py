#!/usr/bin/python3
# multitcp — Copyright (C) 2026 the multitcp authors
# SPDX-License-Identifier: LGPL-2.1-or-later
"""One end of a live streaming comparison (tests/bench/compare.py), run in
a netsim namespace. Both ends carry the same MPEG-TS of live x264 CBR video
so every system moves the same bytes.

  peer_live.py send SYSTEM PEER_ADDR PORT BITRATE_KBPS SECONDS BUDGET_MS OUT.json
  peer_live.py recv SYSTEM PEER_ADDR PORT BITRATE_KBPS SECONDS BUDGET_MS OUT.json

SYSTEM: multitcp-N (N connections), multitcp-pars (count from ParS Eq. 19,
up to max-connections' default; multitcp-parsM: up to M at both ends),
multitcp-dynamic (VariedConnVariedWinSize from N = 5), multitcp-parsdyn (the
same from ParS's count), multitcp-adjust (the defaults with the receiver's
window-control=adjust: MultiTCP's cap on each window), multitcp-encoder
(the defaults, and the sink sets x264enc's bitrate from its estimate:
bitrate-control=encoder, BITRATE_KBPS the most), tcp, srt, rist (bonding round-robin over BENCH_PATHS when
set), rist-broadcast (the same, every packet on every path). A multitcp
system with the suffix
_copyP has the sink's copy-overhead at P% (multitcp-pars_copy0: no copies
ahead of deadlines), _ccNAME its congestion-control=NAME (after _copyP,
before _listen/_bond); with the suffix _listen (last) the receiver listens
and the sink dials it (mode=caller; PEER_ADDR is then the receiver's for
the sender, unused by the receiver); with _bond the same, the sink
dialing over the devices in BENCH_UPLINKS (interfaces=). BENCH_SINK_OPTS,
when set, is added to every multitcpsink (an A/B of one property in one
build: BENCH_SINK_OPTS=bitrate-probe=padding).
The receiver records, for every video frame that comes out of tsdemux, its
arrival time (CLOCK_MONOTONIC) and PTS, the TS bytes its source delivered,
and its own CPU time; the sender records its CPU time and the PTS and size
of every frame its encoder gives the muxer. Each writes OUT.json.
"""
import json
import os
import sys
import time

import gi
gi.require_version("Gst", "1.0")
from gi.repository import GLib, Gst  # noqa: E402


def bonding(paths, port):
    """RIST over the two paths of the multipath cell (BENCH_PATHS)."""
    return "bonding-addresses=" + ",".join(f"{a}:{port}"
                                           for a in paths.split(","))


def split_listen(system):
    """multitcp-X_listen -> (multitcp-X, True): the receiver listens and
    the sink dials it (mode=caller), the camera-behind-NAT deployment;
    multitcp-X_bond the same, the sink dialing over every link's device
    (BENCH_UPLINKS: the modems bonded at a camera)."""
    for suffix in ("_listen", "_bond"):
        if system.endswith(suffix):
            return system[:-len(suffix)], True
    return system, False


def split_cc(system):
    """multitcp-X_ccNAME -> (multitcp-X, NAME): the sink's own
    congestion-control (the namespaces' default otherwise); (system, None)
    without one."""
    base, _, cc = system.partition("_cc")
    return base, (cc or None)


def split_copy(system):
    """multitcp-X_copyP -> (multitcp-X, P); (system, None) without one."""
    system = split_cc(split_listen(system)[0])[0]
    base, _, copy = system.partition("_copy")
    return base, (int(copy) if copy else None)


def sender_desc(system, peer, port, kbps, budget_ms):
    listen = split_listen(system)[1]
    bond = system.endswith("_bond")
    sink_cc = split_cc(split_listen(system)[0])[1]
    system, copy = split_copy(system)
    # one keyframe a second unless BENCH_KEY_INT_MAX says (x264enc's own
    # default GOP is 250 frames: what a skip waits for shows only there)
    gop = int(os.environ.get("BENCH_KEY_INT_MAX", "30"))
    video = ("videotestsrc is-live=true pattern=snow ! "
             "video/x-raw,width=640,height=360,framerate=30/1 ! "
             f"x264enc name=enc bitrate={kbps} pass=cbr tune=zerolatency "
             f"key-int-max={gop} speed-preset=ultrafast ! "
             "h264parse name=vparse ! mpegtsmux alignment=7 ! ")
    if system.startswith("multitcp"):
        # sync=false like the peers below: the muxer's packets leave as it
        # makes them, not paced by their timestamps one at a time
        cap = pars_cap(system)
        return video + (f"multitcpsink name=mtcpsink host={peer} port={port} "
                        "sync=false" + (" mode=caller" if listen else "")
                        + (f" interfaces={os.environ['BENCH_UPLINKS']}"
                           if bond else "")
                        + (" bitrate-control=encoder"
                           if system == "multitcp-encoder" else "")
                        + (f" max-connections={cap}" if cap else "")
                        + (f" copy-overhead={copy}" if copy is not None
                           else "")
                        + (f" congestion-control={sink_cc}" if sink_cc
                           else "")
                        + (" " + os.environ["BENCH_SINK_OPTS"]
                           if os.environ.get("BENCH_SINK_OPTS") else ""))
    if system == "tcp":
        return video + f"tcpserversink host={peer} port={port} sync=false"
    if system == "srt":
        # SRT's defaults otherwise: overhead 25% of the bandwidth for
        # retransmissions, too-late packet drop on
        return video + (f"srtsink uri=srt://{peer}:{port}?mode=listener "
                        f"latency={budget_ms} wait-for-connection=false "
                        "sync=false")
    if system in ("rist", "rist-broadcast"):
        paths = os.environ.get("BENCH_PATHS")
        method = "broadcast" if system == "rist-broadcast" else "round-robin"
        to = (bonding(paths, port) + f" bonding-method={method}" if paths
              else f"address={peer} port={port}")
        return video + ("rtpmp2tpay ! "
                        f"ristsink {to} "
                        f"sender-buffer={max(budget_ms, 1200)}")
    raise SystemExit(f"unknown system {system}")


def pars_cap(system):
    """multitcp-parsM: ParS's count up to M; None: the elements' default."""
    n = system.split("-", 1)[1]
    return int(n[4:]) if n.startswith("pars") and n[4:].isdigit() else None


def receiver_desc(system, peer, port, budget_ms):
    listen = split_listen(system)[1]
    system = split_copy(system)[0]
    tail = " ! tsdemux name=demux demux. ! video/x-h264 ! h264parse ! " \
        "fakesink name=sink sync=false"
    if system.startswith("multitcp"):
        opts = f"latency={budget_ms} "
        n = system.split("-", 1)[1]
        if n.startswith("pars") and n != "parsdyn":
            # ParS Eq. 19 from the loss and RTT the sink measures
            cap = pars_cap(system)
            opts += "connections=0" + (f" max-connections={cap}" if cap
                                       else "")
        elif n in ("dynamic", "parsdyn"):
            # paper: Alg. 2 from N = 5; parsdyn: from ParS's count
            opts += (f"connections={5 if n == 'dynamic' else 0} "
                     "connection-control=congestion "
                     "window-control=adjust min-connections=1 "
                     "max-connections=32")
        elif n == "adjust":
            opts += "window-control=adjust"
        elif n == "share":
            opts += "connection-control=share"
        elif n not in ("default", "encoder"):
            opts += f"connections={n}"
        # multitcp-default (and -encoder): what a new user gets, nothing set
        if os.environ.get("BENCH_PATHS") and not listen:
            opts += f" local-addresses={os.environ['BENCH_PATHS']}"
        if listen:
            return (f"multitcpsrc name=src mode=listener host=0.0.0.0 "
                    f"port={port} {opts.strip()}" + tail)
        return (f"multitcpsrc name=src host={peer} port={port} {opts.strip()}"
                + tail)
    if system == "tcp":
        return f"tcpclientsrc name=src host={peer} port={port}" + tail
    if system == "srt":
        return (f"srtsrc name=src uri=srt://{peer}:{port}?mode=caller "
                f"latency={budget_ms}" + tail)
    if system in ("rist", "rist-broadcast"):
        paths = os.environ.get("BENCH_PATHS")
        at = (bonding(paths, port) if paths else f"address=0.0.0.0 port={port}")
        return (f"ristsrc name=src {at} receiver-buffer={budget_ms} ! "
                "application/x-rtp,media=video,clock-rate=90000,"
                "encoding-name=MP2T ! rtpmp2tdepay" + tail)
    raise SystemExit(f"unknown system {system}")


def main():
    role, system, peer, port, kbps, seconds, budget_ms, out = sys.argv[1:9]
    port, kbps, seconds, budget_ms = int(port), int(kbps), float(seconds), \
        int(budget_ms)
    Gst.init(None)
    desc = (sender_desc(system, peer, port, kbps, budget_ms) if role == "send"
            else receiver_desc(system, peer, port, budget_ms))
    pipe = Gst.parse_launch(desc)
    rec = {"system": system, "role": role, "frames": [], "ts_bytes": 0,
           "error": None, "desc": desc}

    if role == "recv":
        def on_frame(pad, info):
            buf = info.get_buffer()
            rec["frames"].append((time.monotonic(), buf.pts
                                  if buf.pts != Gst.CLOCK_TIME_NONE else -1,
                                  buf.get_size()))
            return Gst.PadProbeReturn.OK

        def on_ts(pad, info):
            if not rec["ts_bytes"]:
                # a receiver's deadlines may count from here, the bench's
                # from the first whole frame
                rec["first_ts_at"] = time.monotonic()
            rec["ts_bytes"] += info.get_buffer().get_size()
            return Gst.PadProbeReturn.OK
        pipe.get_by_name("sink").get_static_pad("sink").add_probe(
            Gst.PadProbeType.BUFFER, on_frame)
        pipe.get_by_name("demux").get_static_pad("sink").add_probe(
            Gst.PadProbeType.BUFFER, on_ts)
        # TS bytes over time: compare.py takes its steady span from it
        rec["ts_series"] = []

        # and, for multitcp, when its source gave up on or dropped buffers
        rec["src_series"] = []
        src = pipe.get_by_name("src")

        def sample_ts():
            now = time.monotonic()
            rec["ts_series"].append((now, rec["ts_bytes"]))
            if system.startswith("multitcp"):
                st = src.get_property("stats")
                rec["src_series"].append((now, st.get_value("buffers-skipped"),
                                          st.get_value("buffers-late"),
                                          st.get_value("drift-correction")))
            return True
        GLib.timeout_add(250, sample_ts)

    loop = GLib.MainLoop()

    def on_message(bus, msg):
        if msg.type == Gst.MessageType.ERROR:
            rec["error"] = msg.parse_error()[0].message
            loop.quit()
        elif msg.type == Gst.MessageType.EOS:
            loop.quit()
        return True
    bus = pipe.get_bus()
    bus.add_signal_watch()
    bus.connect("message", on_message)
    if role == "send":
        # each frame the muxer gets: the receiver's must match it byte-count
        # for byte-count, or it was damaged on the way
        rec["frames_sent"] = []
        # when each left the encoder: both ends run on this machine's
        # monotonic clock, so arrival - this is the frame's whole delay
        rec["frames_sent_at"] = []
        # the keyframes' PTS: a frame after a missing one of its GOP
        # cannot be decoded, however whole it arrives
        rec["frames_key"] = []

        def on_sent(pad, info):
            buf = info.get_buffer()
            rec["frames_sent"].append((buf.pts, buf.get_size()))
            rec["frames_sent_at"].append(time.monotonic())
            if not buf.has_flags(Gst.BufferFlags.DELTA_UNIT):
                rec["frames_key"].append(buf.pts)
            return Gst.PadProbeReturn.OK
        pipe.get_by_name("vparse").get_static_pad("src").add_probe(
            Gst.PadProbeType.BUFFER, on_sent)
    if role == "send" and system.startswith("multitcp"):
        # the sink's view of each session, once a second
        rec["sink"] = []

        def sample_sink():
            stats = pipe.get_by_name("mtcpsink").get_property("stats")
            for s in stats.get_value("sessions") or []:
                rec["sink"].append({k: s.get_value(k) for k in (
                    "receiver-highest-seq", "buffers-sent", "frames-hedged",
                    "frames-copied", "bytes-copied", "frames-resent",
                    "skips", "n-connections")})
            return True
        GLib.timeout_add(1000, sample_sink)
        # the estimate and the encoder's bitrate over time (issue 24's plots)
        rec["rates"] = []
        enc = pipe.get_by_name("enc")

        def sample_rates():
            st = pipe.get_by_name("mtcpsink").get_property("stats")
            rec["rates"].append((time.monotonic(),
                                 st.get_value("estimated-bitrate") or 0,
                                 enc.get_property("bitrate") * 1000,
                                 st.get_value("stream-bitrate") or 0))
            return True
        GLib.timeout_add(250, sample_rates)
        # a calling sink's uplinks: each one's bytes over time
        rec["path_series"] = []

        def sample_paths():
            st = pipe.get_by_name("mtcpsink").get_property("stats")
            paths = st.get_value("paths") if st.has_field("paths") else None
            if paths:
                rec["path_series"].append(
                    (time.monotonic(), [p.get_value("bytes-sent")
                                        for p in paths],
                     [p.get_value("state") for p in paths]))
            return True
        GLib.timeout_add(250, sample_paths)
    pipe.set_state(Gst.State.PLAYING)
    GLib.timeout_add(int(seconds * 1000), loop.quit)
    loop.run()
    if role == "recv":
        # frames due after this were not waited for
        rec["end_at"] = time.monotonic()
    if role == "recv" and system.startswith("multitcp"):
        stats = pipe.get_by_name("src").get_property("stats")
        rec["stats"] = {k: stats.get_value(k) for k in (
            "buffers-late", "buffers-skipped", "buffers-duplicate",
            "n-connections") if stats.has_field(k)}
    pipe.set_state(Gst.State.NULL)
    rec["cpu_s"] = time.process_time()
    with open(out, "w") as f:
        json.dump(rec, f)


if __name__ == "__main__":
    main()

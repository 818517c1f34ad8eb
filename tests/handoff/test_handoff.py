#!/usr/bin/python3
# multitcp — Copyright (C) 2026 the multitcp authors
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The hand-off to distribution (issue 29), with real parts on loopback: a
camera (x264enc ! multitcpsink mode=caller) dials the ingest of
examples/ingest/ingest.py (multitcpsrc mode=listener ! flvmux !
rtmp2sink into Debian's nginx with libnginx-mod-rtmp, and srtsink), nginx
serves HLS; the HLS playlist lists segments that decode, and an SRT
client decodes the same stream. Skipped (77) without nginx's RTMP
module."""
import os
import socket
import subprocess
import sys
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(TOP, "examples", "ingest"))
import ingest  # noqa: E402

if not os.path.exists(ingest.MODULE) or not os.path.exists(ingest.NGINX):
    print("SKIP: nginx with libnginx-mod-rtmp is not installed "
          "(scripts/install-deps.sh installs it)")
    sys.exit(77)

import gi  # noqa: E402
gi.require_version("Gst", "1.0")
from gi.repository import Gst  # noqa: E402

Gst.init(None)
failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what, flush=True)
    if not ok:
        failures.append(what)


def free_port(kind=socket.SOCK_STREAM):
    s = socket.socket(socket.AF_INET, kind)
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def decode_count(desc, seconds):
    """buffers reaching the fakesink named sink within @seconds (or EOS)"""
    pipe = Gst.parse_launch(desc)
    sink = pipe.get_by_name("sink")
    n = [0]
    sink.set_property("signal-handoffs", True)
    sink.connect("handoff", lambda *a: n.__setitem__(0, n[0] + 1))
    pipe.set_state(Gst.State.PLAYING)
    pipe.get_bus().timed_pop_filtered(
        int(seconds * Gst.SECOND), Gst.MessageType.EOS |
        Gst.MessageType.ERROR)
    pipe.set_state(Gst.State.NULL)
    return n[0]


port, rtmp, http = free_port(), free_port(), free_port()
srt = free_port(socket.SOCK_DGRAM)
point = ingest.Ingest(port, rtmp, http, srt_port=srt)
camera = None
try:
    point.start_nginx()
    point.start_pipeline()
    camera = subprocess.Popen(
        ["gst-launch-1.0", "-q", "videotestsrc", "is-live=true",
         "num-buffers=450", "!",
         "video/x-raw,format=I420,width=320,height=240,framerate=30/1", "!",
         "x264enc",
         "tune=zerolatency", "key-int-max=30", "bitrate=800",
         "speed-preset=ultrafast", "!", "h264parse", "config-interval=-1",
         "!", "multitcpsink", "mode=caller", "host=127.0.0.1",
         f"port={port}"], stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL)
    time.sleep(3)
    # an SRT-speaking server's view of the same stream
    frames = decode_count(
        f"srtsrc uri=srt://127.0.0.1:{srt} ! tsdemux ! h264parse ! "
        "avdec_h264 ! fakesink name=sink sync=false", 4)
    check(frames >= 30, f"an SRT client decodes the ingest's stream "
          f"({frames} frames in 4 s)")
    time.sleep(2)
    playlist = ""
    try:
        playlist = urllib.request.urlopen(point.playlist_url,
                                          timeout=5).read().decode()
    except OSError as e:
        playlist = f"({e})"
    segments = [line for line in playlist.splitlines()
                if line.endswith(".ts")]
    check(len(segments) >= 2, f"nginx's HLS playlist lists segments "
          f"({len(segments)}: {point.playlist_url})")
    if segments:
        base = point.playlist_url.rsplit("/", 1)[0]
        frames = decode_count(
            f"souphttpsrc location={base}/{segments[0]} ! tsdemux ! "
            "h264parse ! avdec_h264 ! fakesink name=sink sync=false", 10)
        check(frames >= 15, f"its first segment decodes ({frames} frames)")
    stats = point.pipeline.get_by_name("src").get_property("stats")
    check(stats.get_value("buffers-pushed") > 100,
          f"the ingest took the camera's stream over multitcp "
          f"({stats.get_value('buffers-pushed')} buffers)")
finally:
    if camera:
        camera.kill()
        camera.wait()
    point.stop()
print(f"{len(failures)} failed")
sys.exit(1 if failures else 0)

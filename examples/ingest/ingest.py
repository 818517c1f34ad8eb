#!/usr/bin/python3
# multitcp — Copyright (C) 2026 the multitcp authors
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The hand-off from multitcp to distribution: an ingest point where
cameras dial in with multitcp, and media servers take it from there.

    ingest.py [--port 5600] [--rtmp-port 1935] [--http-port 8080]
              [--srt-port 0] [--seconds N]

- starts nginx (Debian's, with libnginx-mod-rtmp) from
  examples/ingest/nginx-rtmp.conf.in in a temporary folder: RTMP in, HLS
  out at http://127.0.0.1:HTTP_PORT/hls/cam.m3u8;
- listens for a camera (multitcpsrc mode=listener on --port) and remuxes
  its H.264 into FLV to nginx over RTMP (flvmux ! rtmp2sink), no
  re-encoding;
- with --srt-port, also serves the same stream as MPEG-TS over SRT
  (srtsink mode=listener) for SRT-speaking media servers.

A camera, for instance:

    gst-launch-1.0 videotestsrc is-live=true ! video/x-raw,format=I420 ! \\
        x264enc tune=zerolatency \\
        key-int-max=30 ! h264parse config-interval=-1 ! \\
        multitcpsink mode=caller host=INGEST port=5600
"""
import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
NGINX = shutil.which("nginx") or "/usr/sbin/nginx"
MODULE = "/usr/lib/nginx/modules/ngx_rtmp_module.so"


class Ingest:
    def __init__(self, port, rtmp_port, http_port, srt_port=0,
                 latency_ms=500):
        self.port, self.rtmp_port, self.http_port = port, rtmp_port, http_port
        self.srt_port = srt_port
        self.latency_ms = latency_ms
        self.dir = tempfile.mkdtemp(prefix="mtcp-ingest-")
        self.nginx = None
        self.pipeline = None

    def start_nginx(self):
        os.makedirs(os.path.join(self.dir, "hls"))
        conf = open(os.path.join(HERE, "nginx-rtmp.conf.in")).read()
        conf = conf.replace("@DIR@", self.dir).replace(
            "@RTMP_PORT@", str(self.rtmp_port)).replace(
            "@HTTP_PORT@", str(self.http_port))
        path = os.path.join(self.dir, "nginx.conf")
        with open(path, "w") as f:
            f.write(conf)
        self.nginx = subprocess.Popen(
            [NGINX, "-p", self.dir, "-e",
             os.path.join(self.dir, "error.log"), "-c", path],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        time.sleep(0.5)
        if self.nginx.poll() is not None:
            raise RuntimeError("nginx did not start: " +
                               self.nginx.stderr.read().decode())

    def start_pipeline(self):
        import gi
        gi.require_version("Gst", "1.0")
        from gi.repository import Gst
        Gst.init(None)
        desc = (f"multitcpsrc name=src mode=listener host=0.0.0.0 "
                f"port={self.port} latency={self.latency_ms} "
                "keep-listening=true ! tee name=t "
                # a parser a branch: FLV wants avc, MPEG-TS byte-stream
                "t. ! queue ! h264parse ! flvmux streamable=true ! "
                f"rtmp2sink location=rtmp://127.0.0.1:{self.rtmp_port}/"
                "live/cam")
        if self.srt_port:
            desc += (" t. ! queue ! h264parse config-interval=-1 ! "
                     "mpegtsmux alignment=7 ! srtsink "
                     f"uri=srt://:{self.srt_port} wait-for-connection=false")
        self.pipeline = Gst.parse_launch(desc)
        self.pipeline.set_state(Gst.State.PLAYING)
        return self.pipeline

    @property
    def playlist_url(self):
        return f"http://127.0.0.1:{self.http_port}/hls/cam.m3u8"

    def stop(self):
        if self.pipeline:
            from gi.repository import Gst
            self.pipeline.set_state(Gst.State.NULL)
        if self.nginx and self.nginx.poll() is None:
            self.nginx.terminate()
            try:
                self.nginx.wait(5)
            except subprocess.TimeoutExpired:
                self.nginx.kill()
        shutil.rmtree(self.dir, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, default=5600)
    ap.add_argument("--rtmp-port", type=int, default=1935)
    ap.add_argument("--http-port", type=int, default=8080)
    ap.add_argument("--srt-port", type=int, default=0)
    ap.add_argument("--seconds", type=float, default=0)
    args = ap.parse_args()
    if not os.path.exists(MODULE):
        print(f"{MODULE} is missing: apt install libnginx-mod-rtmp")
        return 1
    ingest = Ingest(args.port, args.rtmp_port, args.http_port,
                    args.srt_port)
    stop = []
    signal.signal(signal.SIGINT, lambda *a: stop.append(1))
    signal.signal(signal.SIGTERM, lambda *a: stop.append(1))
    try:
        ingest.start_nginx()
        ingest.start_pipeline()
        print(f"multitcp ingest on :{args.port}; HLS at "
              f"{ingest.playlist_url}" + (f"; SRT on :{args.srt_port}"
                                          if args.srt_port else ""),
              flush=True)
        t0 = time.monotonic()
        while not stop and (not args.seconds or
                            time.monotonic() - t0 < args.seconds):
            time.sleep(0.2)
    finally:
        ingest.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())

# multitcp — Copyright (C) 2026 the multitcp authors
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Shared helpers of the netsim tests: run a shell script under netsim and
get its output and netsim's JSON counters back."""
import json
import math
import os
import subprocess
import sys
import tempfile

SKIP = 77  # meson's "skipped"


def netsim_binary():
    return os.environ.get("NETSIM", os.path.join(os.path.dirname(__file__),
                                                 "netsim"))


def require_namespaces():
    """Exit 77 with the reason when this machine cannot run the tests."""
    if os.geteuid() != 0:
        print("SKIP: netsim needs root (network namespaces, TUN devices)")
        sys.exit(SKIP)
    if not os.path.exists("/dev/net/tun"):
        print("SKIP: /dev/net/tun is missing")
        sys.exit(SKIP)
    name = f"nsprobe{os.getpid()}"
    r = subprocess.run(["ip", "netns", "add", name], capture_output=True,
                       text=True)
    if r.returncode != 0:
        print(f"SKIP: cannot create a network namespace: {r.stderr.strip()}")
        sys.exit(SKIP)
    subprocess.run(["ip", "netns", "del", name])
    for tool in ("iperf3", "ping"):
        if subprocess.run(["sh", "-c", f"command -v {tool}"],
                          capture_output=True).returncode != 0:
            print(f"SKIP: {tool} is not installed "
                  "(scripts/install-deps.sh installs it)")
            sys.exit(SKIP)


def require_gst(elements, what, plugin_build=None):
    """Exit 77 naming what is missing when python3-gst-1.0, one of
    @elements or (with @plugin_build) the plugin built there is not here."""
    try:
        import gi
        gi.require_version("Gst", "1.0")
        from gi.repository import Gst
        Gst.init(None)
        missing = [e for e in elements if not Gst.ElementFactory.find(e)]
    except (ImportError, ValueError) as e:
        missing = [f"python3-gst-1.0 ({e})"]
    if plugin_build and not os.path.exists(
            os.path.join(plugin_build, "gst", "libgstmultitcp.so")):
        missing.append(f"the plugin in {plugin_build}/gst")
    if missing:
        print(f"SKIP: {what} needs {', '.join(missing)}")
        sys.exit(SKIP)


def run(links, script, cc=None, schedule=None, timeout=300, seed=1,
        extra_args=(), allow_invalid=False):
    """Run @script (bash) under netsim; returns (stdout, stats dict).
    A run with TUN ring drops raises unless @allow_invalid."""
    with tempfile.TemporaryDirectory() as tmp:
        stats_path = os.path.join(tmp, "stats.json")
        cmd = [netsim_binary(), "--stats", stats_path, "--seed", str(seed)]
        for link in links:
            cmd += ["--link", link]
        if cc:
            cmd += ["--cc", cc]
        if schedule:
            path = os.path.join(tmp, "schedule")
            with open(path, "w") as f:
                f.write(schedule)
            cmd += ["--schedule", path]
        cmd += list(extra_args) + ["--", "bash", "-c", script]
        r = subprocess.run(cmd, capture_output=True, text=True,
                           timeout=timeout)
        sys.stderr.write(r.stderr)
        if not os.path.exists(stats_path):
            raise AssertionError(f"netsim failed ({r.returncode}) before "
                                 f"writing its counters:\n{r.stderr}")
        with open(stats_path) as f:
            stats = json.load(f)
        # the lines SIGUSR1 (kill -USR1 $PPID from the script) appended
        stats["marks"] = []
        if os.path.exists(stats_path + ".marks"):
            with open(stats_path + ".marks") as f:
                stats["marks"] = [json.loads(line) for line in f]
    if not stats["valid"] and not allow_invalid:
        raise AssertionError("invalid run: packets dropped by a TUN ring")
    if stats["exit_status"] != 0:
        raise AssertionError(f"script failed ({stats['exit_status']}):\n"
                             f"{r.stdout}\n{r.stderr}")
    return r.stdout, stats


IPERF_SERVER = ("ip netns exec $NETSIM_NS_B iperf3 -s -1 -D -B $NETSIM_ADDR_B "
                "--logfile /dev/null; sleep 0.3; ")


def sender_then_receiver(build, sender, receiver, out, seconds):
    """A script for run(): prints "start" and CLOCK_MONOTONIC, then the
    @sender pipeline (sender_log.py, to @out/sender.jsonl) in namespace A
    for @seconds and a second later the @receiver (receiver_log.py, to
    @out/receiver.csv) in B for @seconds - 2; both with @build's plugin."""
    here = os.path.dirname(os.path.abspath(__file__))
    env = f"GST_PLUGIN_PATH={build}/gst"
    return (
        f"/usr/bin/python3 -c 'import time; print(\"start\", time.monotonic())'; "
        f"ip netns exec $NETSIM_NS_A env {env} /usr/bin/python3 "
        f"{here}/sender_log.py \"{sender}\" {out}/sender.jsonl {seconds} & "
        f"sleep 1; ip netns exec $NETSIM_NS_B env {env} /usr/bin/python3 "
        f"{here}/receiver_log.py \"{receiver}\" {out}/receiver.csv "
        f"{seconds - 2}; wait")


def iperf_json(out):
    """The JSON document iperf3 --json printed."""
    start = out.index("{")
    return json.loads(out[start:out.rindex("}") + 1])


def binomial_interval(n, p, z=3.29):
    """Normal-approximation interval for the count of n Bernoulli(p) draws."""
    sd = math.sqrt(n * p * (1 - p))
    return n * p - z * sd, n * p + z * sd


class Failures:
    def __init__(self):
        self.items = []

    def check(self, ok, what):
        print(("ok   " if ok else "FAIL ") + what, flush=True)
        if not ok:
            self.items.append(what)

    def exit(self):
        print(f"{sum(1 for _ in self.items)} failed")
        sys.exit(1 if self.items else 0)

# multitcp — Copyright (C) 2026 the multitcp authors
# SPDX-License-Identifier: LGPL-2.1-or-later
"""A real HTTP server for multitcphttpsrc's tests and benchmarks: Debian's
nginx, started on free loopback ports with a configuration made here (one
process, no daemon, everything under one temporary folder), and a proxy
that cuts a chosen response mid-body.

    with Nginx(root) as web:
        web.url("/file.bin")           http://127.0.0.1:PORT/file.bin
        web.url("/file.bin", tls=True) https://127.0.0.1:TLSPORT/file.bin
        web.requests()                 the access log, parsed

Locations: /norange/ answers every Range with 200 (max_ranges 0),
/moved answers 302 to /data/file.bin, /slow/ sends at 2 Mbit/s a
connection, /refused/ and /busy/ answer a HEAD but every range request
with 403 and 503.
"""

import os
import re
import shutil
import socket
import subprocess
import tempfile
import threading
import time

NGINX = shutil.which("nginx") or "/usr/sbin/nginx"

CONF = """
worker_processes 1;
master_process off;
daemon off;
pid {dir}/nginx.pid;
error_log {dir}/error.log info;
events {{ worker_connections 512; }}
http {{
  log_format ranges '$remote_addr "$request" $status $body_bytes_sent '
                    '"$http_range" "$http_user_agent" $connection';
  access_log {dir}/access.log ranges;
  client_body_temp_path {dir}/tmp-body;
  proxy_temp_path {dir}/tmp-proxy;
  fastcgi_temp_path {dir}/tmp-fastcgi;
  uwsgi_temp_path {dir}/tmp-uwsgi;
  scgi_temp_path {dir}/tmp-scgi;
  types {{
    video/mp4 mp4;
    application/vnd.apple.mpegurl m3u8;
    video/mp2t ts;
  }}
  default_type application/octet-stream;
  keepalive_requests 10000;
  server {{
    listen {host}:{port};
    {tls}
    root {root};
    location /norange/ {{ max_ranges 0; }}
    location = /moved {{ return 302 /data/file.bin; }}
    location /slow/ {{ limit_rate 256k; }}
    location /refused/ {{ if ($http_range) {{ return 403; }} }}
    location /busy/ {{ if ($http_range) {{ return 503; }} }}
  }}
}}
"""


def free_port(host="127.0.0.1"):
    s = socket.socket()
    s.bind((host, 0))
    port = s.getsockname()[1]
    s.close()
    return port


def make_certificate(folder):
    """A self-signed certificate for 127.0.0.1 (openssl), its paths."""
    crt = os.path.join(folder, "server.crt")
    key = os.path.join(folder, "server.key")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048",
                    "-nodes", "-keyout", key, "-out", crt, "-days", "2",
                    "-subj", "/CN=127.0.0.1",
                    "-addext", "subjectAltName=IP:127.0.0.1"],
                   check=True, capture_output=True)
    return crt, key


class Nginx:
    def __init__(self, root, host="127.0.0.1", tls=True, prefix=None,
                 port=None):
        """@prefix: a command nginx runs under (["ip", "netns", "exec",
        NS] for a namespace's address, then give @port: free_port binds
        here)."""
        self.root = os.path.abspath(root)
        self.host = host
        self.dir = tempfile.mkdtemp(prefix="mtcp-nginx-")
        self.port = port or free_port(host)
        self.tls_port = free_port(host) if tls else None
        self.proc = None
        self.prefix = prefix or []
        tls_conf = ""
        if tls:
            self.cert, key = make_certificate(self.dir)
            tls_conf = (f"listen {host}:{self.tls_port} ssl; "
                        f"ssl_certificate {self.cert}; "
                        f"ssl_certificate_key {key};")
        with open(os.path.join(self.dir, "nginx.conf"), "w") as f:
            f.write(CONF.format(dir=self.dir, host=host, port=self.port,
                                root=self.root, tls=tls_conf))

    def start(self):
        self.proc = subprocess.Popen(
            self.prefix + [NGINX, "-p", self.dir, "-e",
                           os.path.join(self.dir, "error.log"),
                           "-c", os.path.join(self.dir, "nginx.conf")],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.time() + 10
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError("nginx did not start: " +
                                   self.proc.stderr.read().decode())
            try:
                socket.create_connection((self.host, self.port), 0.2).close()
                return self
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("nginx did not listen within 10 s")

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    def url(self, path, tls=False, port=None):
        if tls:
            return f"https://{self.host}:{self.tls_port}{path}"
        return f"http://{self.host}:{port or self.port}{path}"

    LINE = re.compile(r'(\S+) "(\S+) (\S+) [^"]*" (\d+) (\d+) "([^"]*)" '
                      r'"([^"]*)" (\d+)')

    def requests(self):
        """The access log: dicts of method, path, status, bytes, range,
        agent, connection (nginx's connection serial number)."""
        out = []
        try:
            lines = open(os.path.join(self.dir, "access.log")).readlines()
        except FileNotFoundError:
            return out
        for line in lines:
            m = self.LINE.match(line)
            if m:
                out.append({"method": m.group(2), "path": m.group(3),
                            "status": int(m.group(4)),
                            "bytes": int(m.group(5)),
                            "range": m.group(6), "agent": m.group(7),
                            "connection": int(m.group(8))})
        return out

    def clear_log(self):
        open(os.path.join(self.dir, "access.log"), "w").close()


class CuttingProxy:
    """Forwards loopback connections to (host, port); the first response to
    a request whose Range starts at `cut_range_first` is cut (both sides
    closed) after `cut_after` bytes of it went to the client."""

    def __init__(self, host, port, cut_range_first, cut_after):
        self.upstream = (host, port)
        self.cut_first = cut_range_first
        self.cut_after = cut_after
        self.cuts = 0
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(32)
        self.port = self.sock.getsockname()[1]
        self.lock = threading.Lock()
        self.closing = False
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while not self.closing:
            try:
                client, _ = self.sock.accept()
            except OSError:
                return
            up = socket.create_connection(self.upstream)
            state = {"cut": False, "sent": 0}
            threading.Thread(target=self._up, args=(client, up, state),
                             daemon=True).start()
            threading.Thread(target=self._down, args=(client, up, state),
                             daemon=True).start()

    def _up(self, client, up, state):
        pattern = f"range: bytes={self.cut_first}-".encode()
        try:
            while True:
                data = client.recv(65536)
                if not data:
                    break
                with self.lock:
                    if self.cuts == 0 and pattern in data.lower():
                        self.cuts = 1
                        state["cut"] = True
                        state["sent"] = 0
                up.sendall(data)
        except OSError:
            pass
        self._close(client, up)

    def _down(self, client, up, state):
        try:
            while True:
                data = up.recv(16384)
                if not data:
                    break
                if state["cut"]:
                    room = self.cut_after - state["sent"]
                    if len(data) >= room:
                        client.sendall(data[:room])
                        break
                    state["sent"] += len(data)
                client.sendall(data)
        except OSError:
            pass
        self._close(client, up)

    @staticmethod
    def _close(a, b):
        for s in (a, b):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            s.close()

    def close(self):
        self.closing = True
        self.sock.close()

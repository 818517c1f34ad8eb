#!/usr/bin/env bash
# multitcp — Copyright (C) 2026 the multitcp authors
# SPDX-License-Identifier: LGPL-2.1-or-later
# Demo: a live test pattern, H.264-encoded, over 5 TCP connections on
# loopback for 10 seconds; prints the receiver's stats once a second.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
[ -f build/build.ninja ] || meson setup build
ninja -C build
export GST_PLUGIN_PATH=$PWD/build/gst
exec /usr/bin/python3 examples/demo.py "$@"

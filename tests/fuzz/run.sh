#!/usr/bin/env bash
# multitcp — Copyright (C) 2026 the multitcp authors
# SPDX-License-Identifier: LGPL-2.1-or-later
# Builds the frame-parser fuzz target with clang's libFuzzer, ASan and UBSan
# and runs it for a bounded time (default 60 s) from the seed corpus.
#   [FUZZ_SEED=N] tests/fuzz/run.sh [SECONDS]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
seconds=${1:-60}
out=${FUZZ_OUT:-$top/build-fuzz}
mkdir -p "$out/corpus"
if ! command -v clang >/dev/null; then
  echo "SKIP: clang is not installed (scripts/install-deps.sh installs it)"; exit 77
fi
/usr/bin/python3 "$here/make_corpus.py"
clang -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
  -I"$top/gst" "$here/fuzz_frames.c" "$top/gst/mtcpprotocol.c" \
  "$top/gst/mtcpreorder.c" "$top/gst/mtcpskew.c" \
  $(pkg-config --cflags --libs gstreamer-1.0) -lm -o "$out/fuzz_frames"
cp -n "$here"/corpus/* "$out/corpus/" 2>/dev/null || true
export ASAN_OPTIONS="detect_leaks=1:fast_unwind_on_malloc=0"
export LSAN_OPTIONS="suppressions=$top/tests/lsan.supp:print_suppressions=0"
# a run is repeated with FUZZ_SEED (and a crash from the file it names)
seed=${FUZZ_SEED:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}
echo "fuzz_frames: seed $seed (FUZZ_SEED=$seed repeats this run)"
"$out/fuzz_frames" -seed="$seed" -max_total_time="$seconds" -max_len=4096 \
  -timeout=10 -artifact_prefix="$out/" -print_final_stats=1 "$out/corpus" \
  2>&1 | tail -n 15
echo "fuzz_frames: ${seconds} s without a crash, leak or sanitizer report"

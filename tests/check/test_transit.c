/* multitcp
 * Copyright (C) 2026 the multitcp authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
/* A frame's transit on one connection (gst/mtcptransit.c), from TCP_INFO
 * snapshots of the cellular runs: the smoothed RTT while no queue stands,
 * what is in flight at the acknowledged rate once one does; and the
 * deadline gate's margin. */
#include <gst/check/gstcheck.h>

#include "mtcptransit.h"

#define MSS 1448
#define MS G_TIME_SPAN_MILLISECOND

static MtcpTcpInfo
info_of (guint32 srtt_us, guint32 min_rtt_us, guint32 unacked,
    guint32 cwnd, guint64 delivery_rate)
{
  MtcpTcpInfo info;

  memset (&info, 0, sizeof (info));
  info.rtt_us = srtt_us;
  info.min_rtt_us = min_rtt_us;
  info.unacked = unacked;
  info.snd_cwnd = cwnd;
  info.snd_mss = MSS;
  info.delivery_rate = delivery_rate;
  return info;
}

GST_START_TEST (test_idle_socket_counts_only_what_waits)
{
  /* nothing in flight: only the unsent bytes, at the window's rate */
  MtcpTcpInfo info = info_of (50 * MS, 48 * MS, 0, 10, 0);
  guint64 window = (guint64) 10 * MSS * G_USEC_PER_SEC / (50 * MS);

  fail_unless_equals_int64 (mtcp_transit_us (&info, 0, 0, 0), 0);
  fail_unless_equals_int64 (mtcp_transit_us (&info, 14480, 0, 0),
      (gint64) ((guint64) 14480 * G_USEC_PER_SEC / window));
  /* a stale RTT with nothing in flight does not hold frames back */
  info.rtt_us = 900 * MS;
  fail_unless_equals_int64 (mtcp_transit_us (&info, 0, 50000, 0), 0);
}

GST_END_TEST;

GST_START_TEST (test_no_standing_queue_counts_the_rtt)
{
  /* a fast path, a keyframe just written: the RTT is near its least, so
   * the flight drains at the path's rate, not at the last span's (which
   * the stream held down) */
  MtcpTcpInfo info = info_of (60 * MS, 48 * MS, 40, 64, 1000000);

  fail_unless_equals_int64 (mtcp_transit_us (&info, 0, 125000, 0), 12 * MS);
}

GST_END_TEST;

GST_START_TEST (test_slowed_path_counts_the_flight)
{
  /* seed 1 at 35 s: bbr keeps 68 segments in flight on a path that now
   * acknowledges 61 kB/s; the smoothed RTT says 0.47 s of queue, the
   * flight 1.8 s. The frame written now waits for the flight. */
  MtcpTcpInfo info = info_of (516 * MS, 48 * MS, 68, 68, 61034);
  guint64 drain = 61034;
  guint64 ahead = 68 * MSS + 14001 - drain * 48 * MS / G_USEC_PER_SEC;
  gint64 t = mtcp_transit_us (&info, 14001, drain, 0);

  fail_unless_equals_int64 (t, (gint64) (ahead * G_USEC_PER_SEC / drain));
  fail_unless (t > 1700 * MS, "transit %" G_GINT64_FORMAT, t);
  /* the drain rate not known yet: the RTT alone, as before */
  t = mtcp_transit_us (&info, 14001, 0, 0);
  fail_unless (t < 600 * MS, "transit %" G_GINT64_FORMAT, t);
}

GST_END_TEST;

GST_START_TEST (test_after_silence_the_flight_still_counts)
{
  /* heard again after a 4 s outage: the smoothed RTT (3 s) is the
   * outage's and is capped at what it was before (165 ms), but the 64
   * segments still in flight drain at the 50 kB/s the path gives now */
  MtcpTcpInfo info = info_of (2972 * MS, 48 * MS, 64, 64, 394417);
  gint64 capped = mtcp_transit_us (&info, 0, 0, 165 * MS);
  gint64 drained = mtcp_transit_us (&info, 0, 50000, 165 * MS);

  fail_unless_equals_int64 (capped, 117 * MS);
  fail_unless (drained > 1800 * MS, "transit %" G_GINT64_FORMAT, drained);
}

GST_END_TEST;

GST_START_TEST (test_drain_rate_spans)
{
  MtcpDrainRate d = { 0, };
  gint64 now = 1000 * G_USEC_PER_SEC;
  guint64 acked = 1000000;
  guint i;

  mtcp_drain_rate_note (&d, now, acked, TRUE, FALSE, 0);
  fail_unless_equals_uint64 (d.bytes_per_s, 0);
  /* 5 kB every 100 ms: 50 kB/s once a span is over */
  for (i = 0; i < 2; i++) {
    now += 100 * MS;
    acked += 5000;
    mtcp_drain_rate_note (&d, now, acked, TRUE, FALSE, 0);
  }
  fail_unless_equals_uint64 (d.bytes_per_s, 0);
  now += 100 * MS;
  acked += 5000;
  mtcp_drain_rate_note (&d, now, acked, TRUE, FALSE, 0);
  fail_unless_equals_uint64 (d.bytes_per_s, 50000);
  /* a dark span is a pause, not a rate */
  now += 300 * MS;
  mtcp_drain_rate_note (&d, now, acked, TRUE, FALSE, 0);
  fail_unless_equals_uint64 (d.bytes_per_s, 50000);
  /* the path slowed: 1 kB every 100 ms */
  for (i = 0; i < 3; i++) {
    now += 100 * MS;
    acked += 1000;
    mtcp_drain_rate_note (&d, now, acked, TRUE, FALSE, 0);
  }
  fail_unless_equals_uint64 (d.bytes_per_s, 10000);
  /* heard again after a silence: unknown until a span is over */
  mtcp_drain_rate_restart (&d, now, acked, 0);
  fail_unless_equals_uint64 (d.bytes_per_s, 0);
  now += 300 * MS;
  acked += 30000;
  mtcp_drain_rate_note (&d, now, acked, TRUE, FALSE, 0);
  fail_unless_equals_uint64 (d.bytes_per_s, 100000);
  /* a counter that went back starts a new span */
  mtcp_drain_rate_note (&d, now + 300 * MS, 10, TRUE, FALSE, 0);
  fail_unless_equals_uint64 (d.bytes_per_s, 100000);
  fail_unless_equals_uint64 (d.acked_at_start, 10);
}

GST_END_TEST;

GST_START_TEST (test_a_keyframe_after_idle_is_not_what_it_can_deliver)
{
  /* a 0.6 Mbit/s stream (75 kB/s) whose keyframe waits unsent for 130 ms
   * of a 250 ms span: what that span acknowledged is the stream's rate,
   * not what the connection could deliver; a span with data unsent at
   * every note (a receiver that reads slowly) is */
  MtcpDrainRate d = { 0, };
  gint64 now = 1000 * G_USEC_PER_SEC;

  mtcp_drain_rate_note (&d, now, 0, FALSE, FALSE, 0);
  mtcp_drain_rate_note (&d, now + 120 * MS, 9000, FALSE, TRUE, 0);
  mtcp_drain_rate_note (&d, now + 250 * MS, 18750, FALSE, TRUE, 0);
  fail_unless_equals_uint64 (d.bytes_per_s, 75000);
  fail_unless_equals_uint64 (mtcp_drain_rate_of_backlog (&d), 0);
  mtcp_drain_rate_note (&d, now + 370 * MS, 22750, FALSE, TRUE, 0);
  mtcp_drain_rate_note (&d, now + 500 * MS, 26750, FALSE, TRUE, 0);
  fail_unless_equals_uint64 (d.bytes_per_s, 32000);
  fail_unless_equals_uint64 (mtcp_drain_rate_of_backlog (&d), 32000);
  /* a span idle at one note in its middle is not backlogged all through */
  mtcp_drain_rate_note (&d, now + 620 * MS, 30750, FALSE, FALSE, 0);
  mtcp_drain_rate_note (&d, now + 750 * MS, 34750, FALSE, TRUE, 0);
  fail_unless_equals_uint64 (d.bytes_per_s, 32000);
  fail_unless_equals_uint64 (mtcp_drain_rate_of_backlog (&d), 0);
  /* heard again after a silence: not known until a backlogged span */
  mtcp_drain_rate_restart (&d, now + 750 * MS, 34750, 0);
  fail_unless_equals_uint64 (mtcp_drain_rate_of_backlog (&d), 0);
}

GST_END_TEST;

GST_START_TEST (test_a_slow_readers_rate_is_known)
{
  /* 30 kB/s (a reader of 0.24 Mbit/s) while its window held the sender
   * back for 200 of 250 ms: what the receiver takes; a span it held the
   * sender back for less than half of is not */
  MtcpDrainRate d = { 0, };
  gint64 now = 1000 * G_USEC_PER_SEC;

  mtcp_drain_rate_note (&d, now, 0, FALSE, TRUE, 5000000);
  fail_unless_equals_uint64 (mtcp_drain_rate_of_receiver (&d), 0);
  mtcp_drain_rate_note (&d, now + 120 * MS, 3600, FALSE, TRUE, 5100000);
  mtcp_drain_rate_note (&d, now + 250 * MS, 7500, FALSE, TRUE, 5200000);
  fail_unless_equals_uint64 (mtcp_drain_rate_of_receiver (&d), 30000);
  /* idle at the next note: the rate is still the last span's */
  mtcp_drain_rate_note (&d, now + 370 * MS, 10000, FALSE, FALSE, 5230000);
  fail_unless_equals_uint64 (mtcp_drain_rate_of_receiver (&d), 30000);
  /* held back 50 of 250 ms (a keyframe's burst into a fast reader) */
  mtcp_drain_rate_note (&d, now + 500 * MS, 60000, FALSE, TRUE, 5250000);
  fail_unless_equals_uint64 (mtcp_drain_rate_of_receiver (&d), 0);
  fail_unless_equals_uint64 (d.bytes_per_s, 210000);
  /* 150 of 250 ms: half or more */
  mtcp_drain_rate_note (&d, now + 750 * MS, 67500, FALSE, TRUE, 5400000);
  fail_unless_equals_uint64 (mtcp_drain_rate_of_receiver (&d), 30000);
  /* a span without ACKs that it did not hold back: no longer slow (the
   * rate stays, a pause is not a rate) */
  mtcp_drain_rate_note (&d, now + 1000 * MS, 67500, FALSE, FALSE, 5400000);
  fail_unless_equals_uint64 (mtcp_drain_rate_of_receiver (&d), 0);
  fail_unless_equals_uint64 (d.bytes_per_s, 30000);
  /* a counter that went back (another socket) starts a new span */
  mtcp_drain_rate_note (&d, now + 1250 * MS, 70000, FALSE, TRUE, 0);
  mtcp_drain_rate_note (&d, now + 1500 * MS, 77500, FALSE, TRUE, 200000);
  fail_unless_equals_uint64 (mtcp_drain_rate_of_receiver (&d), 30000);
  /* heard again after a silence: not known until a span is over, and
   * that span counts from the restart's counter */
  mtcp_drain_rate_restart (&d, now + 1500 * MS, 77500, 900000);
  fail_unless_equals_uint64 (mtcp_drain_rate_of_receiver (&d), 0);
  mtcp_drain_rate_note (&d, now + 1750 * MS, 80000, FALSE, TRUE, 1000000);
  fail_unless_equals_uint64 (mtcp_drain_rate_of_receiver (&d), 0);
  mtcp_drain_rate_note (&d, now + 2000 * MS, 82500, FALSE, TRUE, 1200000);
  fail_unless_equals_uint64 (mtcp_drain_rate_of_receiver (&d), 10000);
}

GST_END_TEST;

/* What the path carried the last time it was the limit: kept through
 * spans the stream limited, however long (a loss-based window that grew
 * into the queue reads far more then); a restart after a silence forgets
 * it. */
GST_START_TEST (test_the_paths_last_rate_is_kept)
{
  MtcpDrainRate d = { 0, };
  gint64 now = 1000 * G_USEC_PER_SEC;

  mtcp_drain_rate_note (&d, now, 0, TRUE, FALSE, 0);
  fail_unless_equals_uint64 (mtcp_drain_rate_last_of_path (&d), 0);
  /* a queue stood all through: 250 kB/s */
  mtcp_drain_rate_note (&d, now + 250 * MS, 62500, TRUE, FALSE, 0);
  fail_unless_equals_uint64 (mtcp_drain_rate_last_of_path (&d), 250000);
  /* the stream's 100 kB/s, no queue, no backlog: not the path's */
  mtcp_drain_rate_note (&d, now + 500 * MS, 87500, FALSE, FALSE, 0);
  mtcp_drain_rate_note (&d, now + 750 * MS, 112500, FALSE, FALSE, 0);
  fail_unless_equals_uint64 (d.bytes_per_s, 100000);
  fail_unless_equals_uint64 (mtcp_drain_rate_last_of_path (&d), 250000);
  /* a queue for part of a span only (a keyframe's): not the path's */
  mtcp_drain_rate_note (&d, now + 875 * MS, 125000, TRUE, FALSE, 0);
  mtcp_drain_rate_note (&d, now + 1000 * MS, 150000, FALSE, TRUE, 0);
  fail_unless_equals_uint64 (mtcp_drain_rate_last_of_path (&d), 250000);
  /* unsent data all through the next: 200 kB/s, the path's now */
  mtcp_drain_rate_note (&d, now + 1250 * MS, 200000, FALSE, TRUE, 0);
  fail_unless_equals_uint64 (mtcp_drain_rate_last_of_path (&d), 200000);
  /* after a silence it is not known again until the path limits */
  mtcp_drain_rate_restart (&d, now + 3000 * MS, 200000, 0);
  fail_unless_equals_uint64 (mtcp_drain_rate_last_of_path (&d), 0);
  mtcp_drain_rate_note (&d, now + 3250 * MS, 225000, FALSE, FALSE, 0);
  fail_unless_equals_uint64 (mtcp_drain_rate_last_of_path (&d), 0);
  /* known again once the path limits; a counter that went back (another
   * socket) forgets it too */
  mtcp_drain_rate_note (&d, now + 3500 * MS, 250000, TRUE, FALSE, 0);
  mtcp_drain_rate_note (&d, now + 3750 * MS, 300000, TRUE, FALSE, 0);
  fail_unless_equals_uint64 (mtcp_drain_rate_last_of_path (&d), 200000);
  mtcp_drain_rate_note (&d, now + 4000 * MS, 1000, TRUE, FALSE, 0);
  fail_unless_equals_uint64 (mtcp_drain_rate_last_of_path (&d), 0);
}

GST_END_TEST;

/* After a burst (the start, a keyframe) a thin stream's few ACKs bring
 * the smoothed RTT down slowly: twice the least for a second while the
 * link idles. Only a backlog or a full window makes that the path's queue
 * (netsim-bitrate, stop 42: 18 kB/s recorded as the path's last on an
 * 8 Mbit/s link at 1.9 s, the smoothed RTT still 78-100 ms, nothing
 * unsent, the window far from full). */
GST_START_TEST (test_a_thin_streams_slow_rtt_is_not_the_paths_queue)
{
  MtcpTcpInfo thin = info_of (85 * MS, 40 * MS, 3, 60, 650000);
  MtcpTcpInfo full = info_of (85 * MS, 40 * MS, 60, 60, 650000);
  MtcpDrainRate d = { 0, };
  gint64 now = 1000 * G_USEC_PER_SEC;

  fail_unless (mtcp_transit_queue_stands (&thin));
  fail_if (mtcp_transit_path_queue_stands (&thin, FALSE));
  fail_unless (mtcp_transit_path_queue_stands (&thin, TRUE));
  fail_unless (mtcp_transit_path_queue_stands (&full, FALSE));
  /* no queue: neither a backlog nor a full window makes one */
  full.rtt_us = 50 * MS;
  fail_if (mtcp_transit_path_queue_stands (&full, TRUE));
  /* a span of the thin stream: its rate, not the path's */
  mtcp_drain_rate_note (&d, now, 0,
      mtcp_transit_path_queue_stands (&thin, FALSE), FALSE, 0);
  mtcp_drain_rate_note (&d, now + 125 * MS, 2000,
      mtcp_transit_path_queue_stands (&thin, FALSE), FALSE, 0);
  mtcp_drain_rate_note (&d, now + 250 * MS, 4500,
      mtcp_transit_path_queue_stands (&thin, FALSE), FALSE, 0);
  fail_unless_equals_uint64 (d.bytes_per_s, 18000);
  fail_unless_equals_uint64 (mtcp_drain_rate_last_of_path (&d), 0);
  fail_unless_equals_uint64 (mtcp_drain_rate_of_path (&d), 0);
}

GST_END_TEST;

GST_START_TEST (test_receiver_window_full)
{
  /* a slow reader: 4 kB advertised, 3 segments of 1448 in flight */
  MtcpTcpInfo info = info_of (60 * MS, 50 * MS, 3, 10, 100000);

  info.snd_mss = 1448;
  info.snd_wnd = 4096;
  info.snd_wnd_known = TRUE;
  fail_unless (mtcp_transit_receiver_window_full (&info));
  /* bbr's window is twice the path's, the receiver's larger still: a
   * keyframe's flight of 3 segments does not fill it */
  info.snd_wnd = 600000;
  fail_unless (!mtcp_transit_receiver_window_full (&info));
  /* a zero window: the reader's buffer is full */
  info.snd_wnd = 0;
  fail_unless (mtcp_transit_receiver_window_full (&info));
  /* a kernel that does not say: not the receiver */
  info.snd_wnd_known = FALSE;
  fail_unless (!mtcp_transit_receiver_window_full (&info));
}

GST_END_TEST;

GST_START_TEST (test_arrives_late_keeps_a_third_to_spare)
{
  MtcpTcpInfo slowed = info_of (516 * MS, 48 * MS, 68, 68, 61034);
  MtcpTcpInfo starting = info_of (230 * MS, 200 * MS, 10, 10, 0);

  fail_unless (mtcp_transit_queue_stands (&slowed));
  fail_unless (!mtcp_transit_queue_stands (&starting));
  starting.unacked = 0;
  starting.rtt_us = 900 * MS;
  fail_unless (!mtcp_transit_queue_stands (&starting));
  /* a queue stands, 1 s budget: 0.6 s of transit needs the frame no more
   * than 0.1 s behind; 0.7 s of transit is too much even on time */
  fail_unless (!mtcp_transit_arrives_late (0, 600 * MS, 1000 * MS, TRUE));
  fail_unless (!mtcp_transit_arrives_late (100 * MS, 600 * MS, 1000 * MS,
          TRUE));
  fail_unless (mtcp_transit_arrives_late (101 * MS, 600 * MS, 1000 * MS,
          TRUE));
  fail_unless (mtcp_transit_arrives_late (0, 700 * MS, 1000 * MS, TRUE));
  /* none (a new connection in slow start): the deadline itself */
  fail_unless (!mtcp_transit_arrives_late (300 * MS, 700 * MS, 1000 * MS,
          FALSE));
  fail_unless (mtcp_transit_arrives_late (301 * MS, 700 * MS, 1000 * MS,
          FALSE));
  /* nothing ahead: only the schedule counts */
  fail_unless (!mtcp_transit_arrives_late (1000 * MS, 0, 1000 * MS, TRUE));
  fail_unless (mtcp_transit_arrives_late (1001 * MS, 0, 1000 * MS, TRUE));
}

GST_END_TEST;

GST_START_TEST (test_a_keyframes_queue_is_not_the_paths_rate)
{
  /* the grid's 8 Mbit/s link under an 8 Mbit/s stream: a keyframe's
   * burst stands 100 kB in the queue, but the last span was half idle
   * (500 kB/s acknowledged, a queue at some notes only): that is the
   * stream's rate, not the path's, and the RTT's 130 ms stands */
  MtcpTcpInfo info = info_of (230 * MS, 100 * MS, 140, 200, 1000000);
  MtcpDrainRate d = { 0, };
  gint64 now = 1000 * G_USEC_PER_SEC;

  mtcp_drain_rate_note (&d, now, 0, FALSE, FALSE, 0);
  mtcp_drain_rate_note (&d, now + 100 * MS, 50000, TRUE, FALSE, 0);
  mtcp_drain_rate_note (&d, now + 250 * MS, 125000, TRUE, FALSE, 0);
  fail_unless_equals_uint64 (d.bytes_per_s, 500000);
  fail_unless_equals_uint64 (mtcp_drain_rate_of_path (&d), 0);
  fail_unless_equals_int64 (mtcp_transit_us (&info, 0,
          mtcp_drain_rate_of_path (&d), 0), 130 * MS);
  /* a span with a queue all through it is the path's */
  mtcp_drain_rate_note (&d, now + 400 * MS, 200000, TRUE, FALSE, 0);
  mtcp_drain_rate_note (&d, now + 500 * MS, 250000, TRUE, FALSE, 0);
  fail_unless_equals_uint64 (mtcp_drain_rate_of_path (&d), 500000);
  fail_unless (mtcp_transit_us (&info, 0, mtcp_drain_rate_of_path (&d),
          0) > 300 * MS);
}

GST_END_TEST;

GST_START_TEST (test_loss_recovery_is_not_a_held_queue)
{
  /* the full grid's 200 ms / 3% path, a connection that just joined: a
   * retransmission lifted its smoothed RTT to 2.2x the least, no span
   * measured yet. The joiner's first keyframe (0.5 s of transit, 0.6 s
   * behind, 1.2 s budget) goes: the margin would have refused it until
   * the session skipped it */
  MtcpTcpInfo info = info_of (440 * MS, 200 * MS, 30, 30, 0);
  MtcpDrainRate d = { 0, };
  gint64 now = 1000 * G_USEC_PER_SEC;

  fail_unless (mtcp_transit_queue_stands (&info));
  mtcp_drain_rate_note (&d, now, 0, TRUE, FALSE, 0);
  fail_if (mtcp_transit_queue_held (&info, &d));
  fail_if (mtcp_transit_arrives_late (600 * MS, 500 * MS, 1200 * MS,
          mtcp_transit_queue_held (&info, &d)));
  fail_unless (mtcp_transit_arrives_late (600 * MS, 500 * MS, 1200 * MS,
          TRUE));
  /* recovered before the span was over: the span does not count */
  mtcp_drain_rate_note (&d, now + 100 * MS, 20000, FALSE, FALSE, 0);
  mtcp_drain_rate_note (&d, now + 260 * MS, 60000, TRUE, FALSE, 0);
  fail_if (mtcp_transit_queue_held (&info, &d));
  /* a queue at every note of a whole span: held */
  mtcp_drain_rate_note (&d, now + 400 * MS, 80000, TRUE, FALSE, 0);
  mtcp_drain_rate_note (&d, now + 520 * MS, 100000, TRUE, FALSE, 0);
  fail_unless (mtcp_transit_queue_held (&info, &d));
  /* and not once the RTT came down */
  info.rtt_us = 300 * MS;
  fail_if (mtcp_transit_queue_held (&info, &d));
}

GST_END_TEST;

GST_START_TEST (test_slow_start_bytes_within_the_latency)
{
  /* 200 ms RTT, 1 s latency: 5 rounds, 31 windows */
  MtcpTcpInfo fresh = info_of (200 * MS, 200 * MS, 0, 10, 0);
  MtcpTcpInfo lost_synack = info_of (200 * MS, 200 * MS, 0, 1, 0);
  MtcpTcpInfo unknown = info_of (0, 0, 0, 10, 0);
  MtcpTcpInfo lan = info_of (100, 100, 0, 10, 0);

  fail_unless_equals_uint64 (mtcp_transit_slow_start_bytes (&fresh,
          1000 * MS), 31 * 10 * MSS);
  fail_unless_equals_uint64 (mtcp_transit_slow_start_bytes (&lost_synack,
          1000 * MS), 31 * MSS);
  /* less than an RTT: nothing arrives in time */
  fail_unless_equals_uint64 (mtcp_transit_slow_start_bytes (&fresh,
          150 * MS), 0);
  fail_unless_equals_uint64 (mtcp_transit_slow_start_bytes (&unknown,
          1000 * MS), G_MAXUINT64);
  /* a LAN: no bound worth the name, and no overflow */
  fail_unless (mtcp_transit_slow_start_bytes (&lan, 1000 * MS) >
      G_GUINT64_CONSTANT (1) << 40);
  lan.snd_cwnd = G_MAXUINT32;
  fail_unless_equals_uint64 (mtcp_transit_slow_start_bytes (&lan,
          1000 * MS), G_MAXUINT64);
}

GST_END_TEST;

/* A dark path is probed every half second, but never more often than
 * three of its least round trips (a SYN's answer must have time to come
 * back before the next probe abandons it), nor less often than each 3 s. */
GST_START_TEST (test_probe_interval_follows_the_least_rtt)
{
  fail_unless_equals_int64 (mtcp_transit_probe_interval_us (0), 500 * MS);
  fail_unless_equals_int64 (mtcp_transit_probe_interval_us (50 * MS),
      500 * MS);
  fail_unless_equals_int64 (mtcp_transit_probe_interval_us (300 * MS),
      900 * MS);
  fail_unless_equals_int64 (mtcp_transit_probe_interval_us (G_MAXUINT32),
      3000 * MS);
}

GST_END_TEST;

GST_START_TEST (test_repairing_a_random_loss)
{
  /* 3% loss on a 100 ms path with room (the lab grid, bbr): fast
   * recovery, SACKs still coming, the RTT at its least */
  MtcpTcpInfo info = info_of (102 * MS, 100 * MS, 5, 4, 1000000);

  info.ca_state = MTCP_TCP_CA_RECOVERY;
  info.last_ack_recv_ms = 8;
  fail_unless (mtcp_transit_repairing_loss (&info));
  /* a segment resent and not yet acknowledged, the state back to open */
  info.ca_state = MTCP_TCP_CA_OPEN;
  fail_if (mtcp_transit_repairing_loss (&info));
  info.retrans = 1;
  fail_unless (mtcp_transit_repairing_loss (&info));
  /* after a timeout, the resent segment's ACK due within two RTTs */
  info.ca_state = MTCP_TCP_CA_LOSS;
  info.last_ack_recv_ms = 190;
  fail_unless (mtcp_transit_repairing_loss (&info));
  /* nothing heard for longer: the path may be dark, no repair */
  info.last_ack_recv_ms = 205;
  fail_if (mtcp_transit_repairing_loss (&info));
  /* on a short path two RTTs are less than the floor of 200 ms */
  info.rtt_us = 20 * MS;
  info.min_rtt_us = 19 * MS;
  info.last_ack_recv_ms = 150;
  fail_unless (mtcp_transit_repairing_loss (&info));
  info.last_ack_recv_ms = 201;
  fail_if (mtcp_transit_repairing_loss (&info));
  /* a segment marked lost, nothing resent yet, the state still open */
  info.ca_state = MTCP_TCP_CA_OPEN;
  info.retrans = 0;
  info.last_ack_recv_ms = 3;
  fail_if (mtcp_transit_repairing_loss (&info));
  info.lost = 2;
  fail_unless (mtcp_transit_repairing_loss (&info));
  info.ca_state = MTCP_TCP_CA_LOSS;
  info.rtt_us = 102 * MS;
  info.min_rtt_us = 100 * MS;
  /* a path that slowed keeps a queue: its loss is the queue's overflow */
  info.last_ack_recv_ms = 8;
  info.rtt_us = 230 * MS;
  fail_if (mtcp_transit_repairing_loss (&info));
}

GST_END_TEST;

GST_START_TEST (test_bbrs_probe_rtt_holds_the_window_down)
{
  /* 20 ms path with room, bbr in PROBE_RTT: four segments in flight, the
   * state open, nothing lost, the RTT at its least */
  MtcpTcpInfo info = info_of (20 * MS, 20 * MS, 4, 4, 1000000);

  info.bbr_known = TRUE;
  fail_if (mtcp_transit_window_held_down (&info));
  info.bbr_probing_rtt = TRUE;
  fail_unless (mtcp_transit_window_held_down (&info));
  fail_if (mtcp_transit_repairing_loss (&info));
  /* no ACK for longer than two RTTs (200 ms at least): the flag is the
   * last ACK's, the path may be dark */
  info.last_ack_recv_ms = 201;
  fail_if (mtcp_transit_window_held_down (&info));
  info.last_ack_recv_ms = 0;
  /* a loss repaired holds it down too, with or without PROBE_RTT */
  info.ca_state = MTCP_TCP_CA_RECOVERY;
  info.last_ack_recv_ms = 5;
  fail_unless (mtcp_transit_window_held_down (&info));
  info.bbr_probing_rtt = FALSE;
  fail_unless (mtcp_transit_window_held_down (&info));
}

GST_END_TEST;

GST_START_TEST (test_a_reading_held_through_a_repair)
{
  /* every 200 ms: what the connection reads, whether it repairs a loss,
   * what counts */
  static const struct {
    guint64 reading;
    gboolean repairing;
    guint64 counts;
  } steps[] = {
    /* nothing kept yet: the reading itself, repairing or not */
    {50000, TRUE, 50000},
    {1000000, FALSE, 1000000},
    /* the window at packet conservation reads a twentieth: the one from
     * before stands, and a higher one counts as it is */
    {50000, TRUE, 1000000},
    {1200000, TRUE, 1200000},
    /* the repair over, the window not grown back yet: still held */
    {60000, FALSE, 1000000},
    /* a settle later the reading is the connection's again, and kept */
    {300000, FALSE, 300000},
    {50000, TRUE, 300000},
  };
  MtcpHeldReading held = { 0, 0, 0 };
  gint64 t = 10 * G_USEC_PER_SEC, settle = 250 * MS;
  guint i;

  for (i = 0; i < G_N_ELEMENTS (steps); i++, t += 200 * MS)
    fail_unless_equals_uint64 (mtcp_held_reading_take (&held, t,
            steps[i].reading, steps[i].repairing, settle), steps[i].counts);
  /* repairs back to back, every 200 ms, hold it no longer than
   * MTCP_HELD_READING_US after the last reading outside one (the 300000
   * of the sixth step, 400 ms before the loop's end) */
  for (; t <= 10 * G_USEC_PER_SEC + 1000 * MS + MTCP_HELD_READING_US;
      t += 200 * MS)
    fail_unless_equals_uint64 (mtcp_held_reading_take (&held, t, 50000,
            TRUE, settle), 300000);
  fail_unless_equals_uint64 (mtcp_held_reading_take (&held, t, 50000, TRUE,
          settle), 50000);
}

GST_END_TEST;

/* Half a second of a 40 kB backlog per @info, 12 kB acknowledged every
 * 50 ms (240 kB/s), noted from *@now on. */
static void
note_half_a_second_backlogged (MtcpDrainRate * d, gint64 * now,
    MtcpTcpInfo * info)
{
  gint i;

  for (i = 0; i <= 10; i++) {
    mtcp_drain_rate_note_info (d, *now, info, TRUE);
    *now += 50 * MS;
    info->bytes_acked += 12000;
  }
}

GST_START_TEST (test_a_backlog_while_the_window_is_held_is_not_the_paths_rate)
{
  MtcpDrainRate d;
  MtcpTcpInfo info = info_of (102 * MS, 100 * MS, 40, 4, 1000000);
  gint64 now = 1 * G_USEC_PER_SEC;

  memset (&d, 0, sizeof (d));
  /* fast recovery repairs a random loss: neither the path's last rate
   * nor what the connection delivers */
  info.ca_state = MTCP_TCP_CA_RECOVERY;
  info.last_ack_recv_ms = 5;
  note_half_a_second_backlogged (&d, &now, &info);
  fail_unless (d.bytes_per_s > 0);
  fail_unless_equals_uint64 (mtcp_drain_rate_last_of_path (&d), 0);
  fail_unless_equals_uint64 (mtcp_drain_rate_of_backlog (&d), 0);
  /* bbr's PROBE_RTT, no loss: what four segments a round trip carry */
  info.ca_state = MTCP_TCP_CA_OPEN;
  info.bbr_known = info.bbr_probing_rtt = TRUE;
  note_half_a_second_backlogged (&d, &now, &info);
  fail_unless (d.bytes_per_s > 0);
  fail_unless_equals_uint64 (mtcp_drain_rate_last_of_path (&d), 0);
  fail_unless_equals_uint64 (mtcp_drain_rate_of_backlog (&d), 0);
  /* the same backlog with the window TCP's again: what the path carries */
  info.bbr_probing_rtt = FALSE;
  note_half_a_second_backlogged (&d, &now, &info);
  fail_unless (mtcp_drain_rate_last_of_path (&d) > 0);
  fail_unless_equals_uint64 (mtcp_drain_rate_of_backlog (&d),
      d.bytes_per_s);
}

GST_END_TEST;

GST_START_TEST (test_an_app_limited_sample_is_no_backlogs_rate)
{
  MtcpDrainRate d;
  MtcpTcpInfo info = info_of (25 * MS, 20 * MS, 6, 42, 500000);
  gint64 now = 1 * G_USEC_PER_SEC;
  gint i;

  memset (&d, 0, sizeof (d));
  /* a frame just handed over, nothing measured over a span, room in the
   * window: the sample measured the stream or the pacer */
  fail_unless_equals_uint64 (mtcp_transit_backlog_rate (&info, &d), 0);
  /* the window full: the path's, unless the sample measured the stream */
  info.unacked = 42;
  fail_unless_equals_uint64 (mtcp_transit_backlog_rate (&info, &d), 500000);
  info.delivery_rate_app_limited = TRUE;
  fail_unless_equals_uint64 (mtcp_transit_backlog_rate (&info, &d), 0);
  info.unacked = 6;
  /* half a second mostly idle, 240 kB/s acknowledged: still nothing */
  for (i = 0; i <= 10; i++, now += 50 * MS, info.bytes_acked += 12000)
    mtcp_drain_rate_note_info (&d, now, &info, i == 10);
  fail_unless_equals_uint64 (mtcp_transit_backlog_rate (&info, &d), 0);
  /* unless the receiver's window is full: then what the span drained */
  info.snd_wnd_known = TRUE;
  info.snd_wnd = 6 * MSS;
  fail_unless_equals_uint64 (mtcp_transit_backlog_rate (&info, &d), 240000);
  /* a span backlogged all through: what it drained bounds the sample */
  info.snd_wnd = 1000000;
  note_half_a_second_backlogged (&d, &now, &info);
  fail_unless_equals_uint64 (mtcp_transit_backlog_rate (&info, &d), 240000);
  info.delivery_rate_app_limited = FALSE;
  info.delivery_rate = 100000;
  fail_unless_equals_uint64 (mtcp_transit_backlog_rate (&info, &d), 100000);
}

GST_END_TEST;

static Suite *
transit_suite (void)
{
  Suite *s = suite_create ("mtcptransit");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_idle_socket_counts_only_what_waits);
  tcase_add_test (tc, test_no_standing_queue_counts_the_rtt);
  tcase_add_test (tc, test_slowed_path_counts_the_flight);
  tcase_add_test (tc, test_after_silence_the_flight_still_counts);
  tcase_add_test (tc, test_drain_rate_spans);
  tcase_add_test (tc, test_a_keyframe_after_idle_is_not_what_it_can_deliver);
  tcase_add_test (tc, test_a_slow_readers_rate_is_known);
  tcase_add_test (tc, test_the_paths_last_rate_is_kept);
  tcase_add_test (tc, test_a_thin_streams_slow_rtt_is_not_the_paths_queue);
  tcase_add_test (tc, test_receiver_window_full);
  tcase_add_test (tc, test_arrives_late_keeps_a_third_to_spare);
  tcase_add_test (tc, test_a_keyframes_queue_is_not_the_paths_rate);
  tcase_add_test (tc, test_loss_recovery_is_not_a_held_queue);
  tcase_add_test (tc, test_slow_start_bytes_within_the_latency);
  tcase_add_test (tc, test_probe_interval_follows_the_least_rtt);
  tcase_add_test (tc, test_repairing_a_random_loss);
  tcase_add_test (tc, test_bbrs_probe_rtt_holds_the_window_down);
  tcase_add_test (tc, test_an_app_limited_sample_is_no_backlogs_rate);
  tcase_add_test (tc, test_a_reading_held_through_a_repair);
  tcase_add_test (tc, test_a_backlog_while_the_window_is_held_is_not_the_paths_rate);
  return s;
}

GST_CHECK_MAIN (transit);

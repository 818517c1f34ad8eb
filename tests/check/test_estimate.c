/* multitcp
 * Copyright (C) 2026 the multitcp authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
/* The sink's bandwidth estimate (gst/mtcpestimate.c), fed with traces of
 * what a session's connections deliver: the path's rate while it is the
 * limit, at least the windows' while the stream is, down at once, 0 dark. */
#include <gst/check/gstcheck.h>

#include "mtcpestimate.h"

#define TICK_US (100 * G_TIME_SPAN_MILLISECOND)

typedef struct {
  MtcpRateEstimate *e;
  gint64 now_us;
  guint64 acked;
  guint told;
  gint64 queued_us;             /* in the path's queue, from its RTTs */
  gboolean probing;             /* a padding probe runs */
  gboolean held_down;           /* TCP holds every window down */
} Trace;

static void
trace_init (Trace * t)
{
  t->e = mtcp_rate_estimate_new ();
  t->now_us = 1000 * G_USEC_PER_SEC;
  t->acked = 0;
  t->told = 0;
  t->queued_us = 0;
  t->probing = FALSE;
  t->held_down = FALSE;
}

/* @seconds of ticks at which the path delivers @delivered_bps, the
 * windows would carry @window_bps and @waiting bytes wait. */
static void
run (Trace * t, gdouble seconds, guint64 delivered_bps, guint64 window_bps,
    guint64 waiting, gboolean dark)
{
  gint64 end = t->now_us + (gint64) (seconds * G_USEC_PER_SEC);

  while (t->now_us < end) {
    MtcpRateSample s = { 0, window_bps, waiting, dark, t->queued_us,
      t->probing, t->held_down
    };
    t->now_us += TICK_US;
    t->acked += delivered_bps / 8 * TICK_US / G_USEC_PER_SEC;
    s.bytes_acked = t->acked;
    if (mtcp_rate_estimate_update (t->e, t->now_us, &s))
      t->told++;
  }
}

static gdouble
mbps (Trace * t)
{
  return mtcp_rate_estimate_bps (t->e) / 1e6;
}

/* Capacity below the stream: frames wait; the estimate is what the path
 * delivers, not the windows (which a full queue inflates). */
GST_START_TEST (test_path_limited_is_what_arrives)
{
  Trace t;

  trace_init (&t);
  run (&t, 0.3, 2000000, 5000000, 300000, FALSE);
  fail_unless_equals_uint64 (mtcp_rate_estimate_bps (t.e), 0);
  run (&t, 3, 2000000, 5000000, 300000, FALSE);
  fail_unless (mtcp_rate_estimate_path_limited (t.e));
  fail_unless (mbps (&t) > 1.9 && mbps (&t) < 2.1, "%f", mbps (&t));
  mtcp_rate_estimate_free (t.e);
}

GST_END_TEST;

/* Capacity above the stream: nothing waits; the estimate climbs to what
 * the windows would carry, over seconds, never below what arrives. */
GST_START_TEST (test_stream_limited_climbs_to_the_windows)
{
  Trace t;

  trace_init (&t);
  run (&t, 0.6, 1000000, 6000000, 0, FALSE);
  fail_if (mtcp_rate_estimate_path_limited (t.e));
  fail_unless (mbps (&t) >= 0.99 && mbps (&t) < 2.0, "%f", mbps (&t));
  run (&t, 1, 1000000, 6000000, 0, FALSE);
  fail_unless (mbps (&t) < 5.0, "climbed too fast: %f", mbps (&t));
  run (&t, 6, 1000000, 6000000, 0, FALSE);
  fail_unless (mbps (&t) > 5.5 && mbps (&t) <= 6.0, "%f", mbps (&t));
  mtcp_rate_estimate_free (t.e);
}

GST_END_TEST;

/* 6 Mbit/s of windows, then the link drops to 1 Mbit/s under a 4 Mbit/s
 * stream: within 0.6 s (the delivered span and a tick) the estimate is
 * near 1 Mbit/s, and it was told; dark: 0 at once; back: it climbs. */
GST_START_TEST (test_drop_and_outage_followed_at_once)
{
  Trace t;
  guint told;

  trace_init (&t);
  run (&t, 5, 4000000, 6000000, 0, FALSE);
  fail_unless (mbps (&t) > 5.0, "%f", mbps (&t));
  told = t.told;
  run (&t, 0.6, 1000000, 6000000, 400000, FALSE);
  fail_unless (mbps (&t) < 1.2, "%f", mbps (&t));
  fail_unless (t.told > told);
  told = t.told;
  run (&t, 0.1, 0, 6000000, 400000, TRUE);
  fail_unless_equals_uint64 (mtcp_rate_estimate_bps (t.e), 0);
  fail_unless_equals_int (t.told, told + 1);
  /* the path back at 3 Mbit/s, the queue draining: the delivered rate */
  run (&t, 2, 3000000, 3000000, 200000, FALSE);
  fail_unless (mbps (&t) > 2.7 && mbps (&t) < 3.1, "%f", mbps (&t));
  mtcp_rate_estimate_free (t.e);
}

GST_END_TEST;

/* A thin stream (300 kbit/s) on a wide path (6 Mbit/s of windows) with a
 * keyframe of 40 kB waiting: not the path's limit (the windows drain it in
 * 53 ms), so the estimate stays up. */
GST_START_TEST (test_keyframe_behind_thin_stream_is_not_the_path)
{
  Trace t;

  trace_init (&t);
  run (&t, 3, 300000, 6000000, 0, FALSE);
  run (&t, 0.2, 300000, 6000000, 40000, FALSE);
  fail_if (mtcp_rate_estimate_path_limited (t.e));
  fail_unless (mbps (&t) > 3.0, "%f", mbps (&t));
  mtcp_rate_estimate_free (t.e);
}

GST_END_TEST;

/* An 8 Mbit/s stream on a 50 Mbit/s path whose one bbr connection enters
 * PROBE_RTT: 2.3 Mbit/s delivered for a quarter second and 200 kB waiting,
 * the windows read at 8 Mbit/s (the reading held from before, bbr's pacer
 * at the stream's rate). While TCP holds the window down the estimate
 * neither falls nor calls the path the limit; the same figures with the
 * window TCP's do both. A hold longer than MTCP_ESTIMATE_HOLD_US is read
 * as the path's. */
GST_START_TEST (test_tcps_own_pause_is_not_the_path)
{
  Trace t;
  gdouble before;

  trace_init (&t);
  run (&t, 5, 8000000, 20000000, 0, FALSE);
  before = mbps (&t);
  fail_unless (before > 15.0, "%f", before);
  t.held_down = TRUE;
  run (&t, 0.25, 2300000, 8000000, 200000, FALSE);
  fail_if (mtcp_rate_estimate_path_limited (t.e));
  fail_unless_equals_int64 (mtcp_rate_estimate_waited_us (t.e), 0);
  fail_unless (mbps (&t) >= before, "%f < %f", mbps (&t), before);
  /* a path that was the limit before stays it, at what it delivered */
  t.held_down = FALSE;
  run (&t, 0.25, 2300000, 8000000, 200000, FALSE);
  fail_unless (mtcp_rate_estimate_path_limited (t.e));
  fail_unless (mbps (&t) < 8.0, "%f", mbps (&t));
  before = mbps (&t);
  t.held_down = TRUE;
  run (&t, 0.25, 1000000, 8000000, 200000, FALSE);
  fail_unless (mtcp_rate_estimate_path_limited (t.e));
  fail_unless (mbps (&t) >= before, "%f < %f", mbps (&t), before);
  /* repairs back to back for seconds (a policer, a receiver faking
   * losses), the stream the limit when they began: after the hold's
   * bound, what the path delivers */
  t.held_down = FALSE;
  run (&t, 3, 8000000, 20000000, 0, FALSE);
  fail_if (mtcp_rate_estimate_path_limited (t.e));
  t.held_down = TRUE;
  run (&t, 1.5, 1000000, 8000000, 200000, FALSE);
  fail_unless (mbps (&t) > 8.0, "%f", mbps (&t));
  run (&t, 1.0, 1000000, 8000000, 200000, FALSE);
  fail_unless (mtcp_rate_estimate_path_limited (t.e));
  fail_unless (mbps (&t) < 1.2, "%f", mbps (&t));
  mtcp_rate_estimate_free (t.e);
}

GST_END_TEST;

/* Nothing waits at the sink, but the path's queue holds 300 ms (large
 * windows move the backlog into the network): the path is the limit, the
 * estimate what arrives, not the windows. */
GST_START_TEST (test_queue_in_the_path_is_waiting)
{
  Trace t;

  trace_init (&t);
  run (&t, 2, 2000000, 5000000, 0, FALSE);
  fail_if (mtcp_rate_estimate_path_limited (t.e));
  t.queued_us = 300 * G_TIME_SPAN_MILLISECOND;
  run (&t, 1, 2000000, 5000000, 0, FALSE);
  fail_unless (mtcp_rate_estimate_path_limited (t.e));
  fail_unless (mbps (&t) > 1.9 && mbps (&t) < 2.1, "%f", mbps (&t));
  /* what a smoothed RTT wobbles by is no queue */
  t.queued_us = 40 * G_TIME_SPAN_MILLISECOND;
  run (&t, 1, 2000000, 5000000, 0, FALSE);
  fail_if (mtcp_rate_estimate_path_limited (t.e));
  mtcp_rate_estimate_free (t.e);
}

GST_END_TEST;

/* Told when it moves by a fifth or the limit changes sides, and once a
 * second otherwise: not at every tick. */
GST_START_TEST (test_told_on_change_and_every_second)
{
  Trace t;
  guint told;

  trace_init (&t);
  run (&t, 1, 2000000, 2000000, 300000, FALSE);
  told = t.told;
  fail_unless (told >= 1);
  run (&t, 10, 2000000, 2000000, 300000, FALSE);
  fail_unless (t.told - told >= 9 && t.told - told <= 11, "%u",
      t.told - told);
  /* the stream becomes the limit at the same rate: told at that tick,
   * because the encoder's control acts on it */
  told = t.told;
  run (&t, 0.1, 2000000, 2000000, 0, FALSE);
  fail_if (mtcp_rate_estimate_path_limited (t.e));
  fail_unless_equals_int (t.told, told + 1);
  run (&t, 0.1, 2000000, 2000000, 300000, FALSE);
  fail_unless (mtcp_rate_estimate_path_limited (t.e));
  fail_unless_equals_int (t.told, told + 2);
  mtcp_rate_estimate_free (t.e);
}

GST_END_TEST;

/* A clock that does not move changes nothing; a counter that goes back
 * (a connection's share lost) starts the measurement anew, the estimate
 * kept meanwhile. */
GST_START_TEST (test_odd_input_ignored)
{
  Trace t;
  MtcpRateSample s = { 0, 1000000, 0, FALSE, 0 };

  trace_init (&t);
  run (&t, 2, 2000000, 2000000, 300000, FALSE);
  s.bytes_acked = t.acked;
  fail_if (mtcp_rate_estimate_update (t.e, t.now_us, &s));
  fail_unless (mbps (&t) > 1.9 && mbps (&t) < 2.1, "%f", mbps (&t));
  t.acked = 0;
  run (&t, 0.3, 2000000, 2000000, 300000, FALSE);
  fail_unless (mbps (&t) > 1.9 && mbps (&t) < 2.1, "%f", mbps (&t));
  run (&t, 1, 1000000, 2000000, 300000, FALSE);
  fail_unless (mbps (&t) > 0.9 && mbps (&t) < 1.1, "%f", mbps (&t));
  mtcp_rate_estimate_free (t.e);
}

GST_END_TEST;

/* The windows guess 8 Mbit/s over a 1 Mbit/s stream: the estimate stays
 * at the guess while the delivered rate rises to 2.5 Mbit/s; that rise is
 * told at once only while a padding probe runs (its result), and the
 * delivered rate is there to read. */
GST_START_TEST (test_delivered_rise_told_while_probing)
{
  Trace t;
  guint told;
  gboolean probing;

  for (probing = FALSE; probing <= TRUE; probing++) {
    trace_init (&t);
    run (&t, 8, 1000000, 8000000, 0, FALSE);
    fail_unless (mtcp_rate_estimate_delivered_bps (t.e) < 1100000);
    told = t.told;
    t.probing = probing;
    run (&t, 0.7, 2500000, 8000000, 0, FALSE);
    fail_unless (mtcp_rate_estimate_delivered_bps (t.e) > 2000000);
    fail_unless (mbps (&t) > 7.5, "%f", mbps (&t));
    if (probing)
      fail_unless (t.told - told >= 2, "told %u", t.told - told);
    else
      fail_unless (t.told - told <= 1, "told %u", t.told - told);
    mtcp_rate_estimate_free (t.e);
  }
}

GST_END_TEST;

static Suite *
estimate_suite (void)
{
  Suite *s = suite_create ("estimate");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_path_limited_is_what_arrives);
  tcase_add_test (tc, test_tcps_own_pause_is_not_the_path);
  tcase_add_test (tc, test_queue_in_the_path_is_waiting);
  tcase_add_test (tc, test_stream_limited_climbs_to_the_windows);
  tcase_add_test (tc, test_drop_and_outage_followed_at_once);
  tcase_add_test (tc, test_told_on_change_and_every_second);
  tcase_add_test (tc, test_odd_input_ignored);
  tcase_add_test (tc, test_delivered_rise_told_while_probing);
  tcase_add_test (tc, test_keyframe_behind_thin_stream_is_not_the_path);
  return s;
}

GST_CHECK_MAIN (estimate);

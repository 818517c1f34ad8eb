/* multitcp
 * Copyright (C) 2026 the multitcp authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
/* The receiver's time base (gst/mtcptimemap.c) on a clock the test
 * drives: the first timestamp fixes the mapping, deadlines are latency
 * after it less the release margin, a new session maps anew, drift
 * correction keeps a fast sender's frames at their distance to arrival,
 * and timestamps no real sender makes saturate instead of overflowing. */
#include <gst/check/gstcheck.h>

#include "mtcptimemap.h"

GST_START_TEST (test_first_timestamp_fixes_the_mapping)
{
  MtcpTimeMap *map = mtcp_time_map_new (500 * GST_MSECOND, TRUE);

  fail_if (mtcp_time_map_is_mapped (map));
  fail_unless_equals_uint64 (mtcp_time_map_to_local (map, GST_SECOND),
      GST_CLOCK_TIME_NONE);
  fail_unless_equals_uint64 (mtcp_time_map_deadline (map, GST_SECOND),
      GST_CLOCK_TIME_NONE);
  /* sender running time 5 s arrives at local 100 s */
  mtcp_time_map_observe (map, 5 * GST_SECOND, 100 * GST_SECOND);
  fail_unless (mtcp_time_map_is_mapped (map));
  fail_unless_equals_uint64 (mtcp_time_map_to_local (map, 5 * GST_SECOND),
      100 * GST_SECOND);
  fail_unless_equals_uint64 (mtcp_time_map_to_local (map, 6 * GST_SECOND),
      101 * GST_SECOND);
  /* a later arrival of a later timestamp does not move it */
  mtcp_time_map_observe (map, 6 * GST_SECOND, 101 * GST_SECOND +
      30 * GST_MSECOND);
  fail_unless_equals_uint64 (mtcp_time_map_to_local (map, 6 * GST_SECOND),
      101 * GST_SECOND);
  /* due latency later, released 20 ms (a tenth of latency at most) early */
  fail_unless_equals_uint64 (mtcp_time_map_deadline (map, 6 * GST_SECOND),
      101 * GST_SECOND + 480 * GST_MSECOND);
  fail_unless_equals_uint64 (mtcp_time_map_horizon (map), 1500 * GST_MSECOND);
  fail_unless_equals_uint64 (mtcp_time_map_to_local (map,
          GST_CLOCK_TIME_NONE), GST_CLOCK_TIME_NONE);
  mtcp_time_map_free (map);

  /* a short latency: the margin is a tenth of it */
  map = mtcp_time_map_new (100 * GST_MSECOND, FALSE);
  mtcp_time_map_observe (map, 0, 10 * GST_SECOND);
  fail_unless_equals_uint64 (mtcp_time_map_deadline (map, 0),
      10 * GST_SECOND + 90 * GST_MSECOND);
  mtcp_time_map_free (map);
}

GST_END_TEST;

GST_START_TEST (test_new_session_maps_anew)
{
  MtcpTimeMap *map = mtcp_time_map_new (GST_SECOND, TRUE);

  mtcp_time_map_observe (map, 60 * GST_SECOND, 100 * GST_SECOND);
  mtcp_time_map_reset (map);
  fail_if (mtcp_time_map_is_mapped (map));
  fail_unless_equals_int64 (mtcp_time_map_correction (map), 0);
  /* the restarted sender counts from 0 again */
  mtcp_time_map_observe (map, 0, 200 * GST_SECOND);
  fail_unless_equals_uint64 (mtcp_time_map_to_local (map, GST_SECOND),
      201 * GST_SECOND);
  mtcp_time_map_free (map);
}

GST_END_TEST;

/* A sender whose clock runs @ppm fast, a frame every 20 ms for @seconds,
 * each delayed 10-30 ms on the way: how far the last frame's deadline is
 * from its arrival plus latency (ns; positive: later). */
static gint64
drift_after (gboolean correction, gdouble ppm, guint seconds)
{
  MtcpTimeMap *map = mtcp_time_map_new (GST_SECOND, correction);
  GRand *rand = g_rand_new_with_seed (7);
  GstClockTime sender = 0, arrival = 0, deadline = 0;
  guint i, n = seconds * 50;
  gint64 off;

  for (i = 0; i < n; i++) {
    GstClockTime local_send = 1000 * GST_SECOND + i * 20 * GST_MSECOND;
    sender = (GstClockTime) ((local_send - 1000 * GST_SECOND) *
        (1.0 + ppm / 1e6));
    arrival = local_send + 10 * GST_MSECOND +
        g_rand_int_range (rand, 0, 20) * GST_MSECOND;
    mtcp_time_map_observe (map, sender, arrival);
    deadline = mtcp_time_map_to_local (map, sender);
  }
  off = (gint64) deadline - (gint64) (1000 * GST_SECOND + (n - 1) * 20 *
      GST_MSECOND);
  if (correction)
    fail_unless (mtcp_time_map_skew_valid (map));
  mtcp_time_map_free (map);
  g_rand_free (rand);
  return off;
}

GST_START_TEST (test_drift_correction_follows_the_sender)
{
  /* 500 ppm over 180 s: 90 ms of drift uncorrected */
  gint64 without = drift_after (FALSE, 500, 180);
  gint64 with = drift_after (TRUE, 500, 180);

  GST_INFO ("after 180 s: %" G_GINT64_FORMAT " ms uncorrected, %"
      G_GINT64_FORMAT " ms corrected", without / GST_MSECOND,
      with / GST_MSECOND);
  /* the first frame arrived 10-30 ms after it was sent */
  fail_unless (without > 80 * GST_MSECOND + 10 * GST_MSECOND,
      "uncorrected drift %" G_GINT64_FORMAT " ns", without);
  fail_unless (ABS (with) < 40 * GST_MSECOND,
      "corrected drift %" G_GINT64_FORMAT " ns", with);
}

GST_END_TEST;

GST_START_TEST (test_extreme_timestamps_saturate)
{
  MtcpTimeMap *map = mtcp_time_map_new (G_MAXUINT64 - 1, TRUE);

  /* the latency property's most is far below; this one is clamped */
  fail_unless (mtcp_time_map_horizon (map) <= MTCP_TIME_MAP_MAX + GST_SECOND);
  mtcp_time_map_observe (map, MTCP_TIME_MAP_MAX, 5 * GST_SECOND);
  fail_unless (mtcp_time_map_to_local (map, MTCP_TIME_MAP_MAX) <=
      MTCP_TIME_MAP_MAX);
  fail_unless_equals_uint64 (mtcp_time_map_to_local (map, 0), 0);
  fail_unless (mtcp_time_map_to_local (map, G_MAXUINT64 - 1) <=
      MTCP_TIME_MAP_MAX);
  fail_unless (mtcp_time_map_deadline (map, MTCP_TIME_MAP_MAX) <
      G_MAXUINT64 - 1);
  mtcp_time_map_free (map);

  map = mtcp_time_map_new (GST_SECOND, TRUE);
  mtcp_time_map_observe (map, 0, MTCP_TIME_MAP_MAX);
  fail_unless_equals_uint64 (mtcp_time_map_to_local (map, GST_SECOND),
      MTCP_TIME_MAP_MAX);
  mtcp_time_map_free (map);
}

GST_END_TEST;

static Suite *
timemap_suite (void)
{
  Suite *s = suite_create ("mtcptimemap");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_first_timestamp_fixes_the_mapping);
  tcase_add_test (tc, test_new_session_maps_anew);
  tcase_add_test (tc, test_drift_correction_follows_the_sender);
  tcase_add_test (tc, test_extreme_timestamps_saturate);
  return s;
}

GST_CHECK_MAIN (timemap);

/* multitcp
 * Copyright (C) 2026 the multitcp authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
/* The padding of a probe (gst/mtcpprobe.c): paced at its rate from its
 * start, no catching up after a pause beyond a short burst, nothing after
 * its end or once stopped, nothing smaller than a packet's worth. */
#include <gst/check/gstcheck.h>

#include "mtcpprobe.h"

#define T0 (1000 * G_USEC_PER_SEC)
#define MS (G_TIME_SPAN_MILLISECOND)

/* sends what is due every @step_us over @span_us from @from; the bytes */
static guint64
drain (MtcpRateProbe * p, gint64 from, gint64 span_us, gint64 step_us)
{
  guint64 sent = 0;
  gint64 t;

  for (t = from + step_us; t <= from + span_us; t += step_us) {
    gsize due = mtcp_rate_probe_due (p, t);
    mtcp_rate_probe_sent (p, due);
    sent += due;
  }
  return sent;
}

/* 4 Mbit/s for 500 ms, taken every 10 ms up to 490 ms: 245 kB within a
 * packet's worth, and nothing after the end */
GST_START_TEST (test_paced_at_its_rate)
{
  MtcpRateProbe *p = mtcp_rate_probe_new ();
  guint64 sent;

  fail_unless_equals_uint64 (mtcp_rate_probe_due (p, T0), 0);
  mtcp_rate_probe_start (p, T0, 4000000, 500 * MS);
  fail_unless (mtcp_rate_probe_active (p, T0));
  sent = drain (p, T0, 500 * MS - 1, 10 * MS);
  fail_unless (sent > 245000 - MTCP_PROBE_MIN_BYTES && sent <= 245000,
      "%" G_GUINT64_FORMAT, sent);
  fail_unless_equals_uint64 (mtcp_rate_probe_due (p, T0 + 600 * MS), 0);
  fail_if (mtcp_rate_probe_active (p, T0 + 600 * MS));
  fail_unless_equals_uint64 (mtcp_rate_probe_count (p), 1);
  fail_unless_equals_uint64 (mtcp_rate_probe_stopped_early (p), 0);
  fail_unless_equals_uint64 (mtcp_rate_probe_bytes (p), sent);
  mtcp_rate_probe_free (p);
}

GST_END_TEST;

/* a connection that could take nothing for 300 ms gets the burst's
 * worth (40 ms of the rate), not the 300 ms owed */
GST_START_TEST (test_no_catching_up_after_a_pause)
{
  MtcpRateProbe *p = mtcp_rate_probe_new ();
  gsize due;

  mtcp_rate_probe_start (p, T0, 8000000, 500 * MS);
  due = mtcp_rate_probe_due (p, T0 + 300 * MS);
  fail_unless_equals_uint64 (due, 8000000 / 8 * MTCP_PROBE_BURST_US /
      G_USEC_PER_SEC);
  mtcp_rate_probe_sent (p, due);
  /* then at the rate again: 10 ms later 10 kB */
  due = mtcp_rate_probe_due (p, T0 + 310 * MS);
  fail_unless (due >= 9999 && due <= 10001, "%" G_GSIZE_FORMAT, due);
  mtcp_rate_probe_free (p);
}

GST_END_TEST;

/* less than a packet's worth waits; stopped early, nothing more, counted */
GST_START_TEST (test_small_and_stopped)
{
  MtcpRateProbe *p = mtcp_rate_probe_new ();

  mtcp_rate_probe_start (p, T0, 800000, 500 * MS);
  /* 1 ms of 800 kbit/s is 100 bytes */
  fail_unless_equals_uint64 (mtcp_rate_probe_due (p, T0 + 1 * MS), 0);
  fail_unless (mtcp_rate_probe_due (p, T0 + 20 * MS) >= MTCP_PROBE_MIN_BYTES);
  mtcp_rate_probe_stop (p, T0 + 50 * MS, TRUE);
  fail_unless_equals_uint64 (mtcp_rate_probe_due (p, T0 + 100 * MS), 0);
  /* what it delivered is in the estimate for a probe's length after */
  fail_unless (mtcp_rate_probe_recent (p, T0 + 100 * MS));
  fail_if (mtcp_rate_probe_recent (p, T0 + 50 * MS + MTCP_PROBE_DURATION_US));
  fail_unless_equals_uint64 (mtcp_rate_probe_stopped_early (p), 1);
  /* a new one starts afresh, with nothing owed from the last */
  mtcp_rate_probe_start (p, T0 + 200 * MS, 800000, 500 * MS);
  fail_unless_equals_uint64 (mtcp_rate_probe_due (p, T0 + 201 * MS), 0);
  fail_unless_equals_uint64 (mtcp_rate_probe_count (p), 2);
  /* no rate or no time: no probe */
  mtcp_rate_probe_stop (p, T0 + 250 * MS, FALSE);
  mtcp_rate_probe_start (p, T0 + 300 * MS, 0, 500 * MS);
  fail_if (mtcp_rate_probe_active (p, T0 + 300 * MS));
  fail_unless_equals_uint64 (mtcp_rate_probe_stopped_early (p), 1);
  mtcp_rate_probe_free (p);
}

GST_END_TEST;

static Suite *
probe_suite (void)
{
  Suite *s = suite_create ("probe");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_paced_at_its_rate);
  tcase_add_test (tc, test_no_catching_up_after_a_pause);
  tcase_add_test (tc, test_small_and_stopped);
  return s;
}

GST_CHECK_MAIN (probe);

/* multitcp
 * Copyright (C) 2026 the multitcp authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
/* The clock skew estimate on synthetic arrival traces: a sender whose
 * clock runs fast or slow, a path with jitter and spikes, an hour long. */
#include <gst/check/gstcheck.h>
#include <math.h>

#include "mtcpskew.h"

#define PACKET_INTERVAL (20 * GST_MSECOND)      /* 50 buffers a second */
#define PATH_DELAY (30 * GST_MSECOND)
#define SENDER_START (10 * GST_SECOND)
#define RECEIVER_START (1000 * GST_SECOND)

typedef struct {
  GstClockTime sender;
  GstClockTime arrival;
} Sample;

static gint
by_arrival (gconstpointer a, gconstpointer b)
{
  const Sample *x = a, *y = b;
  return x->arrival < y->arrival ? -1 : x->arrival > y->arrival;
}

/* Queueing delay: exponential around @mean_ms, and one buffer in a hundred
 * held 50 to 250 ms more (a retransmission). */
static GstClockTime
jitter (GRand * rand, gdouble mean_ms)
{
  gdouble ms = -log (1.0 - g_rand_double (rand)) * mean_ms;
  if (g_rand_int_range (rand, 0, 100) == 0)
    ms += g_rand_double_range (rand, 50, 250);
  return (GstClockTime) (ms * GST_MSECOND);
}

/* Buffers stamped by a sender clock @ppm fast over @seconds of true time,
 * in the order they arrive. */
static GArray *
make_trace (gdouble ppm, guint seconds, gdouble jitter_ms, guint32 seed)
{
  GArray *trace = g_array_new (FALSE, FALSE, sizeof (Sample));
  GRand *rand = g_rand_new_with_seed (seed);
  GstClockTime t;

  for (t = 0; t < (GstClockTime) seconds * GST_SECOND; t += PACKET_INTERVAL) {
    Sample s;
    s.sender = SENDER_START + (GstClockTime) llround (t * (1.0 + ppm * 1e-6));
    s.arrival = RECEIVER_START + t + PATH_DELAY + jitter (rand, jitter_ms);
    g_array_append_val (trace, s);
  }
  g_array_sort (trace, by_arrival);
  g_rand_free (rand);
  return trace;
}

typedef struct {
  gdouble max_error_ms;         /* |correction - true drift| after settling */
  gdouble spread_ms;            /* max - min of that error */
  gdouble ppm_error;            /* |estimate - truth| at the end */
  gdouble uncorrected_ms;       /* how far the floor moved over the run */
} Result;

/* Feeds the trace; from @settle_s on, compares the correction with how far
 * the true delay floor has moved since the first buffer. */
static Result
run_trace (GArray * trace, gdouble ppm, guint settle_s)
{
  MtcpSkew *skew = mtcp_skew_new (GST_SECOND, 60);
  Result res = { 0, };
  gdouble min_err = G_MAXDOUBLE, max_err = -G_MAXDOUBLE;
  GstClockTime first_sender = G_MAXUINT64, next_check = 0;
  gdouble e = ppm * 1e-6;
  guint i;

  for (i = 0; i < trace->len; i++)
    first_sender = MIN (first_sender, g_array_index (trace, Sample,
            i).sender);
  for (i = 0; i < trace->len; i++) {
    Sample *s = &g_array_index (trace, Sample, i);
    gdouble moved, err;

    mtcp_skew_observe (skew, s->sender, s->arrival);
    if (s->arrival < RECEIVER_START + (GstClockTime) settle_s * GST_SECOND ||
        s->arrival < next_check)
      continue;
    next_check = s->arrival + GST_SECOND;
    /* arrival - sender of a buffer with no queueing, relative to the first */
    moved = -e * (gdouble) (s->sender - first_sender) / (1.0 + e);
    err = (mtcp_skew_correction (skew, s->sender) - moved) / 1e6;
    min_err = MIN (min_err, err);
    max_err = MAX (max_err, err);
    res.uncorrected_ms = fabs (moved) / 1e6;
  }
  res.max_error_ms = MAX (fabs (min_err), fabs (max_err));
  res.spread_ms = max_err - min_err;
  res.ppm_error = fabs (mtcp_skew_get_ppm (skew) - ppm);
  GST_INFO ("%+.0f ppm: error at most %.3f ms (spread %.3f ms), estimate %.2f "
      "ppm, uncorrected %.1f ms", ppm, res.max_error_ms, res.spread_ms,
      mtcp_skew_get_ppm (skew), res.uncorrected_ms);
  fail_unless (mtcp_skew_is_valid (skew));
  mtcp_skew_free (skew);
  return res;
}

static void
check_hour (gdouble ppm, guint32 seed)
{
  GArray *trace = make_trace (ppm, 3600, 3.0, seed);
  Result res = run_trace (trace, ppm, 120);

  /* 200 ppm over an hour is 720 ms; the mapping stays within 2 ms of the
   * sender's clock the whole hour, and the rate within 5 ppm */
  fail_unless (res.max_error_ms < 2.0, "offset error %.3f ms",
      res.max_error_ms);
  fail_unless (res.ppm_error < 5.0, "rate off by %.2f ppm", res.ppm_error);
  if (ppm != 0)
    fail_unless (res.uncorrected_ms > 600 * fabs (ppm) / 200);
  g_array_unref (trace);
}

GST_START_TEST (test_sender_200ppm_fast_for_an_hour)
{
  check_hour (200, 1);
}

GST_END_TEST;

GST_START_TEST (test_sender_200ppm_slow_for_an_hour)
{
  check_hour (-200, 2);
}

GST_END_TEST;

GST_START_TEST (test_same_clock_no_correction)
{
  check_hour (0, 3);
}

GST_END_TEST;

/* The compressed hour of the element test: 2000 ppm, heavier jitter. */
GST_START_TEST (test_2000ppm_with_heavy_jitter)
{
  gdouble ppms[] = { 2000, -2000 };
  guint k;

  for (k = 0; k < G_N_ELEMENTS (ppms); k++) {
    GArray *trace = make_trace (ppms[k], 600, 10.0, 10 + k);
    Result res = run_trace (trace, ppms[k], 60);
    fail_unless (res.max_error_ms < 5.0, "offset error %.3f ms",
        res.max_error_ms);
    fail_unless (res.ppm_error < 30.0, "rate off by %.2f ppm", res.ppm_error);
    g_array_unref (trace);
  }
}

GST_END_TEST;

/* A sender pushing a file faster than real time is not a clock: nothing is
 * corrected, and the estimate says so. */
GST_START_TEST (test_burst_is_not_drift)
{
  MtcpSkew *skew = mtcp_skew_new (GST_SECOND, 60);
  GstClockTime t;
  guint i = 0;

  for (t = 0; t < 30 * GST_SECOND; t += GST_MSECOND, i++)
    mtcp_skew_observe (skew, i * 33 * GST_MSECOND, t);
  fail_if (mtcp_skew_is_valid (skew));
  fail_unless_equals_int64 (mtcp_skew_correction (skew, i * 33 * GST_MSECOND),
      0);
  fail_unless (mtcp_skew_get_ppm (skew) == 0.0);
  mtcp_skew_free (skew);
}

GST_END_TEST;

/* Until MIN_POINTS windows are in, and after a reset, the mapping is the
 * first buffer's offset alone. */
GST_START_TEST (test_no_correction_before_estimate_and_after_reset)
{
  MtcpSkew *skew = mtcp_skew_new (GST_SECOND, 60);
  GArray *trace = make_trace (1000, 30, 3.0, 7);
  guint i;

  for (i = 0; i < trace->len; i++) {
    Sample *s = &g_array_index (trace, Sample, i);
    mtcp_skew_observe (skew, s->sender, s->arrival);
    if (s->arrival < RECEIVER_START + 3 * GST_SECOND)
      fail_unless_equals_int64 (mtcp_skew_correction (skew, s->sender), 0);
  }
  fail_unless (mtcp_skew_is_valid (skew));
  fail_unless (fabs (mtcp_skew_get_ppm (skew) - 1000) < 100);
  mtcp_skew_reset (skew);
  fail_if (mtcp_skew_is_valid (skew));
  fail_unless_equals_int64 (mtcp_skew_correction (skew, 5 * GST_SECOND), 0);
  g_array_unref (trace);
  mtcp_skew_free (skew);
}

GST_END_TEST;

static Suite *
skew_suite (void)
{
  Suite *s = suite_create ("skew");
  TCase *tc = tcase_create ("traces");

  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_sender_200ppm_fast_for_an_hour);
  tcase_add_test (tc, test_sender_200ppm_slow_for_an_hour);
  tcase_add_test (tc, test_same_clock_no_correction);
  tcase_add_test (tc, test_2000ppm_with_heavy_jitter);
  tcase_add_test (tc, test_burst_is_not_drift);
  tcase_add_test (tc, test_no_correction_before_estimate_and_after_reset);
  return s;
}

GST_CHECK_MAIN (skew);

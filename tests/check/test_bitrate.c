/* The encoder's bitrate from the bandwidth estimate (gst/mtcpbitrate.c),
 * fed with estimate traces: down at once, up slowly, the least when dark,
 * never outside the bounds, no change for noise. */
#include <gst/check/gstcheck.h>

#include "mtcpbitrate.h"

#define STEP_US (500 * G_TIME_SPAN_MILLISECOND)

typedef struct {
  MtcpBitrateControl *c;
  gint64 now_us;
  guint changes;
} Run;

static void
run_init (Run * r, guint64 min, guint64 max, guint64 start)
{
  MtcpBitrateBounds b = { min, max };
  r->c = mtcp_bitrate_control_new (&b, start);
  r->now_us = 1000 * G_USEC_PER_SEC;
  r->changes = 0;
}

/* @seconds of the estimate at @estimate, told every half second; the path
 * the limit */
static void
feed_limited (Run * r, gdouble seconds, guint64 estimate, gboolean limited)
{
  gint64 end = r->now_us + (gint64) (seconds * G_USEC_PER_SEC);
  guint64 bps = 0;

  while (r->now_us < end) {
    r->now_us += STEP_US;
    if (mtcp_bitrate_control_update (r->c, r->now_us, estimate, limited,
            &bps)) {
      fail_unless_equals_uint64 (bps, mtcp_bitrate_control_bps (r->c));
      r->changes++;
    }
  }
}

static void
feed (Run * r, gdouble seconds, guint64 estimate)
{
  feed_limited (r, seconds, estimate, TRUE);
}

static gdouble
mbps (Run * r)
{
  return mtcp_bitrate_control_bps (r->c) / 1e6;
}

/* 4 Mbit/s encoder, the link drops to 2 Mbit/s: below 2 Mbit/s at the
 * first estimate, in one change. */
GST_START_TEST (test_down_at_once)
{
  Run r;

  run_init (&r, 300000, 4000000, 4000000);
  feed (&r, 3, 6000000);
  fail_unless_equals_int (r.changes, 0);
  feed (&r, 0.5, 2000000);
  fail_unless (mbps (&r) < 2.0 && mbps (&r) >= 1.5, "%f", mbps (&r));
  fail_unless_equals_int (r.changes, 1);
  mtcp_bitrate_control_free (r.c);
}

GST_END_TEST;

/* Back up: nothing for the hold time, then a step a second, a share of
 * the way to the estimate's share (at least 15% of the bitrate), never
 * past it, never above max. */
GST_START_TEST (test_up_slowly_after_a_hold)
{
  Run r;
  guint64 before;

  run_init (&r, 300000, 4000000, 1000000);
  feed (&r, 1.5, 3000000);
  fail_unless_equals_uint64 (mtcp_bitrate_control_bps (r.c), 1000000);
  before = mtcp_bitrate_control_bps (r.c);
  feed (&r, 1, 3000000);
  /* 1.0 + 0.3 x (2.4 - 1.0) */
  fail_unless (mbps (&r) > 1.41 && mbps (&r) < 1.43, "%f", mbps (&r));
  fail_unless (mtcp_bitrate_control_bps (r.c) > before);
  feed (&r, 0.5, 3000000);
  fail_unless (mbps (&r) < 1.43, "two steps in a second: %f", mbps (&r));
  /* it stops within a tenth of the estimate's share (2.4) */
  feed (&r, 20, 3000000);
  fail_unless (mbps (&r) > 2.4 / 1.1 && mbps (&r) <= 2.4, "%f", mbps (&r));
  fail_unless (r.changes <= 8, "%u changes", r.changes);
  feed (&r, 30, 100000000);
  fail_unless_equals_uint64 (mtcp_bitrate_control_bps (r.c), 4000000);
  mtcp_bitrate_control_free (r.c);
}

GST_END_TEST;

/* An estimate that wobbles by a few % around the bitrate's share: no
 * change at all. */
GST_START_TEST (test_noise_changes_nothing)
{
  Run r;
  guint i;

  run_init (&r, 300000, 4000000, 2000000);
  for (i = 0; i < 40; i++)
    feed (&r, 0.5, i % 2 ? 2600000 : 2450000);
  fail_unless_equals_int (r.changes, 0);
  mtcp_bitrate_control_free (r.c);
}

GST_END_TEST;

/* A thin stream (its estimate low because it sends little, not because
 * the path limits it): no reason to go down; only the path's is. */
GST_START_TEST (test_stream_limited_estimate_is_a_floor)
{
  Run r;

  run_init (&r, 300000, 4000000, 4000000);
  feed_limited (&r, 3, 500000, FALSE);
  fail_unless_equals_int (r.changes, 0);
  feed_limited (&r, 0.5, 500000, TRUE);
  fail_unless_equals_uint64 (mtcp_bitrate_control_bps (r.c), 400000);
  mtcp_bitrate_control_free (r.c);
}

GST_END_TEST;

/* Dark: the least at once; back: up from there, slowly. */
GST_START_TEST (test_outage_starts_low)
{
  Run r;

  run_init (&r, 300000, 4000000, 4000000);
  feed (&r, 2, 6000000);
  feed (&r, 0.5, 0);
  fail_unless_equals_uint64 (mtcp_bitrate_control_bps (r.c), 300000);
  feed (&r, 1.5, 6000000);
  fail_unless_equals_uint64 (mtcp_bitrate_control_bps (r.c), 300000);
  feed (&r, 1, 6000000);
  fail_unless (mbps (&r) > 0.3 && mbps (&r) < 2.0, "%f", mbps (&r));
  /* a few seconds of steps to the top, not a jump */
  feed (&r, 10, 6000000);
  fail_unless_equals_uint64 (mtcp_bitrate_control_bps (r.c), 4000000);
  /* an estimate below min: min */
  feed (&r, 0.5, 100000);
  fail_unless_equals_uint64 (mtcp_bitrate_control_bps (r.c), 300000);
  mtcp_bitrate_control_free (r.c);
}

GST_END_TEST;

static Suite *
bitrate_suite (void)
{
  Suite *s = suite_create ("bitrate");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_down_at_once);
  tcase_add_test (tc, test_up_slowly_after_a_hold);
  tcase_add_test (tc, test_noise_changes_nothing);
  tcase_add_test (tc, test_outage_starts_low);
  tcase_add_test (tc, test_stream_limited_estimate_is_a_floor);
  return s;
}

GST_CHECK_MAIN (bitrate);

/* The encoder's bitrate from the bandwidth estimate (gst/mtcpbitrate.c),
 * fed with estimate traces: down at once, up after a hold (towards the
 * estimate's share, or a probe that backs off), the least when dark,
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

/* Back up, with the estimate showing room: nothing for the hold (1 s
 * after the last change), then towards the estimate's share, at most a
 * doubling a step, never past the share, never above max. */
GST_START_TEST (test_up_after_a_hold_towards_the_share)
{
  Run r;

  run_init (&r, 300000, 4000000, 1000000);
  feed (&r, 0.5, 1000000);
  fail_unless_equals_uint64 (mtcp_bitrate_control_bps (r.c), 800000);
  feed (&r, 0.5, 6000000);
  fail_unless_equals_uint64 (mtcp_bitrate_control_bps (r.c), 800000);
  feed (&r, 0.5, 6000000);
  /* at most twice the bitrate in a step */
  fail_unless_equals_uint64 (mtcp_bitrate_control_bps (r.c), 1600000);
  feed (&r, 0.5, 3000000);
  fail_unless_equals_uint64 (mtcp_bitrate_control_bps (r.c), 1600000);
  /* the estimate's share (2.4), not past it */
  feed (&r, 0.5, 3000000);
  fail_unless_equals_uint64 (mtcp_bitrate_control_bps (r.c), 2400000);
  feed (&r, 20, 3000000);
  fail_unless_equals_uint64 (mtcp_bitrate_control_bps (r.c), 2400000);
  fail_unless_equals_int (r.changes, 3);
  feed (&r, 5, 100000000);
  fail_unless_equals_uint64 (mtcp_bitrate_control_bps (r.c), 4000000);
  mtcp_bitrate_control_free (r.c);
}

GST_END_TEST;

/* A stream below what the path carries measures no more than itself:
 * while nothing waits, it probes up by a quarter a hold; a probe the path
 * refuses (down within 3 s) doubles the hold, so a stream at the path's
 * rate probes seldom. */
GST_START_TEST (test_probes_while_nothing_waits_and_backs_off)
{
  Run r;
  guint before;

  run_init (&r, 300000, 4000000, 1000000);
  feed_limited (&r, 0.5, 1000000, FALSE);
  fail_unless_equals_uint64 (mtcp_bitrate_control_bps (r.c), 1250000);
  feed_limited (&r, 0.5, 1250000, FALSE);
  fail_unless_equals_uint64 (mtcp_bitrate_control_bps (r.c), 1250000);
  feed_limited (&r, 0.5, 1250000, FALSE);
  fail_unless_equals_uint64 (mtcp_bitrate_control_bps (r.c), 1562500);
  /* the path carries 1.5 Mbit/s: the probe failed, down to its share */
  feed_limited (&r, 0.5, 1500000, TRUE);
  fail_unless_equals_uint64 (mtcp_bitrate_control_bps (r.c), 1200000);
  /* the next probe waits two holds, the one after four */
  feed_limited (&r, 1.5, 1500000, FALSE);
  fail_unless_equals_uint64 (mtcp_bitrate_control_bps (r.c), 1200000);
  feed_limited (&r, 0.5, 1500000, FALSE);
  fail_unless_equals_uint64 (mtcp_bitrate_control_bps (r.c), 1500000);
  feed_limited (&r, 0.5, 1500000, TRUE);
  fail_unless_equals_uint64 (mtcp_bitrate_control_bps (r.c), 1200000);
  before = r.changes;
  feed_limited (&r, 3.5, 1500000, FALSE);
  fail_unless_equals_int (r.changes, before);
  feed_limited (&r, 0.5, 1500000, FALSE);
  fail_unless_equals_int (r.changes, before + 1);
  /* at most four holds */
  feed_limited (&r, 0.5, 1500000, TRUE);
  fail_unless_equals_uint64 (mtcp_bitrate_control_bps (r.c), 1200000);
  before = r.changes;
  feed_limited (&r, 3.5, 1500000, FALSE);
  fail_unless_equals_int (r.changes, before);
  feed_limited (&r, 0.5, 1500000, FALSE);
  fail_unless_equals_int (r.changes, before + 1);
  /* over a minute at the path's rate: a probe every 4 s at most */
  before = r.changes;
  {
    guint i;
    for (i = 0; i < 120; i++)
      feed_limited (&r, 0.5, 1500000, mtcp_bitrate_control_bps (r.c) >
          1300000);
  }
  fail_unless (r.changes - before <= 2 * (60 / 4 + 1), "%u changes",
      r.changes - before);
  fail_unless (mtcp_bitrate_control_bps (r.c) >= 1200000);
  mtcp_bitrate_control_free (r.c);

  /* two refused probes (four holds), then one the path takes: once it
   * held 3 s the hold is one again */
  run_init (&r, 300000, 4000000, 1000000);
  feed_limited (&r, 0.5, 1000000, FALSE);
  feed_limited (&r, 0.5, 1000000, TRUE);
  feed_limited (&r, 2, 1000000, FALSE);
  feed_limited (&r, 0.5, 1000000, TRUE);
  fail_unless_equals_uint64 (mtcp_bitrate_control_bps (r.c), 800000);
  feed_limited (&r, 3.5, 1000000, FALSE);
  fail_unless_equals_uint64 (mtcp_bitrate_control_bps (r.c), 800000);
  feed_limited (&r, 0.5, 1000000, FALSE);
  fail_unless_equals_uint64 (mtcp_bitrate_control_bps (r.c), 1000000);
  before = r.changes;
  feed_limited (&r, 2.5, 1250000, FALSE);
  fail_unless_equals_int (r.changes, before);
  feed_limited (&r, 0.5, 1250000, FALSE);
  fail_unless_equals_int (r.changes, before + 1);
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
 * the path limits it): no reason to go down; only the path's is. At max
 * there is nothing to probe for. */
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

/* Dark: the least at once; back: up from there by doublings, each after
 * a hold, so the top comes in a few seconds, not at once. */
GST_START_TEST (test_outage_starts_low)
{
  Run r;

  run_init (&r, 300000, 4000000, 4000000);
  feed (&r, 2, 6000000);
  feed (&r, 0.5, 0);
  fail_unless_equals_uint64 (mtcp_bitrate_control_bps (r.c), 300000);
  feed (&r, 0.5, 0);
  feed (&r, 0.5, 6000000);
  fail_unless_equals_uint64 (mtcp_bitrate_control_bps (r.c), 600000);
  feed (&r, 0.5, 6000000);
  fail_unless_equals_uint64 (mtcp_bitrate_control_bps (r.c), 600000);
  feed (&r, 2, 6000000);
  fail_unless_equals_uint64 (mtcp_bitrate_control_bps (r.c), 2400000);
  feed (&r, 1, 6000000);
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
  tcase_add_test (tc, test_up_after_a_hold_towards_the_share);
  tcase_add_test (tc, test_probes_while_nothing_waits_and_backs_off);
  tcase_add_test (tc, test_noise_changes_nothing);
  tcase_add_test (tc, test_outage_starts_low);
  tcase_add_test (tc, test_stream_limited_estimate_is_a_floor);
  return s;
}

GST_CHECK_MAIN (bitrate);

/* multitcp
 * Copyright (C) 2026 the multitcp authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
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
  guint64 probe_bps;            /* what the last padding probe asked for */
  gint64 probe_end_us;          /* and until when its padding is seen */
  gboolean padding, after_outage;       /* set before each update, as the
                                         * sink does */
} Run;

static void
run_init (Run * r, guint64 min, guint64 max, guint64 start)
{
  MtcpBitrateBounds b = { min, max };
  r->c = mtcp_bitrate_control_new (&b, start);
  r->now_us = 1000 * G_USEC_PER_SEC;
  r->changes = 0;
  r->probe_bps = 0;
  r->probe_end_us = 0;
  r->padding = r->after_outage = FALSE;
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
            estimate, 0, &bps)) {
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
 * after the last change, a receiver's latency unknown), then towards the
 * estimate's share, at most a doubling a step, never past the share,
 * never above max. */
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

/* A path of @capacity: it delivers what the encoder makes up to its rate,
 * and is the limit above it. @seconds of it, told every half second. */
static void
feed_path (Run * r, gdouble seconds, guint64 capacity)
{
  gint64 end = r->now_us + (gint64) (seconds * G_USEC_PER_SEC);
  guint64 bps = 0;

  while (r->now_us < end) {
    guint64 now_bps = mtcp_bitrate_control_bps (r->c);
    r->now_us += STEP_US;
    if (mtcp_bitrate_control_update (r->c, r->now_us, MIN (now_bps,
                capacity), now_bps > capacity, MIN (now_bps, capacity), 0,
            &bps))
      r->changes++;
  }
}

/* A stream below what the path carries measures no more than itself:
 * while nothing waits and no step was refused, for a receiver with 2 s
 * of latency it probes up quickly (three quarters a 0.6 s hold), with
 * 1 s by a quarter a 1 s hold, until the path refuses; refused again at
 * the same level (down within 3 s), the steps are a quarter and the hold
 * doubles, so a stream at a steady path's rate probes seldom and stays
 * near it. */
GST_START_TEST (test_probes_while_nothing_waits_and_backs_off)
{
  Run r;
  guint before;
  gint64 at;

  run_init (&r, 300000, 8000000, 1000000);
  mtcp_bitrate_control_set_budget (r.c, 2 * G_USEC_PER_SEC);
  feed_limited (&r, 0.5, 1000000, FALSE);
  fail_unless_equals_uint64 (mtcp_bitrate_control_bps (r.c), 1750000);
  feed_limited (&r, 0.5, 1750000, FALSE);
  fail_unless_equals_uint64 (mtcp_bitrate_control_bps (r.c), 1750000);
  feed_limited (&r, 0.5, 1750000, FALSE);
  fail_unless_equals_uint64 (mtcp_bitrate_control_bps (r.c), 3062500);
  mtcp_bitrate_control_free (r.c);

  /* with a receiver's latency of 1 s, a quarter a hold of 1 s (and its
   * owner updates it at the estimates told, not at every tick) */
  fail_unless (mtcp_bitrate_control_quick_budget (2 * G_USEC_PER_SEC));
  fail_if (mtcp_bitrate_control_quick_budget (1999 *
          G_TIME_SPAN_MILLISECOND));
  fail_if (mtcp_bitrate_control_quick_budget (0));
  run_init (&r, 300000, 8000000, 1000000);
  mtcp_bitrate_control_set_budget (r.c, G_USEC_PER_SEC);
  feed_limited (&r, 0.5, 1000000, FALSE);
  fail_unless_equals_uint64 (mtcp_bitrate_control_bps (r.c), 1250000);
  feed_limited (&r, 0.5, 1250000, FALSE);
  fail_unless_equals_uint64 (mtcp_bitrate_control_bps (r.c), 1250000);
  feed_limited (&r, 0.5, 1250000, FALSE);
  fail_unless_equals_uint64 (mtcp_bitrate_control_bps (r.c), 1562500);
  mtcp_bitrate_control_free (r.c);

  /* a 2 Mbit/s path from 1 Mbit/s: up within a few seconds, then a
   * minute around it with few changes */
  run_init (&r, 300000, 8000000, 1000000);
  mtcp_bitrate_control_set_budget (r.c, 2 * G_USEC_PER_SEC);
  feed_path (&r, 5, 2000000);
  fail_unless (mbps (&r) >= 1.5, "%f", mbps (&r));
  before = r.changes;
  at = r.now_us;
  while (r.now_us < at + 60 * G_USEC_PER_SEC) {
    feed_path (&r, 0.5, 2000000);
    fail_unless (mbps (&r) >= 1.2 && mbps (&r) <= 2.6, "%f", mbps (&r));
  }
  /* a refused probe and its cut every four holds at most */
  fail_unless (r.changes - before <= 2 * (60 / 4 + 1), "%u changes",
      r.changes - before);
  /* the path grows to 8 Mbit/s: a probe it takes and holds 3 s brings
   * the hold back to one, so the climb is not four holds a step (which
   * would take 16 s to 4 Mbit/s) */
  feed_path (&r, 12, 8000000);
  fail_unless (mbps (&r) >= 4.0, "%f", mbps (&r));
  mtcp_bitrate_control_free (r.c);
}

GST_END_TEST;

static gboolean
tell (MtcpBitrateControl * c, gint64 at_us, guint64 estimate,
    gboolean limited, guint64 * bps)
{
  return mtcp_bitrate_control_update (c, at_us, estimate, limited, estimate,
      0, bps);
}

/* One estimate told at @at_ms: whether it changes the bitrate, and to
 * what (0: not checked). */
typedef struct {
  gint64 at_ms;
  guint64 estimate;
  gboolean limited;
  gboolean changes;
  guint64 bps;
} Told;

static void
play (MtcpBitrateControl * c, const Told * steps, guint n)
{
  guint i;

  for (i = 0; i < n; i++) {
    guint64 bps = 0;
    gboolean changed = tell (c, (1000 * G_USEC_PER_SEC) +
        steps[i].at_ms * G_TIME_SPAN_MILLISECOND, steps[i].estimate,
        steps[i].limited, &bps);

    fail_unless (changed == steps[i].changes, "step %u at %" G_GINT64_FORMAT
        " ms: changed %d", i, steps[i].at_ms, changed);
    if (steps[i].bps)
      fail_unless_equals_uint64 (bps, steps[i].bps);
  }
}

/* From 1 Mbit/s (0.3-8) for a receiver with 2 s of latency: quick steps. */
static MtcpBitrateControl *
quick_control_new (void)
{
  MtcpBitrateBounds b = { 300000, 8000000 };
  MtcpBitrateControl *c = mtcp_bitrate_control_new (&b, 1000000);

  mtcp_bitrate_control_set_budget (c, 2 * G_USEC_PER_SEC);
  return c;
}

/* Quick steps while the path refuses them at different levels (a cellular
 * path moves), careful ones once it refuses two at one level: the first
 * refusal, at 1.5 Mbit/s, leaves the steps quick; the second at 1.55
 * makes the next wait two holds and be a quarter; a step that holds 3 s
 * at that level leaves them careful (it only says the stream fits); a
 * refusal at 0.8 (the path moved) makes them quick again. */
GST_START_TEST (test_quick_steps_until_refused_at_one_level)
{
  static const Told steps[] = {
    {0, 1000000, FALSE, TRUE, 1750000},
    {500, 1500000, TRUE, TRUE, 1200000},
    /* refused once: still quick, after 0.6 s */
    {1000, 1500000, FALSE, FALSE, 0},
    {1100, 1500000, FALSE, TRUE, 2100000},
    {1300, 1550000, TRUE, TRUE, 1240000},
    /* refused again where it was: two holds, then a quarter */
    {3200, 1550000, FALSE, FALSE, 0},
    {3300, 1550000, FALSE, TRUE, 1550000},
    /* held 3 s where the path refused before: still careful (quick, it
     * would be 2.7 Mbit/s) */
    {5200, 1550000, FALSE, FALSE, 0},
    {6400, 1550000, FALSE, TRUE, 1937500},
    /* refused at 0.8 Mbit/s: the path moved, quick again */
    {6600, 800000, TRUE, TRUE, 640000},
    {7100, 800000, FALSE, FALSE, 0},
    {7300, 800000, FALSE, TRUE, 1120000},
  };
  MtcpBitrateControl *c = quick_control_new ();

  play (c, steps, G_N_ELEMENTS (steps));
  mtcp_bitrate_control_free (c);
}

GST_END_TEST;

/* A fall in three cuts a tick apart after a step up is one refusal: the
 * steps stay quick; the next refusal at that level makes them careful. */
GST_START_TEST (test_cuts_of_one_fall_are_one_refusal)
{
  static const Told steps[] = {
    {0, 1000000, FALSE, TRUE, 1750000},
    {200, 1500000, TRUE, TRUE, 0},
    {400, 1300000, TRUE, TRUE, 0},
    {600, 1150000, TRUE, TRUE, 920000},
    /* quick: 0.6 s after the last cut, three quarters */
    {1000, 1150000, FALSE, FALSE, 0},
    {1200, 1150000, FALSE, TRUE, 1610000},
    /* refused at 1.15 Mbit/s again: careful */
    {1400, 1150000, TRUE, TRUE, 920000},
    {3200, 1150000, FALSE, FALSE, 0},
    {3400, 1150000, FALSE, TRUE, 1150000},
  };
  MtcpBitrateControl *c = quick_control_new ();

  play (c, steps, G_N_ELEMENTS (steps));
  mtcp_bitrate_control_free (c);
}

GST_END_TEST;

/* Refusals at one level made the steps careful; another receiver
 * followed, with a latency of 1 s and then 2 s again: quick again, no
 * refusal carries over. */
GST_START_TEST (test_refusals_do_not_carry_over)
{
  static const Told refused[] = {
    {0, 1000000, FALSE, TRUE, 1750000},
    {500, 1500000, TRUE, TRUE, 1200000},
    {1100, 1500000, FALSE, TRUE, 2100000},
    {1300, 1550000, TRUE, TRUE, 1240000},
  };
  /* careful: two holds; quick: 0.6 s after the last change */
  static const Told careful = { 1900, 1550000, FALSE, FALSE, 0 };
  static const Told quick = { 1900, 1550000, FALSE, TRUE, 2170000 };
  MtcpBitrateControl *c = quick_control_new ();

  play (c, refused, G_N_ELEMENTS (refused));
  play (c, &careful, 1);
  mtcp_bitrate_control_free (c);

  c = quick_control_new ();
  play (c, refused, G_N_ELEMENTS (refused));
  mtcp_bitrate_control_set_budget (c, G_USEC_PER_SEC);
  mtcp_bitrate_control_set_budget (c, 2 * G_USEC_PER_SEC);
  play (c, &quick, 1);
  mtcp_bitrate_control_free (c);
}

GST_END_TEST;

/* The path delivers all the stream makes but says it is the limit (its
 * queue grows): a cut to the share, which drains it. */
GST_START_TEST (test_cut_when_the_path_queues)
{
  Run r;

  run_init (&r, 300000, 4000000, 2000000);
  feed_limited (&r, 0.5, 1980000, TRUE);
  fail_unless_equals_uint64 (mtcp_bitrate_control_bps (r.c), 1584000);
  fail_unless_equals_int (r.changes, 1);
  mtcp_bitrate_control_free (r.c);
}

GST_END_TEST;

/* The path carries 1.5 Mbit/s under a 2 Mbit/s stream and 0.6 s of it
 * waits: the share (1.2 Mbit/s) would leave a fifth to drain it, which
 * the stream's overhead eats; the cut leaves room to drain it within a
 * second (0.6 Mbit/s). As the backlog drains, no further cut; 0.1 s
 * waiting (a keyframe's) cuts to the share only. */
GST_START_TEST (test_cut_drains_a_backlog)
{
  MtcpBitrateBounds b = { 300000, 4000000 };
  MtcpBitrateControl *c = mtcp_bitrate_control_new (&b, 2000000);
  gint64 now = 1000 * G_USEC_PER_SEC;
  guint64 bps = 0;

  fail_unless (mtcp_bitrate_control_update (c, now, 1500000, TRUE, 1500000,
          600 * G_TIME_SPAN_MILLISECOND, &bps));
  fail_unless_equals_uint64 (bps, 600000);
  fail_if (mtcp_bitrate_control_update (c, now + STEP_US, 1500000, TRUE,
          1500000, 400 * G_TIME_SPAN_MILLISECOND, &bps));
  /* the path fell further meanwhile: cut again */
  fail_unless (mtcp_bitrate_control_update (c, now + 2 * STEP_US, 900000,
          TRUE, 900000, 400 * G_TIME_SPAN_MILLISECOND, &bps));
  fail_unless_equals_uint64 (bps, 540000);
  mtcp_bitrate_control_free (c);
  c = mtcp_bitrate_control_new (&b, 2000000);
  fail_unless (mtcp_bitrate_control_update (c, now, 1500000, TRUE, 1500000,
          100 * G_TIME_SPAN_MILLISECOND, &bps));
  fail_unless_equals_uint64 (bps, 1200000);
  mtcp_bitrate_control_free (c);
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

/* As feed_path, with padding probes: while one runs (its padding, seen
 * in the estimate for a step) the path carries the
 * stream and the padding up to its capacity; while the stream is the
 * limit the estimate is at least @guess (TCP's windows: bbr keeps a rate
 * it measured long ago). The probes asked for in @probes, the most the
 * encoder made in @most. */
static void
feed_probed_path (Run * r, gdouble seconds, guint64 capacity, guint64 guess,
    guint * probes, guint64 * most)
{
  gint64 end = r->now_us + (gint64) (seconds * G_USEC_PER_SEC);
  guint64 bps = 0, total;

  while (r->now_us < end) {
    guint64 now_bps = mtcp_bitrate_control_bps (r->c);
    guint64 sent = r->now_us < r->probe_end_us ? MAX (r->probe_bps, now_bps) :
        now_bps;
    r->now_us += STEP_US;
    mtcp_bitrate_control_set_padding_probes (r->c, r->padding);
    mtcp_bitrate_control_set_padding_after_outage (r->c, r->after_outage);
    if (mtcp_bitrate_control_update (r->c, r->now_us, sent > capacity ?
            capacity : MAX (guess, sent), sent > capacity, MIN (sent,
                capacity), 0, &bps))
      r->changes++;
    if (mtcp_bitrate_control_take_probe (r->c, &total)) {
      r->probe_bps = total;
      r->probe_end_us = total ? r->now_us + STEP_US + 1 : 0;
      if (total)
        (*probes)++;
    }
    *most = MAX (*most, mtcp_bitrate_control_bps (r->c));
  }
}

/* With padding probes the encoder never goes where the path was not seen
 * to carry, whatever the windows guess: on a path of 1.2 Mbit/s a
 * 1 Mbit/s stream stays, its probes failing and backing off (one each 1,
 * 2, then 4 holds); on a path of 8 Mbit/s each probe lets it double, up
 * to max. */
GST_START_TEST (test_padding_probes_commit_nothing)
{
  Run r;
  guint probes = 0;
  guint64 most = 0, total;

  run_init (&r, 300000, 4000000, 1000000);
  r.padding = TRUE;
  feed_probed_path (&r, 30, 1200000, 8000000, &probes, &most);
  fail_unless_equals_uint64 (most, 1000000);
  fail_unless_equals_int (r.changes, 0);
  /* 1 + 1.2 s, 2 + 1.2 s, then 4 + 1.2 s each */
  fail_unless (probes >= 5 && probes <= 7, "%u probes", probes);
  mtcp_bitrate_control_free (r.c);

  run_init (&r, 300000, 4000000, 1000000);
  r.padding = TRUE;
  probes = 0;
  feed_probed_path (&r, 0.5, 8000000, 8000000, &probes, &most);
  fail_unless_equals_int (probes, 1);
  /* what a doubled stream would need at its share */
  fail_unless_equals_uint64 (r.probe_bps, 2500000);
  fail_unless (mtcp_bitrate_control_take_probe (r.c, &total) == FALSE);
  fail_unless_equals_uint64 (mtcp_bitrate_control_bps (r.c), 1000000);
  feed_probed_path (&r, 10, 8000000, 8000000, &probes, &most);
  fail_unless_equals_uint64 (mtcp_bitrate_control_bps (r.c), 4000000);
  fail_unless_equals_int (r.changes, 2);
  mtcp_bitrate_control_free (r.c);
}

GST_END_TEST;

/* bitrate-probe=after-outage from @start bit/s (bounds 0.3-8 Mbit/s)
 * through half a second of a dark path */
static void
run_through_outage_after_outage (Run * r, guint64 start)
{
  run_init (r, 300000, 8000000, start);
  r->after_outage = TRUE;
  mtcp_bitrate_control_set_padding_after_outage (r->c, TRUE);
  feed (r, 0.5, 0);
}

/* bitrate-probe=after-outage: dark at 2 Mbit/s, the path back at 1.2
 * Mbit/s while the windows still guess 8. The encoder rises only as far as
 * padding showed the path carries, where plain encoder probing doubles on
 * the guess onto it. Once the path lets it back to 2 Mbit/s, where the
 * outage found it, or 10 s after the path came back, the windows are
 * trusted again: it rises above what padding alone would show. */
GST_START_TEST (test_padding_after_an_outage)
{
  Run r;
  guint probes = 0;
  guint64 most = 0;

  run_through_outage_after_outage (&r, 2000000);
  fail_unless_equals_uint64 (mtcp_bitrate_control_bps (r.c), 300000);
  feed_probed_path (&r, 8, 1200000, 8000000, &probes, &most);
  fail_unless (most < 1200000, "%" G_GUINT64_FORMAT, most);
  fail_unless (probes >= 2, "%u probes", probes);
  most = 0;
  feed_probed_path (&r, 20, 4000000, 8000000, &probes, &most);
  fail_unless (most > 3200000, "%" G_GUINT64_FORMAT, most);
  mtcp_bitrate_control_free (r.c);

  /* a path that came back slower for good: 10 s on, the windows are
   * trusted again all the same (padding throughout delivered less) */
  run_through_outage_after_outage (&r, 2000000);
  most = probes = 0;
  feed_probed_path (&r, 8, 1200000, 8000000, &probes, &most);
  fail_unless (most < 1200000, "%" G_GUINT64_FORMAT, most);
  feed_probed_path (&r, 10, 1200000, 8000000, &probes, &most);
  fail_unless (most > 1200000, "%" G_GUINT64_FORMAT, most);
  mtcp_bitrate_control_free (r.c);

  /* an outage that begins with cuts a tick apart (the path thins, then
   * goes): what the encoder made before the cuts is where it must get
   * back to, not the least the last cut left */
  run_init (&r, 300000, 8000000, 4000000);
  r.after_outage = TRUE;
  mtcp_bitrate_control_set_padding_after_outage (r.c, TRUE);
  feed (&r, 0.5, 2000000);
  feed (&r, 0.5, 400000);
  fail_unless_equals_uint64 (mtcp_bitrate_control_bps (r.c), 320000);
  feed (&r, 0.5, 0);
  most = probes = 0;
  feed_probed_path (&r, 8, 1200000, 8000000, &probes, &most);
  fail_unless (most < 1200000, "%" G_GUINT64_FORMAT, most);
  fail_unless (probes >= 2, "%u probes", probes);

  /* the property back to encoder: the windows raise it again, after a
   * hold (up to 4 s after failed probes) */
  r.after_outage = FALSE;
  most = 0;
  feed_probed_path (&r, 10, 1200000, 8000000, &probes, &most);
  fail_unless (most > 1200000, "%" G_GUINT64_FORMAT, most);
  mtcp_bitrate_control_free (r.c);

  /* the same outage without: the guess doubles it past the path */
  run_init (&r, 300000, 8000000, 2000000);
  feed (&r, 0.5, 0);
  most = probes = 0;
  feed_probed_path (&r, 10, 1200000, 8000000, &probes, &most);
  fail_unless (most > 1200000, "%" G_GUINT64_FORMAT, most);
  fail_unless_equals_int (probes, 0);
  mtcp_bitrate_control_free (r.c);
}

GST_END_TEST;

/* A probe after which the path limits: the encoder is cut to its share of
 * what arrived (the padding may be what filled the path, but the stream
 * was above its share of it), and the padding left stops. */
GST_START_TEST (test_padding_probe_that_fills_the_path_stops)
{
  Run r;
  guint64 bps = 0, total = 0;

  run_init (&r, 300000, 4000000, 1000000);
  mtcp_bitrate_control_set_padding_probes (r.c, TRUE);
  r.now_us += STEP_US;
  fail_if (mtcp_bitrate_control_update (r.c, r.now_us, 1000000, FALSE,
          1000000, 0, &bps));
  fail_unless (mtcp_bitrate_control_take_probe (r.c, &total));
  fail_unless_equals_uint64 (total, 2500000);
  r.now_us += STEP_US;
  fail_unless (mtcp_bitrate_control_update (r.c, r.now_us, 1100000, TRUE,
          1100000, 0, &bps));
  fail_unless_equals_uint64 (bps, 880000);
  fail_unless (mtcp_bitrate_control_take_probe (r.c, &total));
  fail_unless_equals_uint64 (total, 0);
  fail_if (mtcp_bitrate_control_take_probe (r.c, &total));
  /* it failed: the next probe after two holds, not one */
  r.now_us += G_USEC_PER_SEC + STEP_US;
  fail_if (mtcp_bitrate_control_update (r.c, r.now_us, 880000, FALSE,
          880000, 0, &bps));
  fail_if (mtcp_bitrate_control_take_probe (r.c, &total));
  r.now_us += G_USEC_PER_SEC;
  fail_if (mtcp_bitrate_control_update (r.c, r.now_us, 880000, FALSE,
          880000, 0, &bps));
  fail_unless (mtcp_bitrate_control_take_probe (r.c, &total));
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
  tcase_add_test (tc, test_quick_steps_until_refused_at_one_level);
  tcase_add_test (tc, test_cuts_of_one_fall_are_one_refusal);
  tcase_add_test (tc, test_refusals_do_not_carry_over);
  tcase_add_test (tc, test_padding_probes_commit_nothing);
  tcase_add_test (tc, test_padding_probe_that_fills_the_path_stops);
  tcase_add_test (tc, test_padding_after_an_outage);
  tcase_add_test (tc, test_noise_changes_nothing);
  tcase_add_test (tc, test_cut_when_the_path_queues);
  tcase_add_test (tc, test_cut_drains_a_backlog);
  tcase_add_test (tc, test_outage_starts_low);
  tcase_add_test (tc, test_stream_limited_estimate_is_a_floor);
  return s;
}

GST_CHECK_MAIN (bitrate);

/* multitcp
 * Copyright (C) 2026 the multitcp authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
/* The receiver's controllers, fed measurement traces step by step. */
#include <gst/check/gstcheck.h>

#include "mtcpadjustwindow.h"
#include "mtcpadjustconn.h"
#include "mtcpmultfrc.h"
#include "mtcppars.h"
#include "mtcpsharetrial.h"
#include "mtcppacedcount.h"
#include "mtcpprotocol.h"

#include <math.h>
#include <string.h>

static void
expect_windows (MtcpAdjustWindow * aw, const guint * want, guint n)
{
  guint i;
  fail_unless_equals_int (aw->n, n);
  for (i = 0; i < n; i++)
    fail_unless_equals_int (aw->windows[i], want[i]);
}

GST_START_TEST (test_adjust_window_steps)
{
  MtcpAdjustWindowParams p = { 0.0, 7000, 2.0, 1000 };
  MtcpAdjustWindow aw;
  guint w0[] = { 4, 3, 3 }, w1[] = { 5, 5, 5 }, w2[] = { 4, 4, 5 };

  /* T_d 100 kB/s, RTT 100 ms, MSS 1000: 10 segments over 3 */
  mtcp_adjust_window_init (&aw, &p, 3, 100000, 0.1);
  expect_windows (&aw, w0, 3);

  /* short by 50 kB/s: ceil(50000 * 0.1 / 1000) = 5 segments more */
  fail_unless_equals_int (mtcp_adjust_window_update (&aw, 50000, 0.1, TRUE),
      MTCP_WINDOW_INCREASE);
  expect_windows (&aw, w1, 3);

  /* short, but the sender had nothing queued: hold */
  fail_unless_equals_int (mtcp_adjust_window_update (&aw, 50000, 0.1, FALSE),
      MTCP_WINDOW_HOLD);
  expect_windows (&aw, w1, 3);
  fail_unless (strstr (aw.reason, "nothing queued") != NULL);

  /* 20 kB/s over: 2 segments fewer, taken from the largest */
  fail_unless_equals_int (mtcp_adjust_window_update (&aw, 120000, 0.1, TRUE),
      MTCP_WINDOW_DECREASE);
  expect_windows (&aw, w2, 3);

  /* within the guard lambda: hold */
  fail_unless_equals_int (mtcp_adjust_window_update (&aw, 105000, 0.1, TRUE),
      MTCP_WINDOW_HOLD);
  expect_windows (&aw, w2, 3);

  /* nothing arrives: grow, but never past f * T_d * RTT / MSS = 20 */
  mtcp_adjust_window_update (&aw, 0, 0.1, TRUE);
  fail_unless_equals_int (mtcp_adjust_window_sum (&aw), 20);
  mtcp_adjust_window_update (&aw, 0, 0.1, TRUE);
  fail_unless_equals_int (mtcp_adjust_window_sum (&aw), 20);
  fail_unless_equals_float (mtcp_adjust_window_congestion_ratio (&aw, 0.1),
      2.0);

  /* two more connections share the same total */
  mtcp_adjust_window_set_connections (&aw, 5);
  fail_unless_equals_int (mtcp_adjust_window_sum (&aw), 20);
  fail_unless_equals_int (aw.windows[4], 4);
}

GST_END_TEST;

GST_START_TEST (test_adjust_window_smoothing_and_balance)
{
  MtcpAdjustWindowParams p = { 0.9, 7000, 6.0, 1448 };
  MtcpAdjustWindow aw;
  GRand *rand = g_rand_new_with_seed (5);
  guint step, i;

  mtcp_adjust_window_init (&aw, &p, 5, 100000, 0.05);
  mtcp_adjust_window_update (&aw, 50000, 0.05, TRUE);
  fail_unless_equals_float (aw.measured, 50000);
  mtcp_adjust_window_update (&aw, 150000, 0.05, TRUE);
  fail_unless (fabs (aw.measured - (0.9 * 50000 + 0.1 * 150000)) < 1e-6);

  /* any trace: windows differ by at most one and never reach zero */
  for (step = 0; step < 2000; step++) {
    guint lo = G_MAXUINT, hi = 0;
    mtcp_adjust_window_update (&aw, g_rand_double_range (rand, 0, 300000),
        g_rand_double_range (rand, 0.01, 0.3), g_rand_boolean (rand));
    if (step % 100 == 0)
      mtcp_adjust_window_set_connections (&aw, g_rand_int_range (rand, 1, 9));
    for (i = 0; i < aw.n; i++) {
      lo = MIN (lo, aw.windows[i]);
      hi = MAX (hi, aw.windows[i]);
    }
    fail_unless (hi - lo <= 1 && lo >= 1, "step %u: windows %u..%u", step, lo,
        hi);
  }
  g_rand_free (rand);
}

GST_END_TEST;

/* T_d: the stream's rate times headroom when automatic; a target under
 * the stream's own rate is raised to it. A stream 5% over an 800 kbit/s
 * target (x264 CBR does that) must not see its windows shrunk each
 * interval down to one segment. */
GST_START_TEST (test_desired_rate_never_under_the_stream)
{
  MtcpAdjustWindowParams p = { 0.9, 3000, 10.0, 1448 };
  MtcpAdjustWindow aw;
  gdouble td, stream = 105000;  /* bytes/s: 840 kbit/s */
  guint step, floor_sum;

  fail_unless_equals_float (mtcp_adjust_window_desired (0, 100000, 1.6),
      160000);
  fail_unless_equals_float (mtcp_adjust_window_desired (0, 0, 1.6), 0);
  fail_unless_equals_float (mtcp_adjust_window_desired (200000, 100000, 1.6),
      200000);
  fail_unless_equals_float (mtcp_adjust_window_desired (100000, 0, 1.6),
      100000);

  td = mtcp_adjust_window_desired (100000, stream, 1.6);
  fail_unless_equals_float (td, stream);
  mtcp_adjust_window_init (&aw, &p, 5, td, 0.1);
  /* the sender is never backlogged: T_m is the stream's own rate */
  for (step = 0; step < 100; step++)
    mtcp_adjust_window_update (&aw, stream, 0.1, FALSE);
  floor_sum = (guint) (stream * 0.1 / 1448);
  fail_unless (mtcp_adjust_window_sum (&aw) >= floor_sum,
      "window sum %u under the stream's %u segments",
      mtcp_adjust_window_sum (&aw), floor_sum);
  /* with the raw 100000 B/s as T_d the same trace shrinks them to 1 each */
  mtcp_adjust_window_init (&aw, &p, 5, 100000, 0.1);
  for (step = 0; step < 100; step++)
    mtcp_adjust_window_update (&aw, stream, 0.1, FALSE);
  fail_unless_equals_int (mtcp_adjust_window_sum (&aw), 5);
}

GST_END_TEST;

GST_START_TEST (test_adjust_conn_steps)
{
  MtcpAdjustConnParams p = { 1.0, 5.0 };
  MtcpAdjustConn ac;

  mtcp_adjust_conn_init (&ac, &p);
  fail_unless_equals_int (mtcp_adjust_conn_update (&ac, 1.0, 90, 100, TRUE), 0);
  /* congestion rose by more than beta and we are short: one more */
  fail_unless_equals_int (mtcp_adjust_conn_update (&ac, 2.5, 90, 100, TRUE), 1);
  /* rose, but by less than beta from the new reference */
  fail_unless_equals_int (mtcp_adjust_conn_update (&ac, 3.0, 90, 100, TRUE), 0);
  /* rose by more than beta but the target is met: keep */
  fail_unless_equals_int (mtcp_adjust_conn_update (&ac, 3.6, 110, 100, TRUE),
      0);
  /* fell by more than beta and over the target: one fewer */
  fail_unless_equals_int (mtcp_adjust_conn_update (&ac, 1.2, 110, 100, TRUE),
      -1);
  /* at or over cf but the sender had nothing queued: the windows are
   * idle, not the path congested (after a congestion episode): keep */
  fail_unless_equals_int (mtcp_adjust_conn_update (&ac, 9.0, 10, 100,
          FALSE), 0);
  fail_unless (strstr (ac.reason, "nothing queued") != NULL);
  /* at or over cf with a backlog: severe congestion, one fewer whatever
   * the rate */
  fail_unless_equals_int (mtcp_adjust_conn_update (&ac, 5.0, 10, 100, TRUE),
      -1);
  fail_unless (strstr (ac.reason, "cf") != NULL);
}

GST_END_TEST;

GST_START_TEST (test_multfrc_iiad)
{
  MtcpMultfrcParams p = { 1.0, 1.0, 0.2, 3, 1, 32 };
  MtcpMultfrc mf;

  mtcp_multfrc_init (&mf, &p, 1);
  fail_if (mtcp_multfrc_add_rtt (&mf, 0.1));
  fail_if (mtcp_multfrc_add_rtt (&mf, 0.1));
  fail_unless (mtcp_multfrc_add_rtt (&mf, 0.1));
  /* no queueing: n + alpha / n */
  fail_unless_equals_float (mf.n, 2.0);
  mtcp_multfrc_add_rtt (&mf, 0.1);
  mtcp_multfrc_add_rtt (&mf, 0.11);
  mtcp_multfrc_add_rtt (&mf, 0.1);
  /* ave 0.1033 - 0.1 < 0.2 * 0.1: still increase */
  fail_unless_equals_float (mf.n, 2.5);
  fail_unless_equals_int (mtcp_multfrc_connections (&mf), 2);
  mtcp_multfrc_add_rtt (&mf, 0.13);
  mtcp_multfrc_add_rtt (&mf, 0.13);
  mtcp_multfrc_add_rtt (&mf, 0.13);
  /* a queue builds: ave - rtt_min = 30 ms > 20 ms: n - beta */
  fail_unless_equals_float (mf.n, 1.5);
  fail_unless (fabs (mf.rtt_min - 0.1) < 1e-9);
  /* bounded below */
  mtcp_multfrc_add_rtt (&mf, 0.2);
  mtcp_multfrc_add_rtt (&mf, 0.2);
  mtcp_multfrc_add_rtt (&mf, 0.2);
  fail_unless_equals_float (mf.n, 1.0);
}

GST_END_TEST;

GST_START_TEST (test_pars_model)
{
  /* 12.8 Mbit/s (8 Mbit/s x 1.6) over 100 ms at 1% loss: tau*C = 110.5
   * segments, sqrt(p) = 0.1, / (1.22 * 0.99) = 9.15 -> 10 flows */
  fail_unless_equals_int (mtcp_pars_connections (12.8e6, 0.1, 0.01, 1448,
          MTCP_PARS_PHI_RENO, 1, 64), 10);
  /* 3% loss needs more */
  fail_unless_equals_int (mtcp_pars_connections (12.8e6, 0.1, 0.03, 1448,
          MTCP_PARS_PHI_RENO, 1, 64), 17);
  /* no loss: one is enough; bounds hold */
  fail_unless_equals_int (mtcp_pars_connections (12.8e6, 0.1, 0, 1448,
          MTCP_PARS_PHI_RENO, 2, 64), 2);
  fail_unless_equals_int (mtcp_pars_connections (1e9, 0.3, 0.1, 1448,
          MTCP_PARS_PHI_RENO, 1, 32), 32);
}

GST_END_TEST;

/* Eqs. 1-3: the fit recovers C and M from two counts of an Eq. 1 link,
 * and the probe steps 1, 2 (then 4, 8 while the rate scales) to the count
 * Eq. 1 gives for the share. */
static gdouble
eq1 (guint n, gdouble c, gdouble m)
{
  return n * c / (n + m);
}

GST_START_TEST (test_pars_shared_link_fit)
{
  gdouble c = 0, m = 0;
  MtcpParsProbe probe;

  fail_unless (mtcp_pars_fit_shared_link (1, eq1 (1, 1.25e6, 3), 2,
          eq1 (2, 1.25e6, 3), &c, &m));
  fail_unless (fabs (c - 1.25e6) < 1 && fabs (m - 3) < 1e-6, "C %f M %f", c, m);
  fail_unless (mtcp_pars_fit_shared_link (2, eq1 (2, 1e6, 5), 4,
          eq1 (4, 1e6, 5), &c, &m));
  fail_unless (fabs (c - 1e6) < 1 && fabs (m - 5) < 1e-6);
  /* a second connection that doubled the rate: no shared limit seen */
  fail_if (mtcp_pars_fit_shared_link (1, 1e5, 2, 2e5, &c, &m));
  /* one that added nothing: the link is ours alone */
  fail_unless (mtcp_pars_fit_shared_link (1, 1e6, 2, 0.98e6, &c, &m));
  fail_unless (m == 0 && c == 1e6);
  fail_if (mtcp_pars_fit_shared_link (2, 1e6, 2, 1e6, &c, &m));
  fail_if (mtcp_pars_fit_shared_link (1, 0, 2, 1e6, &c, &m));

  /* 80% of the link next to M others: n >= 4 M */
  fail_unless_equals_int (mtcp_pars_connections_for_share (1, 0.8, 1, 8), 4);
  fail_unless_equals_int (mtcp_pars_connections_for_share (0.3, 0.8, 1, 8), 2);
  fail_unless_equals_int (mtcp_pars_connections_for_share (0, 0.8, 1, 8), 1);
  fail_unless_equals_int (mtcp_pars_connections_for_share (5, 0.8, 1, 8), 8);

  /* M = 1: 1 then 2 connections, then 4 */
  mtcp_pars_probe_init (&probe, 8, 0.8);
  fail_unless_equals_int (mtcp_pars_probe_next (&probe), 1);
  mtcp_pars_probe_note (&probe, 1, eq1 (1, 1e6, 1));
  fail_unless_equals_int (mtcp_pars_probe_next (&probe), 2);
  mtcp_pars_probe_note (&probe, 2, eq1 (2, 1e6, 1));
  fail_unless_equals_int (mtcp_pars_probe_next (&probe), 4);
  fail_unless (fabs (probe.others - 1) < 1e-6);
  /* each connection loss-limited (rate scales with n) up to the cap of 8 */
  mtcp_pars_probe_init (&probe, 8, 0.8);
  mtcp_pars_probe_note (&probe, 1, 1e5);
  mtcp_pars_probe_note (&probe, 2, 2e5);
  fail_unless_equals_int (mtcp_pars_probe_next (&probe), 4);
  mtcp_pars_probe_note (&probe, 4, 4e5);
  fail_unless_equals_int (mtcp_pars_probe_next (&probe), 8);
  mtcp_pars_probe_note (&probe, 8, 8e5);
  fail_unless_equals_int (mtcp_pars_probe_next (&probe), 8);
  /* scaling, then a shared limit at 4: fitted from the 2 and 4 chunks */
  mtcp_pars_probe_init (&probe, 8, 0.8);
  mtcp_pars_probe_note (&probe, 1, 1e5);
  mtcp_pars_probe_note (&probe, 2, 2e5);
  mtcp_pars_probe_note (&probe, 4, 2.5e5);
  fail_unless (probe.count >= 1 && probe.count <= 8);
  fail_unless (probe.capacity > 2.5e5);
}

GST_END_TEST;

GST_START_TEST (test_pars_loss_known)
{
  /* a clean path: 500 segments */
  fail_if (mtcp_pars_loss_known (499, 0));
  fail_unless (mtcp_pars_loss_known (500, 0));
  fail_unless (mtcp_pars_loss_known (500, 2));
  /* a lossy one: 10 losses, once there are 200 segments */
  fail_if (mtcp_pars_loss_known (199, 12));
  fail_unless (mtcp_pars_loss_known (200, 10));
  fail_if (mtcp_pars_loss_known (300, 9));
}

GST_END_TEST;

GST_START_TEST (test_pars_loss_upper)
{
  /* enough for a count that stays */
  fail_if (mtcp_pars_loss_known_well (4999, 29));
  fail_unless (mtcp_pars_loss_known_well (5000, 0));
  fail_unless (mtcp_pars_loss_known_well (300, 30));
  /* 100 losses in 10 000 segments: 1%, and about a tenth more */
  fail_unless (fabs (mtcp_pars_loss_upper (10000, 100) -
          (100 + sqrt (101)) / 10000) < 1e-12);
  fail_unless (mtcp_pars_loss_upper (10000, 100) > 0.011);
  /* 4 in 1 000: 0.4%, up to 0.62% */
  fail_unless (fabs (mtcp_pars_loss_upper (1000, 4) - 0.0062361) < 1e-6);
  /* none seen: not none for sure */
  fail_unless_equals_float (mtcp_pars_loss_upper (500, 0), 1.0 / 500);
  fail_unless_equals_float (mtcp_pars_loss_upper (0, 0), 0);
  fail_unless_equals_float (mtcp_pars_loss_upper (10, 10), 1);
}

GST_END_TEST;

/* REPORTs every 200 ms: the first recovery is the first second (or 4
 * RTTs) from the first REPORT that shows a retransmission, whatever the
 * REPORTs show in it; the loss after it counts from the REPORT that ends
 * it */
GST_START_TEST (test_pars_first_recovery)
{
  MtcpParsFirstRecovery r = { 0, };
  gint64 t = 1000000;
  guint i;

  /* slow start without loss: counted from the start */
  mtcp_pars_first_recovery_note (&r, 0, 100000, 40000, t);
  fail_if (r.over);
  fail_unless (r.retrans == 0 && r.acked == 0);
  /* the overshoot, a quiet REPORT, a timeout's retransmissions: all in */
  mtcp_pars_first_recovery_note (&r, 30, 200000, 40000, t += 200000);
  mtcp_pars_first_recovery_note (&r, 55, 300000, 40000, t += 200000);
  mtcp_pars_first_recovery_note (&r, 55, 310000, 40000, t += 200000);
  mtcp_pars_first_recovery_note (&r, 80, 320000, 40000, t += 200000);
  mtcp_pars_first_recovery_note (&r, 81, 400000, 40000, t += 200000);
  fail_if (r.over);
  /* 1 s after the first: over, and counted from here */
  mtcp_pars_first_recovery_note (&r, 82, 500000, 40000, t += 200000);
  fail_unless (r.over);
  fail_unless (r.retrans == 82 && r.acked == 500000);
  mtcp_pars_first_recovery_note (&r, 90, 900000, 40000, t += 200000);
  fail_unless (r.retrans == 82 && r.acked == 500000);

  /* at 400 ms RTT, 4 RTTs */
  memset (&r, 0, sizeof (r));
  for (i = 0; i < 8; i++)
    mtcp_pars_first_recovery_note (&r, 2 + i, 1000 * (i + 1), 400000,
        t + 200000 * i);
  fail_if (r.over);
  mtcp_pars_first_recovery_note (&r, 20, 9000, 400000, t + 1600000);
  fail_unless (r.over);
  fail_unless (r.retrans == 20 && r.acked == 9000);
}

GST_END_TEST;

/* ---- share trials: a link of @cap_Bps shared with @others flows that
 * each get as much as one of ours (ParS's Eq. 1), a stream of @stream_Bps;
 * a connection asked for is up at the next interval; the first second
 * after the count changed (the start too) settles ---- */

#define SIM_STEP_US (250 * G_TIME_SPAN_MILLISECOND)
#define STREAM_BPS 5e5          /* 4 Mbit/s */

typedef struct {
  MtcpShareTrial trial;
  gint64 now;
  guint base, n;
  guint trials;                 /* how many times one was put on trial */
  guint most;
} ShareSim;

static void
share_sim_init (ShareSim * sim, guint base, guint n_max)
{
  memset (sim, 0, sizeof (*sim));
  mtcp_share_trial_init (&sim->trial, n_max);
  sim->now = 1000 * G_USEC_PER_SEC;
  sim->base = sim->n = base;
}

static void
share_sim_run (ShareSim * sim, gdouble seconds, gdouble cap_Bps,
    gdouble others)
{
  gint64 until = sim->now + (gint64) (seconds * G_USEC_PER_SEC);

  while (sim->now < until) {
    gdouble rate = others > 0 ? sim->n * cap_Bps / (sim->n + others) :
        cap_Bps;
    gboolean held;
    MtcpShareTrialState before = sim->trial.state;

    rate = MIN (rate, STREAM_BPS);
    held = rate < STREAM_BPS;
    sim->now += SIM_STEP_US;
    sim->n = mtcp_share_trial_update (&sim->trial, sim->now, sim->base,
        sim->n, rate, SIM_STEP_US / 1e6, STREAM_BPS, held);
    if (before == MTCP_SHARE_TRIAL_WATCH &&
        sim->trial.state == MTCP_SHARE_TRIAL_OPENING)
      sim->trials++;
    sim->most = MAX (sim->most, sim->n);
  }
}

/* What the sink says of a buffer at @buffer_s of 5 s */
static MtcpPacedBuffer
paced_buffer_of (gdouble buffer_s)
{
  return buffer_s < MTCP_PACED_LOW * 5 ? MTCP_PACED_BUFFER_LOW :
      buffer_s >= MTCP_PACED_HELD * 5 ? MTCP_PACED_BUFFER_HELD :
      MTCP_PACED_BUFFER_SHORT;
}

/* @seconds of a buffer at @buffer_s of 5 s, ticks of 100 ms; returns the
 * count, *moves how many times it moved */
static guint
paced_run (MtcpPacedCount * pc, gint64 * now, guint count, gdouble seconds,
    gdouble buffer_s, guint * moves)
{
  gint64 end = *now + (gint64) (seconds * G_USEC_PER_SEC);

  *moves = 0;
  while (*now < end) {
    guint n;
    *now += 100 * G_TIME_SPAN_MILLISECOND;
    n = mtcp_paced_count_update (pc, *now, count, paced_buffer_of (buffer_s));
    *moves += n != count;
    count = n;
  }
  return count;
}

typedef struct {
  gdouble seconds, buffer_s;
  guint count, moves;           /* after it */
  const gchar *reason;          /* in the last decision, if not NULL */
  guint trim_wait_s;            /* the wait before a cut, if not 0 */
} PacedStep;

/* From @count, each step in turn */
static void
paced_steps (guint fewest, guint most, guint count, const PacedStep * steps,
    guint n_steps)
{
  MtcpPacedCount pc;
  gint64 now = 1000 * G_USEC_PER_SEC;
  guint i, moves;

  mtcp_paced_count_init (&pc, fewest, most);
  for (i = 0; i < n_steps; i++) {
    count = paced_run (&pc, &now, count, steps[i].seconds, steps[i].buffer_s,
        &moves);
    fail_unless (count == steps[i].count && moves == steps[i].moves,
        "step %u: %u connections after %u moves, not %u after %u", i, count,
        moves, steps[i].count, steps[i].moves);
    fail_unless (steps[i].reason == NULL || strstr (pc.reason,
            steps[i].reason), "step %u: %s", i, pc.reason);
    fail_unless (steps[i].trim_wait_s == 0 || pc.trim_wait_us ==
        steps[i].trim_wait_s * G_USEC_PER_SEC, "step %u: wait %"
        G_GINT64_FORMAT " us", i, pc.trim_wait_us);
  }
}

/* The sink's reckoning of the playout buffer REPORT carries: low below
 * half the latency's worth, held from 80% of it; nothing is low or held
 * against no target. */
GST_START_TEST (test_paced_buffer_judged_by_the_sink)
{
  /* 1 s of a 3.69 Mbit/s stream */
  gdouble target = 3690000 / 8.0;

  fail_unless_equals_int (mtcp_paced_buffer_judge (0, target),
      MTCP_PACED_BUFFER_LOW);
  fail_unless_equals_int (mtcp_paced_buffer_judge (0.49 * target, target),
      MTCP_PACED_BUFFER_LOW);
  fail_unless_equals_int (mtcp_paced_buffer_judge (0.5 * target, target),
      MTCP_PACED_BUFFER_SHORT);
  fail_unless_equals_int (mtcp_paced_buffer_judge (0.79 * target, target),
      MTCP_PACED_BUFFER_SHORT);
  fail_unless_equals_int (mtcp_paced_buffer_judge (0.8 * target, target),
      MTCP_PACED_BUFFER_HELD);
  /* what is on its way counts: more than the target is held */
  fail_unless_equals_int (mtcp_paced_buffer_judge (3 * target, target),
      MTCP_PACED_BUFFER_HELD);
  fail_unless_equals_int (mtcp_paced_buffer_judge (0, 0),
      MTCP_PACED_BUFFER_SHORT);
  fail_unless_equals_int (mtcp_paced_buffer_judge (target, -1),
      MTCP_PACED_BUFFER_SHORT);
}

GST_END_TEST;

GST_START_TEST (test_paced_count_follows_the_buffer)
{
  /* a transfer's start fills the buffer: nothing moves; held at 4.5 s of
   * 5: half as many every 5 s, down to the fewest; short of its target
   * and not refilling: one more every 10 s */
  const PacedStep cut[] = {
    {9.5, 1.0, 8, 0},
    {4.8, 4.5, 8, 0},
    {0.3, 4.5, 4, 1, "with 8 connections: 4"},
    {5, 4.5, 2, 1},
    {5, 4.5, 1, 1},
    {60, 4.5, 1, 0},
    {9.8, 3.0, 1, 0},
    {0.3, 3.0, 2, 1, "does not refill"},
    {10, 3.0, 3, 1},
  };
  /* a dip below the held mark starts the hold over; half of 3 is 2 */
  const PacedStep dip[] = {
    {4.8, 4.5, 3, 0},
    {1, 3.0, 3, 0},
    {4.8, 4.5, 3, 0},
    {0.3, 4.5, 2, 1},
  };
  /* a buffer that never reaches the held mark: after 10 s the rules
   * apply (short of it since the start: one more) */
  const PacedStep never[] = {
    {9.8, 3.0, 2, 0},
    {0.3, 3.0, 3, 1, "does not refill"},
  };
  /* low: one more at once, the next 2 s later, at most the most */
  const PacedStep low[] = {
    {1, 4.5, 2, 0},
    {0.1, 2.0, 3, 1, "ran low"},
    {1.8, 2.0, 3, 0},
    {0.3, 2.0, 4, 1},
    {30, 0.5, 6, 2},
  };
  /* one taken back within a minute of a cut: the next cut waits 10 s; a
   * cut that stays brings the wait down again */
  const PacedStep regret[] = {
    {5.2, 4.5, 2, 1, NULL, 5},
    {0.2, 1.0, 3, 1, NULL, 10},
    {2.5, 1.0, 4, 1},
    {9.7, 4.5, 4, 0},
    {0.5, 4.5, 2, 1, "held 10 s", 10},
    {9.7, 4.5, 2, 0},
    {0.5, 4.5, 1, 1, NULL, 5},
  };
  const PacedStep fewest[] = {
    {5.2, 4.5, 3, 1},
    {30, 4.5, 3, 0},
  };
  MtcpPacedCount pc;

  paced_steps (1, 8, 8, cut, G_N_ELEMENTS (cut));
  paced_steps (1, 8, 3, dip, G_N_ELEMENTS (dip));
  paced_steps (1, 8, 2, never, G_N_ELEMENTS (never));
  paced_steps (1, 6, 2, low, G_N_ELEMENTS (low));
  paced_steps (1, 6, 4, regret, G_N_ELEMENTS (regret));
  /* the fewest bounds a cut */
  paced_steps (3, 8, 4, fewest, G_N_ELEMENTS (fewest));
  /* the bounds */
  mtcp_paced_count_init (&pc, 0, 0);
  fail_unless_equals_int (pc.fewest, 1);
  fail_unless_equals_int (pc.most, 1);
}

GST_END_TEST;

/* Eight bulk flows on a 17.2 Mbit/s link: one connection gets 1.9 of 4
 * Mbit/s, two 3.4, three serve the stream: two trials, both kept. The
 * flows leave: after long enough served the added connections are given
 * back, one at a time. */
GST_START_TEST (test_share_trial_joins_a_shared_link)
{
  ShareSim sim;

  share_sim_init (&sim, 1, 16);
  share_sim_run (&sim, 5, 2.15e6, 8);
  fail_unless_equals_int (sim.n, 2);
  fail_unless (strstr (sim.trial.reason, "still held back") != NULL, "%s",
      sim.trial.reason);
  share_sim_run (&sim, 4, 2.15e6, 8);
  fail_unless_equals_int (sim.n, 3);
  fail_unless_equals_int (sim.trials, 2);
  fail_unless (strstr (sim.trial.reason, "served") != NULL, "%s",
      sim.trial.reason);
  /* served with three: nothing more, none given back before 30 s */
  share_sim_run (&sim, 25, 2.15e6, 8);
  fail_unless_equals_int (sim.n, 3);
  fail_unless_equals_int (sim.most, 3);
  /* the flows are gone */
  share_sim_run (&sim, 100, 2.15e6, 0);
  fail_unless_equals_int (sim.n, 1);
}

GST_END_TEST;

/* A path the stream alone fills (3 of 4 Mbit/s, no one else): a second
 * connection brings nothing and goes; the trials come ever further apart
 * (10, 20, 40, 80 s) and the count stays ParS's. */
GST_START_TEST (test_share_trial_leaves_a_full_path)
{
  ShareSim sim;

  share_sim_init (&sim, 1, 16);
  share_sim_run (&sim, 6, 3.75e5, 0);
  fail_unless_equals_int (sim.trials, 1);
  fail_unless_equals_int (sim.n, 1);
  fail_unless (strstr (sim.trial.reason, "not shared") != NULL, "%s",
      sim.trial.reason);
  share_sim_run (&sim, 154, 3.75e5, 0);
  fail_unless_equals_int (sim.n, 1);
  fail_unless (sim.trials >= 4 && sim.trials <= 5, "%u trials", sim.trials);
  fail_unless_equals_int (sim.most, 2);
}

GST_END_TEST;

/* Six connections next to eight flows carry 0.93 of the stream, seven
 * carry it: a rise under 15%, but the one that serves it, so kept. */
GST_START_TEST (test_share_trial_keeps_one_that_serves)
{
  ShareSim sim;

  share_sim_init (&sim, 6, 16);
  share_sim_run (&sim, 10, 1.085e6, 8);
  fail_unless_equals_int (sim.n, 7);
  fail_unless_equals_int (sim.trials, 1);
  fail_unless (strstr (sim.trial.reason, "served") != NULL, "%s",
      sim.trial.reason);
}

GST_END_TEST;

/* ParS's count takes a full 3 Mbit/s path from five connections to one:
 * for a second the frames of the four that closed are sent again and
 * less of the stream arrives. The rate before the trial is measured after
 * that, so a second connection that carries the path's rate again is
 * given back, not kept for a rise the closing made. */
GST_START_TEST (test_share_trial_after_the_count_settled)
{
  MtcpShareTrial t;
  gint64 now = G_USEC_PER_SEC;
  guint n = 1, ready, i;
  gboolean tried = FALSE;

  mtcp_share_trial_init (&t, 16);
  for (i = 0; i < 2; i++) {
    now += SIM_STEP_US;
    n = mtcp_share_trial_update (&t, now, 1, 5, 3.75e5, 0.25, STREAM_BPS,
        TRUE);
  }
  for (i = 0; i < 4; i++) {
    now += SIM_STEP_US;
    n = mtcp_share_trial_update (&t, now, 1, 1, 2.8e5, 0.25, STREAM_BPS,
        TRUE);
    fail_unless_equals_int (n, 1);
  }
  for (i = 0; i < 40; i++) {
    now += SIM_STEP_US;
    ready = t.state == MTCP_SHARE_TRIAL_WATCH ? 1 : n;
    n = mtcp_share_trial_update (&t, now, 1, ready, 3.75e5, 0.25, STREAM_BPS,
        TRUE);
    tried |= n == 2;
  }
  fail_unless (tried);
  fail_unless (n == 1, "%s", t.reason);
  fail_unless (strstr (t.reason, "not shared") != NULL, "%s", t.reason);
}

GST_END_TEST;

/* A stream served from the start: no trial, whatever the count. */
GST_START_TEST (test_share_trial_served_stream)
{
  ShareSim sim;

  share_sim_init (&sim, 2, 16);
  share_sim_run (&sim, 60, 2.5e6, 3);
  fail_unless_equals_int (sim.trials, 0);
  fail_unless_equals_int (sim.most, 2);
}

GST_END_TEST;

/* A cellular uplink's capacity quadruples while a second connection is
 * on trial: more than two connections' share over one's, so the path
 * changed, not the count; the connection goes. */
GST_START_TEST (test_share_trial_path_changed)
{
  ShareSim sim;

  share_sim_init (&sim, 1, 16);
  share_sim_run (&sim, 2.5, 1e5, 0);
  fail_unless_equals_int (sim.trials, 1);
  share_sim_run (&sim, 3, 4e5, 0);
  fail_unless_equals_int (sim.n, 1);
  fail_unless (strstr (sim.trial.reason, "path changed") != NULL, "%s",
      sim.trial.reason);
}

GST_END_TEST;

/* An outage: nothing arrives, the stream is held back; a path that
 * carries nothing is not shared, so no trial. */
GST_START_TEST (test_share_trial_not_in_an_outage)
{
  ShareSim sim;

  share_sim_init (&sim, 1, 16);
  share_sim_run (&sim, 20, 0, 0);
  fail_unless_equals_int (sim.trials, 0);
  fail_unless_equals_int (sim.most, 1);
}

GST_END_TEST;

/* The connection on trial never comes up (its dial fails): the count goes
 * back after 5 s; at max-connections there is no trial. */
GST_START_TEST (test_share_trial_connection_not_up)
{
  MtcpShareTrial t;
  gint64 now = G_USEC_PER_SEC;
  guint n = 1, i;

  mtcp_share_trial_init (&t, 16);
  for (i = 0; i < 10; i++) {
    now += SIM_STEP_US;
    n = mtcp_share_trial_update (&t, now, 1, 1, 2e5, 0.25, STREAM_BPS, TRUE);
  }
  fail_unless_equals_int (n, 2);
  for (i = 0; i < 24; i++) {
    now += SIM_STEP_US;
    n = mtcp_share_trial_update (&t, now, 1, 1, 2e5, 0.25, STREAM_BPS, TRUE);
  }
  fail_unless_equals_int (n, 1);
  fail_unless (strstr (t.reason, "did not open") != NULL, "%s", t.reason);

  /* two up where one is wanted (a path's own): the trial waits for a
   * third, not for the two there were */
  mtcp_share_trial_init (&t, 16);
  for (i = 0; i < 10; i++) {
    now += SIM_STEP_US;
    n = mtcp_share_trial_update (&t, now, 1, 2, 2e5, 0.25, STREAM_BPS, TRUE);
  }
  fail_unless_equals_int (n, 2);
  fail_unless_equals_int (t.state, MTCP_SHARE_TRIAL_OPENING);

  mtcp_share_trial_init (&t, 2);
  for (i = 0; i < 40; i++) {
    now += SIM_STEP_US;
    n = mtcp_share_trial_update (&t, now, 2, 2, 2e5, 0.25, STREAM_BPS, TRUE);
    fail_unless_equals_int (n, 2);
  }
}

GST_END_TEST;

static Suite *
controllers_suite (void)
{
  Suite *s = suite_create ("controllers");
  TCase *tc = tcase_create ("traces");

  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_adjust_window_steps);
  tcase_add_test (tc, test_adjust_window_smoothing_and_balance);
  tcase_add_test (tc, test_desired_rate_never_under_the_stream);
  tcase_add_test (tc, test_adjust_conn_steps);
  tcase_add_test (tc, test_multfrc_iiad);
  tcase_add_test (tc, test_pars_model);
  tcase_add_test (tc, test_pars_loss_known);
  tcase_add_test (tc, test_pars_first_recovery);
  tcase_add_test (tc, test_pars_loss_upper);
  tcase_add_test (tc, test_pars_shared_link_fit);
  tcase_add_test (tc, test_paced_buffer_judged_by_the_sink);
  tcase_add_test (tc, test_paced_count_follows_the_buffer);
  tcase_add_test (tc, test_share_trial_joins_a_shared_link);
  tcase_add_test (tc, test_share_trial_leaves_a_full_path);
  tcase_add_test (tc, test_share_trial_keeps_one_that_serves);
  tcase_add_test (tc, test_share_trial_after_the_count_settled);
  tcase_add_test (tc, test_share_trial_served_stream);
  tcase_add_test (tc, test_share_trial_not_in_an_outage);
  tcase_add_test (tc, test_share_trial_path_changed);
  tcase_add_test (tc, test_share_trial_connection_not_up);
  return s;
}

GST_CHECK_MAIN (controllers);

/* multitcp
 * Copyright (C) 2026 the multitcp authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
/* Unit tests of the transfer controls of a stored video: seed 004's
 * network-friendly controller (gst/mtcpfriendly.c), fed traces of TCP
 * state, and its YouTube-like baseline (gst/mtcpburst.c). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <gst/check/gstcheck.h>
#include <math.h>

#include "mtcpfriendly.h"
#include "mtcpburst.h"

#define RATE 450000.0           /* 3.6 Mbit/s, the paper's video */

static MtcpFriendlyParams
paper_params (void)
{
  MtcpFriendlyParams p = { MTCP_FRIENDLY_DEFAULT_ALPHA_S,
    MTCP_FRIENDLY_DEFAULT_BETA, MTCP_FRIENDLY_DEFAULT_GAMMA
  };
  return p;
}

static MtcpTcpInfo
tcp (guint rtt_ms, guint cwnd, guint ssthresh, guint rto_ms, guint8 ca)
{
  MtcpTcpInfo i = { 0 };
  i.rtt_us = rtt_ms * 1000;
  i.snd_cwnd = cwnd;
  i.snd_ssthresh = ssthresh;
  i.rto_us = rto_ms * 1000;
  i.snd_mss = 1448;
  i.ca_state = ca;
  return i;
}

/* Eqs. 2-8 by hand for one state: RTT 100 ms steady, cwnd 40, ssthresh 20,
 * RTO 300 ms, 3.6 Mbit/s: RTT_max 0.1 s, 45 000 bytes a round, nwnd
 * 31.08 (32 segments) */
GST_START_TEST (test_targets_by_hand)
{
  MtcpFriendlyParams p = paper_params ();
  MtcpFriendly *f = mtcp_friendly_new (&p, RATE);
  MtcpTcpInfo info = tcp (100, 40, 20, 300, MTCP_TCP_CA_OPEN);
  const MtcpFriendlyRound *r;

  fail_unless (mtcp_friendly_update (f, &info, 0, G_USEC_PER_SEC));
  r = mtcp_friendly_round (f);
  fail_unless (fabs (r->rtt_max_s - 0.1) < 1e-9);
  fail_unless (fabs (r->nwnd - 45000.0 / 1448) < 1e-9);
  /* (3 + 32 - 20) 45000 - 1448 (20 + ... + 32) */
  fail_unless (fabs (r->b_ret - 185576) < 1, "b_ret %f", r->b_ret);
  /* (3 + 32 - 1) 45000 - 1448 (1 + ... + 32) */
  fail_unless (fabs (r->b_dup - 765456) < 1, "b_dup %f", r->b_dup);
  /* L = 4: (0.3/0.1 + 4 + 4 + 32 - 16) 45000 - 1448 (31 + 16 + ... + 32) */
  fail_unless (fabs (r->b_to - 579328) < 1, "b_to %f", r->b_to);
  /* no loss yet: the timeout's target, and b_TO is below b_dup here (a
   * short RTO against 32 RTTs of recovery): b_dup's */
  fail_unless (fabs (r->b_tgt - MAX (r->b_to, r->b_dup)) < 1e-9);
  fail_unless_equals_int (r->apwnd, 2 * 10 * 1448);
  fail_unless_equals_int (mtcp_friendly_loss_events (f), 0);
  mtcp_friendly_free (f);
}

GST_END_TEST;

/* A round that passes its whole allowance to TCP. */
static gboolean
round_full (MtcpFriendly * f, const MtcpTcpInfo * info, gdouble b_dst, gint64 t)
{
  gboolean new_round = mtcp_friendly_update (f, info, b_dst, t);
  mtcp_friendly_sent (f, mtcp_friendly_budget (f));
  return new_round;
}

/* apwnd doubles per round (each sent in full) up to a round of stream
 * plus what the receiver lacks, and drops to nothing when the receiver
 * holds more than the target; the budget is apwnd less what went
 * out this round, and what a frame sent beyond it is taken off the next;
 * a round that sent nothing does not double the next */
GST_START_TEST (test_apwnd_follows_the_buffer)
{
  MtcpFriendlyParams p = paper_params ();
  MtcpFriendly *f = mtcp_friendly_new (&p, RATE);
  MtcpTcpInfo info = tcp (100, 40, 20, 300, MTCP_TCP_CA_OPEN);
  gint64 t = G_USEC_PER_SEC;
  guint64 last = 0, cap = 45000 + 765456;
  guint i;

  for (i = 0; i < 10; i++, t += 100 * G_TIME_SPAN_MILLISECOND) {
    fail_unless (round_full (f, &info, 0, t));
    if (last)
      fail_unless (mtcp_friendly_round (f)->apwnd == MIN (2 * last, cap),
          "round %u: %" G_GUINT64_FORMAT " after %" G_GUINT64_FORMAT, i,
          mtcp_friendly_round (f)->apwnd, last);
    last = mtcp_friendly_round (f)->apwnd;
  }
  fail_unless_equals_int (last, cap);
  /* within a round nothing new is computed, the budget shrinks */
  fail_unless (mtcp_friendly_update (f, &info, 0, t));
  fail_if (mtcp_friendly_update (f, &info, 0, t + 50000));
  fail_unless_equals_int (mtcp_friendly_budget (f), cap);
  mtcp_friendly_sent (f, 100000);
  fail_unless_equals_int (mtcp_friendly_budget (f), cap - 100000);
  /* a frame 20 000 bytes over the allowance */
  mtcp_friendly_sent (f, cap - 100000 + 20000);
  fail_unless_equals_int (mtcp_friendly_budget (f), 0);
  t += 100 * G_TIME_SPAN_MILLISECOND;
  fail_unless (mtcp_friendly_update (f, &info, 0, t));
  fail_unless_equals_int (mtcp_friendly_budget (f), cap - 20000);
  /* the receiver holds 2 MB: more than the target, nothing this round (a
   * lone segment lost would be seen only by a timeout) */
  t += 100 * G_TIME_SPAN_MILLISECOND;
  fail_unless (mtcp_friendly_update (f, &info, 2e6, t));
  fail_unless_equals_int (mtcp_friendly_round (f)->apwnd, 0);
  fail_unless_equals_int (mtcp_friendly_budget (f), 0);
  /* it drained to 100 kB: a round of stream and the rest of the target,
   * reached by doubling */
  t += 100 * G_TIME_SPAN_MILLISECOND;
  fail_unless (mtcp_friendly_update (f, &info, 1e5, t));
  /* the round before sent nothing: twice the initial window at most */
  fail_unless_equals_int (mtcp_friendly_round (f)->apwnd, 2 * 10 * 1448);
  /* a round that sent nothing: the next is no larger than twice the
   * initial window */
  t += 100 * G_TIME_SPAN_MILLISECOND;
  fail_unless (mtcp_friendly_update (f, &info, 0, t));
  t += 100 * G_TIME_SPAN_MILLISECOND;
  fail_unless (mtcp_friendly_update (f, &info, 0, t));
  fail_unless (mtcp_friendly_round (f)->apwnd <= 2 * 10 * 1448);
  mtcp_friendly_free (f);
}

GST_END_TEST;

/* Eq. 1 counts the queue: apwnd segments times (1 - baseRTT/RTT). Loss
 * events record the level; Eq. 7 then moves the target from b_ret (no
 * queue) towards b_dup and b_TO as the level nears the levels losses came
 * at; events older than alpha are forgotten. */
GST_START_TEST (test_loss_levels_move_the_target)
{
  MtcpFriendlyParams p = paper_params ();
  MtcpFriendly *f;
  MtcpTcpInfo open = tcp (100, 40, 20, 300, MTCP_TCP_CA_OPEN);
  const MtcpFriendlyRound *r;
  gint64 t = G_USEC_PER_SEC;
  guint i, srtts[] = { 140, 150, 160, 150, 145 };
  gdouble most = 0, least = G_MAXDOUBLE;

  p.alpha_s = 10;
  f = mtcp_friendly_new (&p, RATE);
  for (i = 0; i < 8; i++, t += 100 * G_TIME_SPAN_MILLISECOND)
    round_full (f, &open, 0, t);
  /* five fast retransmits with a queue in the path */
  for (i = 0; i < G_N_ELEMENTS (srtts); i++) {
    MtcpTcpInfo q = tcp (srtts[i], 40, 20, 300, MTCP_TCP_CA_OPEN);
    MtcpTcpInfo rec = tcp (srtts[i], 20, 20, 300, MTCP_TCP_CA_RECOVERY);
    gdouble cl;
    t += 200 * G_TIME_SPAN_MILLISECOND;
    round_full (f, &q, 0, t);
    mtcp_friendly_update (f, &rec, 0, t + 1000);
    cl = mtcp_friendly_round (f)->cl;
    fail_unless (cl > 0);
    most = MAX (most, cl);
    least = MIN (least, cl);
    mtcp_friendly_update (f, &q, 0, t + 2000);
  }
  fail_unless_equals_int (mtcp_friendly_loss_events (f), 5);
  /* no queue now: cl 0, the target is b_ret */
  t += 200 * G_TIME_SPAN_MILLISECOND;
  fail_unless (round_full (f, &open, 0, t));
  r = mtcp_friendly_round (f);
  fail_unless (r->dup_min > 0 && r->dup_min <= most, "dup_min %f (%f-%f)",
      r->dup_min, least, most);
  fail_unless (r->to_min == G_MAXDOUBLE);
  fail_unless (r->cl == 0);
  fail_unless (fabs (r->b_tgt - r->b_ret) < 1);
  /* a queue that grows to the losses' level: b_ret below it, b_dup there
   * (no timeout seen) */
  {
    MtcpTcpInfo q = tcp (300, 40, 20, 300, MTCP_TCP_CA_OPEN);
    for (i = 0; i < 20; i++) {
      t += 300 * G_TIME_SPAN_MILLISECOND;
      round_full (f, &q, 0, t);
      r = mtcp_friendly_round (f);
      if (r->cl >= r->dup_min)
        break;
      fail_unless (r->b_tgt >= r->b_ret - 1 && r->b_tgt <= r->b_dup + 1);
    }
    fail_unless (r->cl >= r->dup_min, "cl %f dup_min %f", r->cl, r->dup_min);
    fail_unless (fabs (r->b_tgt - r->b_dup) < 1);
  }
  /* a timeout at a lower level: from there on b_TO */
  {
    MtcpTcpInfo lossy = tcp (200, 1, 10, 600, MTCP_TCP_CA_LOSS);
    t += 200 * G_TIME_SPAN_MILLISECOND;
    round_full (f, &lossy, 0, t);
    fail_unless_equals_int (mtcp_friendly_loss_events (f), 6);
    t += 400 * G_TIME_SPAN_MILLISECOND;
    mtcp_friendly_update (f, &lossy, 0, t);
    r = mtcp_friendly_round (f);
    fail_unless (r->to_min < G_MAXDOUBLE);
    if (r->cl >= r->to_min)
      fail_unless (fabs (r->b_tgt - MAX (r->b_to, r->b_dup)) < 1);
  }
  /* alpha (10 s here) later every event is forgotten: b_TO as at the start */
  t += 11 * G_USEC_PER_SEC;
  fail_unless (mtcp_friendly_update (f, &open, 0, t));
  fail_unless_equals_int (mtcp_friendly_loss_events (f), 0);
  r = mtcp_friendly_round (f);
  fail_unless (r->dup_min == G_MAXDOUBLE && r->to_min == G_MAXDOUBLE);
  fail_unless (fabs (r->b_tgt - MAX (r->b_to, r->b_dup)) < 1e-6);
  mtcp_friendly_free (f);
}

GST_END_TEST;

/* What no sane kernel reports stays finite and bounded; the history of
 * loss events is bounded whatever alpha */
GST_START_TEST (test_extreme_state_stays_bounded)
{
  MtcpFriendlyParams p = paper_params ();
  MtcpFriendly *f = mtcp_friendly_new (&p, 0);
  MtcpTcpInfo odd = tcp (0, 0, 0xffffffffu, 0, MTCP_TCP_CA_OPEN);
  const MtcpFriendlyRound *r;
  gint64 t = G_USEC_PER_SEC;
  guint i;

  /* no RTT: no decision */
  fail_if (mtcp_friendly_update (f, &odd, 0, t));
  odd.rtt_us = 1;
  odd.snd_mss = 0;
  fail_unless (mtcp_friendly_update (f, &odd, -5e9, t));
  r = mtcp_friendly_round (f);
  fail_unless (isfinite (r->b_tgt) && isfinite (r->b_to) &&
      isfinite (r->b_ret) && isfinite (r->cl) && r->apwnd == 0);
  mtcp_friendly_set_rate (f, 1e12);
  odd.rtt_us = 60 * G_USEC_PER_SEC;
  odd.snd_cwnd = G_MAXUINT32;
  t += 61 * G_USEC_PER_SEC;
  fail_unless (mtcp_friendly_update (f, &odd, 1e30, t));
  r = mtcp_friendly_round (f);
  fail_unless (isfinite (r->b_tgt) && r->apwnd == 0);
  for (i = 0; i < 10000; i++) {
    MtcpTcpInfo a = tcp (100, 10, 5, 300, MTCP_TCP_CA_OPEN);
    MtcpTcpInfo b = tcp (100, 5, 5, 300, MTCP_TCP_CA_RECOVERY);
    mtcp_friendly_update (f, &a, 0, t + i * 2);
    mtcp_friendly_update (f, &b, 0, t + i * 2 + 1);
  }
  fail_unless (mtcp_friendly_loss_events (f) <= 4096);
  mtcp_friendly_free (f);
}

GST_END_TEST;

/* the baseline: 80 MB at once, 2 s of nothing, then 2.2 MB blocks at
 * 128 kB per RTT with 1.5 s between them */
/* On loopback (RTT 1 ms, RTO 201 ms) Eqs. 2-7 aim at about an RTO's worth
 * of the stream; the floor (a 0.5 s latency here) raises the target to
 * it, and only where the equations say less */
GST_START_TEST (test_floor_under_the_target)
{
  MtcpFriendlyParams p = paper_params ();
  MtcpFriendly *f = mtcp_friendly_new (&p, RATE);
  MtcpTcpInfo info = tcp (1, 10, 0x7fffffff, 201, MTCP_TCP_CA_OPEN);
  gint64 t = G_USEC_PER_SEC;
  gdouble eqs;

  fail_unless (mtcp_friendly_update (f, &info, 0, t));
  eqs = mtcp_friendly_round (f)->b_tgt;
  fail_unless (eqs > 0.15 * RATE && eqs < 0.3 * RATE, "b_tgt %f", eqs);
  mtcp_friendly_set_floor (f, 0.5 * RATE);
  t += 10 * G_TIME_SPAN_MILLISECOND;
  fail_unless (mtcp_friendly_update (f, &info, 0, t));
  fail_unless (fabs (mtcp_friendly_round (f)->b_tgt - 0.5 * RATE) < 1e-6);
  /* the receiver holds 0.3 s: below the floor, so apwnd asks for more than
   * a round of stream (doubling from the rounds before) */
  mtcp_friendly_sent (f, mtcp_friendly_budget (f));
  t += 10 * G_TIME_SPAN_MILLISECOND;
  fail_unless (mtcp_friendly_update (f, &info, 0.3 * RATE, t));
  fail_unless (mtcp_friendly_round (f)->apwnd > 0.001 * RATE * 2);
  /* above it by more than a round of stream: nothing */
  t += 10 * G_TIME_SPAN_MILLISECOND;
  fail_unless (mtcp_friendly_update (f, &info, 0.6 * RATE, t));
  fail_unless_equals_int (mtcp_friendly_round (f)->apwnd, 0);
  /* a floor below what the equations say changes nothing */
  mtcp_friendly_set_floor (f, 0.01 * RATE);
  t += 10 * G_TIME_SPAN_MILLISECOND;
  fail_unless (mtcp_friendly_update (f, &info, 0, t));
  fail_unless (fabs (mtcp_friendly_round (f)->b_tgt - eqs) < 1e-6);
  mtcp_friendly_free (f);
}

GST_END_TEST;

GST_START_TEST (test_burst_phases)
{
  MtcpBurstParams p;
  MtcpBurst *b;
  gint64 t = G_USEC_PER_SEC, rtt = 100 * G_TIME_SPAN_MILLISECOND;
  guint64 total = 0, rounds = 0;

  mtcp_burst_params_default (&p);
  b = mtcp_burst_new (&p);
  fail_unless_equals_uint64 (mtcp_burst_budget (b, t, rtt), 80000000);
  mtcp_burst_sent (b, 80000000);
  fail_unless_equals_uint64 (mtcp_burst_budget (b, t, rtt), 0);
  fail_unless_equals_int (mtcp_burst_phase (b), 1);
  fail_unless_equals_uint64 (mtcp_burst_budget (b, t + 1999999, rtt), 0);
  t += 2 * G_USEC_PER_SEC;
  /* a block: 128 kB a round until 2.2 MB, then 1.5 s of pause */
  for (;;) {
    guint64 room = mtcp_burst_budget (b, t, rtt);
    if (room == 0 && mtcp_burst_phase (b) == 1)
      break;
    fail_unless (room > 0 && room <= 128 * 1024);
    mtcp_burst_sent (b, room);
    total += room;
    fail_unless_equals_uint64 (mtcp_burst_budget (b, t + 1000, rtt), 0);
    t += rtt;
    rounds++;
  }
  fail_unless_equals_uint64 (total, 2200000);
  fail_unless_equals_uint64 (rounds, (2200000 + 131071) / 131072);
  /* the pause began with the block's last round (one RTT ago) */
  fail_unless_equals_uint64 (mtcp_burst_budget (b, t + 1300000, rtt), 0);
  fail_unless (mtcp_burst_budget (b, t + 1500000, rtt) > 0);
  mtcp_burst_free (b);
}

GST_END_TEST;

static Suite *
transfer_suite (void)
{
  Suite *s = suite_create ("transfer");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_targets_by_hand);
  tcase_add_test (tc, test_apwnd_follows_the_buffer);
  tcase_add_test (tc, test_loss_levels_move_the_target);
  tcase_add_test (tc, test_extreme_state_stays_bounded);
  tcase_add_test (tc, test_floor_under_the_target);
  tcase_add_test (tc, test_burst_phases);
  return s;
}

GST_CHECK_MAIN (transfer);

/* multitcp
 * Copyright (C) 2026 the multitcp authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

/* Seed 004's controller. Choices where the paper leaves room (docs/
 * network-friendly.md says why):
 * - Eq. 6 adds RTO (a time) to counts of RTTs: RTO is taken in RTTs,
 *   RTO / RTT_max, so b_TO = (RTO/RTT_max + 4 + L + nwnd - 2^L) RTT_max
 *   rate - (...) MSS: RTO's worth of the stream, plus the slow start; and
 *   RTO's worth at least.
 * - The slow start after a timeout ends at ssthresh, but an application
 *   window below it never fills windows above nwnd: L = log2 of the
 *   smaller. Linux reports an ssthresh of 2^31 - 1 before the first loss:
 *   then half of cwnd stands for it (what a timeout would set now).
 * - nwnd is rounded up to whole segments.
 * - dup_min, TO_min: the lower bound of the 95% interval of the levels at
 *   past events of the kind, mean - 1.96 sd (one event: its level), the
 *   level where losses begin; none yet: G_MAXDOUBLE ("sufficiently
 *   large").
 * - Eq. 7 assumes b_ret <= b_dup <= b_TO (its Fig. 4); where b_TO comes out
 *   below b_dup (a short RTO against many RTTs of recovery), the timeout
 *   regime takes b_dup's larger target. With TO_min below dup_min the
 *   target climbs from b_ret at 0 to b_dup at TO_min, then b_TO.
 * - RTT_std: the EWMA of the squared deviation, with the RTT's own beta.
 * - Eq. 1 and Eq. 8's doubling use what was passed to TCP in the round
 *   (at most apwnd), not the allowance: a round that sent less (nothing
 *   to send, a full socket) does not grow the next one. A frame is not
 *   split: what a round sends beyond apwnd is taken off the next.
 * - apwnd(0) is TCP's initial window, 10 segments.
 * - Not the paper's: b_tgt has a floor the caller sets (the transport:
 *   the receiver's latency of the stream), since on a short path b_TO is
 *   a fraction of a second and a stall of the sender's machine longer
 *   than that starved the player.
 * - Not the paper's: above the target a round passes nothing, not one
 *   segment. The paper's segment keeps a Reno cwnd from its restart after
 *   idle; on Linux an application-limited cwnd decays anyway, and a lone
 *   segment lost is seen only by a timeout: on netsim (100 Mbit/s, 32
 *   cubic flows) bbr's window fell to a few segments after such a loss
 *   and took 5 s to carry the stream again, and the player starved. */

#include "mtcpfriendly.h"

#include <math.h>
#include <string.h>

/* loss events kept at most, whatever alpha: a connection that loses all
 * the time cannot grow the history without bound */
#define MAX_EVENTS 4096
#define INITIAL_WINDOW 10
#define DEFAULT_MSS 1448
/* Linux's "no ssthresh yet" (TCP_INFINITE_SSTHRESH) and above */
#define SSTHRESH_INFINITE 0x7fffffffu
/* a round lasts one smoothed RTT, this at least */
#define MIN_ROUND_US (5 * G_TIME_SPAN_MILLISECOND)

typedef struct {
  gint64 at_us;
  gdouble cl;
  MtcpFriendlyLoss kind;
} LossEvent;

typedef struct {
  guint n;
  gdouble sum, sq;
} LevelSums;

struct _MtcpFriendly {
  MtcpFriendlyParams params;
  LevelSums sums[2];            /* per MtcpFriendlyLoss, over events */
  gdouble rate;                 /* bytes/s */
  gdouble floor;                /* b_tgt at least (bytes) */
  gboolean have_rtt;
  gdouble base_rtt_s, rtt_mean_s, rtt_var;
  guint mss;
  guint8 ca_state;
  gint64 round_start_us;
  guint64 sent;
  MtcpFriendlyRound round;
  GArray *events;               /* LossEvent, oldest first */
};

MtcpFriendly *
mtcp_friendly_new (const MtcpFriendlyParams * params, gdouble rate_Bps)
{
  MtcpFriendly *f = g_new0 (MtcpFriendly, 1);

  f->params = *params;
  f->rate = MAX (rate_Bps, 0);
  f->mss = DEFAULT_MSS;
  f->events = g_array_new (FALSE, FALSE, sizeof (LossEvent));
  f->round.apwnd = INITIAL_WINDOW * DEFAULT_MSS;
  f->round.dup_min = f->round.to_min = G_MAXDOUBLE;
  return f;
}

void
mtcp_friendly_free (MtcpFriendly * f)
{
  if (f == NULL)
    return;
  g_array_unref (f->events);
  g_free (f);
}

void
mtcp_friendly_set_rate (MtcpFriendly * f, gdouble rate_Bps)
{
  f->rate = MAX (rate_Bps, 0);
}

void
mtcp_friendly_set_floor (MtcpFriendly * f, gdouble bytes)
{
  f->floor = MAX (bytes, 0);
}

/* what the round passed to TCP, at most its allowance */
static guint64
used (const MtcpFriendly * f)
{
  return MIN (f->round.apwnd, f->sent);
}

/* Eq. 1: packets queued in the network, from what the last round passed
 * to TCP and the RTTs (Vegas' estimate) */
static gdouble
congestion_level (const MtcpFriendly * f, gdouble srtt_s)
{
  if (srtt_s <= 0 || f->base_rtt_s <= 0)
    return 0;
  return (gdouble) used (f) / f->mss * MAX (1 - f->base_rtt_s / srtt_s, 0);
}

static void
sums_add (LevelSums * s, gdouble cl, gint sign)
{
  s->n += sign;
  s->sum += sign * cl;
  s->sq += sign * cl * cl;
}

void
mtcp_friendly_note_loss (MtcpFriendly * f, MtcpFriendlyLoss kind, gint64 now_us)
{
  LossEvent e = { now_us, f->round.cl, kind };

  if (f->events->len >= MAX_EVENTS) {
    LossEvent *old = &g_array_index (f->events, LossEvent, 0);
    sums_add (&f->sums[old->kind], old->cl, -1);
    g_array_remove_index (f->events, 0);
  }
  g_array_append_val (f->events, e);
  sums_add (&f->sums[kind], e.cl, 1);
}

/* The lower bound of the 95% interval of the levels at the events of
 * @kind within alpha; G_MAXDOUBLE when there are none. From running sums:
 * no walk over the events each round. */
static gdouble
level_threshold (const MtcpFriendly * f, MtcpFriendlyLoss kind)
{
  const LevelSums *s = &f->sums[kind];
  gdouble mean, sd;

  if (s->n == 0)
    return G_MAXDOUBLE;
  mean = s->sum / s->n;
  if (s->n == 1)
    return MAX (mean, 0);
  sd = sqrt (MAX (s->sq - s->n * mean * mean, 0) / (s->n - 1));
  return MAX (mean - 1.96 * sd, 0);
}

/* sum of k for k from @a to @b, whole numbers; 0 when b < a */
static gdouble
sum_range (gdouble a, gdouble b)
{
  if (b < a)
    return 0;
  return (a + b) * (b - a + 1) / 2;
}

static void
forget_old_events (MtcpFriendly * f, gint64 now_us)
{
  gint64 horizon = now_us - (gint64) (f->params.alpha_s * G_USEC_PER_SEC);
  guint drop = 0;

  while (drop < f->events->len &&
      g_array_index (f->events, LossEvent, drop).at_us < horizon) {
    const LossEvent *e = &g_array_index (f->events, LossEvent, drop);
    sums_add (&f->sums[e->kind], e->cl, -1);
    drop++;
  }
  if (f->events->len == drop)
    memset (f->sums, 0, sizeof (f->sums));      /* no rounding left over */
  if (drop)
    g_array_remove_range (f->events, 0, drop);
}

/* One round: Eqs. 1-8 from the state at its end. */
static void
next_round (MtcpFriendly * f, const MtcpTcpInfo * info, gdouble b_dst,
    gdouble srtt_s, gint64 now_us)
{
  MtcpFriendlyRound *r = &f->round;
  gdouble beta = CLAMP (f->params.beta, 0, 1), diff, per_rtt, n, half, ss;
  gdouble rto_s = info->rto_us / 1e6, L, p, tgt, want, to;
  guint64 passed = used (f), allowance = r->apwnd;
  guint mss = f->mss;

  /* Eq. 4 */
  if (!f->have_rtt) {
    f->rtt_mean_s = srtt_s;
    f->rtt_var = 0;
    f->have_rtt = TRUE;
  } else {
    diff = srtt_s - f->rtt_mean_s;
    f->rtt_mean_s += beta * diff;
    f->rtt_var = (1 - beta) * (f->rtt_var + beta * diff * diff);
  }
  r->rtt_max_s = f->rtt_mean_s + f->params.gamma * sqrt (f->rtt_var);
  per_rtt = r->rtt_max_s * f->rate;     /* the stream's bytes per RTT_max */
  /* Eq. 3 */
  r->nwnd = per_rtt / mss;
  n = ceil (r->nwnd);
  /* Eq. 1, with the round's apwnd and RTT */
  r->cl = congestion_level (f, srtt_s);
  /* Eq. 2 */
  half = floor (info->snd_cwnd / 2.0);
  r->b_ret = MAX ((3 + MAX (n - half, 0)) * per_rtt - mss * sum_range (half,
          n), 0);
  /* Eq. 5 */
  r->b_dup = MAX ((3 + n - 1) * per_rtt - mss * sum_range (1, n), 0);
  /* Eq. 6 */
  ss = info->snd_ssthresh;
  if (ss == 0 || ss >= SSTHRESH_INFINITE)
    ss = MAX (floor (info->snd_cwnd / 2.0), 2);
  L = floor (log2 (MAX (MIN (ss, n), 1)));
  p = pow (2, L);
  r->b_to = MAX ((rto_s / MAX (r->rtt_max_s, 1e-6) + 4 + L + n - p) *
      per_rtt - mss * ((2 * p - 1) + sum_range (p, n)), rto_s * f->rate);
  /* Eq. 7's thresholds from the events of the last alpha */
  forget_old_events (f, now_us);
  r->dup_min = level_threshold (f, MTCP_FRIENDLY_LOSS_DUPACKS);
  r->to_min = level_threshold (f, MTCP_FRIENDLY_LOSS_TIMEOUT);
  to = MAX (r->b_to, r->b_dup);
  if (f->events->len == 0) {
    /* no loss seen: nothing to tell the level by */
    tgt = to;
  } else if (r->cl >= r->to_min) {
    tgt = to;
  } else if (r->cl >= r->dup_min) {
    tgt = r->to_min == G_MAXDOUBLE ? r->b_dup :
        (to - r->b_dup) / MAX (r->to_min - r->dup_min, 1e-9) *
        (r->cl - r->dup_min) + r->b_dup;
  } else {
    gdouble lower = MIN (r->dup_min, r->to_min);
    tgt = lower == G_MAXDOUBLE || lower <= 0 ? r->b_ret :
        (r->b_dup - r->b_ret) / lower * r->cl + r->b_ret;
  }
  r->b_tgt = MAX (tgt, f->floor);
  r->b_dst = MAX (b_dst, 0);
  /* Eq. 8 */
  /* nothing rather than the paper's one segment above the target (why: top) */
  want = MAX (per_rtt + r->b_tgt - r->b_dst, 0);
  r->apwnd = (guint64) MIN (want, 2.0 * MAX (passed,
          (guint64) INITIAL_WINDOW * mss));
  f->round_start_us = now_us;
  /* a frame that went over the last allowance is paid from this one */
  f->sent = f->sent > allowance ? f->sent - allowance : 0;
}

gboolean
mtcp_friendly_update (MtcpFriendly * f, const MtcpTcpInfo * info,
    gdouble b_dst, gint64 now_us)
{
  gdouble srtt_s;
  guint8 was = f->ca_state;

  if (info->rtt_us == 0)
    return FALSE;               /* nothing measured yet */
  srtt_s = info->rtt_us / 1e6;
  if (info->snd_mss)
    f->mss = info->snd_mss;
  if (f->base_rtt_s <= 0 || srtt_s < f->base_rtt_s)
    f->base_rtt_s = srtt_s;
  /* a loss event at once, with the level of its moment */
  f->ca_state = info->ca_state;
  if (info->ca_state == MTCP_TCP_CA_LOSS && was != MTCP_TCP_CA_LOSS) {
    f->round.cl = congestion_level (f, srtt_s);
    mtcp_friendly_note_loss (f, MTCP_FRIENDLY_LOSS_TIMEOUT, now_us);
  } else if (info->ca_state == MTCP_TCP_CA_RECOVERY &&
      was < MTCP_TCP_CA_RECOVERY) {
    f->round.cl = congestion_level (f, srtt_s);
    mtcp_friendly_note_loss (f, MTCP_FRIENDLY_LOSS_DUPACKS, now_us);
  }
  if (f->round_start_us &&
      now_us - f->round_start_us < MAX ((gint64) info->rtt_us, MIN_ROUND_US))
    return FALSE;
  next_round (f, info, b_dst, srtt_s, now_us);
  return TRUE;
}

guint64
mtcp_friendly_budget (const MtcpFriendly * f)
{
  return f->round.apwnd > f->sent ? f->round.apwnd - f->sent : 0;
}

void
mtcp_friendly_sent (MtcpFriendly * f, guint64 bytes)
{
  f->sent += bytes;
}

const MtcpFriendlyRound *
mtcp_friendly_round (const MtcpFriendly * f)
{
  return &f->round;
}

guint
mtcp_friendly_loss_events (const MtcpFriendly * f)
{
  return f->events->len;
}

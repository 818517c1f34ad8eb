/* multitcp
 * Copyright (C) 2026 the multitcp authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "mtcppars.h"

#include <math.h>
#include <string.h>

guint
mtcp_pars_connections (gdouble rate_bps, gdouble rtt_s, gdouble loss,
    guint mss, gdouble phi, guint n_min, guint n_max)
{
  gdouble c = rate_bps / 8.0 / (mss ? mss : 1448);      /* segments/s */
  gdouble n;

  if (loss <= 0 || rtt_s <= 0 || phi <= 0)
    return n_min;               /* no loss seen: one flow fills the path */
  if (loss >= 1)
    return n_max;
  n = ceil (rtt_s * c * sqrt (loss) / (phi * (1 - loss)));
  return (guint) CLAMP (n, n_min, n_max);
}

/* A rate estimate's relative error shrinks with the events counted, not the
 * trials: a lossy path, the one a live stream is backing up on, is judged
 * sooner; the 200-segment floor keeps one early burst from deciding. */
#define PARS_MIN_SEGMENTS 500
#define PARS_MIN_LOSSES 10
#define PARS_MIN_SEGMENTS_LOSSY 200

gboolean
mtcp_pars_loss_known (gdouble segments, gdouble losses)
{
  return segments >= PARS_MIN_SEGMENTS || (losses >= PARS_MIN_LOSSES &&
      segments >= PARS_MIN_SEGMENTS_LOSSY);
}

#define PARS_WELL_SEGMENTS 5000
#define PARS_WELL_LOSSES 30

gboolean
mtcp_pars_loss_known_well (gdouble segments, gdouble losses)
{
  return segments >= PARS_WELL_SEGMENTS || losses >= PARS_WELL_LOSSES;
}

gdouble
mtcp_pars_loss_upper (gdouble segments, gdouble losses)
{
  if (segments <= 0)
    return 0;
  return MIN ((losses + sqrt (MAX (losses, 0) + 1)) / segments, 1);
}

#define FIRST_RECOVERY_MIN_US G_USEC_PER_SEC

void
mtcp_pars_first_recovery_note (MtcpParsFirstRecovery * r,
    guint32 total_retrans, guint64 bytes_acked, guint32 rtt_us,
    gint64 now_us)
{
  if (r->over || total_retrans == 0)
    return;
  if (r->since_us == 0)
    r->since_us = now_us;
  else if (now_us - r->since_us >= MAX (4 * (gint64) rtt_us,
          FIRST_RECOVERY_MIN_US))
    r->over = TRUE;
  r->retrans = total_retrans;
  r->acked = bytes_acked;
}

gboolean
mtcp_pars_fit_shared_link (guint n_a, gdouble x_a, guint n_b, gdouble x_b,
    gdouble * capacity, gdouble * others)
{
  gdouble den;

  if (n_a == 0 || n_b <= n_a || x_a <= 0 || x_b <= 0)
    return FALSE;
  if (x_b <= x_a) {
    *others = 0;
    *capacity = MAX (x_a, x_b);
    return TRUE;
  }
  den = n_b * x_a - n_a * x_b;
  /* within 5% of scaling with the count: no shared limit in sight */
  if (den <= 0.05 * n_b * x_a)
    return FALSE;
  *others = n_a * n_b * (x_b - x_a) / den;
  *capacity = x_a * (n_a + *others) / n_a;
  return TRUE;
}

guint
mtcp_pars_connections_for_share (gdouble others, gdouble share, guint n_min,
    guint n_max)
{
  gdouble n;

  if (others <= 0 || share <= 0)
    return n_min;
  if (share >= 1)
    return n_max;
  n = ceil (share * others / (1 - share) - 1e-9);
  return (guint) CLAMP (n, n_min, n_max);
}

void
mtcp_pars_probe_init (MtcpParsProbe * probe, guint n_max, gdouble share)
{
  memset (probe, 0, sizeof (*probe));
  probe->n_max = MAX (n_max, 1);
  probe->share = share;
}

guint
mtcp_pars_probe_next (const MtcpParsProbe * probe)
{
  if (probe->count)
    return probe->count;
  if (probe->n_last == 0)
    return 1;
  return MIN (probe->n_last * 2, probe->n_max);
}

void
mtcp_pars_probe_note (MtcpParsProbe * probe, guint n, gdouble rate)
{
  if (probe->count || rate <= 0)
    return;
  if (probe->n_last && n > probe->n_last &&
      mtcp_pars_fit_shared_link (probe->n_last, probe->x_last, n, rate,
          &probe->capacity, &probe->others)) {
    probe->count = mtcp_pars_connections_for_share (probe->others,
        probe->share, 1, probe->n_max);
    return;
  }
  probe->n_last = n;
  probe->x_last = rate;
  if (n >= probe->n_max)
    probe->count = probe->n_max;        /* still scaling at the cap */
}

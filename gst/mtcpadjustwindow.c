/* multitcp
 * Copyright (C) 2026 the multitcp authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "mtcpadjustwindow.h"

#include <math.h>
#include <string.h>

static void
spread (MtcpAdjustWindow * aw, guint64 total)
{
  guint i;

  if (total < aw->n)
    total = aw->n;              /* every connection keeps one segment */
  for (i = 0; i < aw->n; i++)
    aw->windows[i] = total / aw->n + (i < total % aw->n ? 1 : 0);
}

void
mtcp_adjust_window_init (MtcpAdjustWindow * aw,
    const MtcpAdjustWindowParams * params, guint n, gdouble target_Bps,
    gdouble rtt_s)
{
  memset (aw, 0, sizeof (*aw));
  aw->params = *params;
  if (aw->params.mss == 0)
    aw->params.mss = 1448;
  aw->n = CLAMP (n, 1, MTCP_WINDOW_MAX_CONNECTIONS);
  aw->target = target_Bps;
  aw->measured = -1;
  spread (aw, (guint64) ceil (target_Bps * rtt_s / aw->params.mss));
  g_snprintf (aw->reason, sizeof (aw->reason), "initial: T_d*RTT/MSS = %u "
      "segments over %u connections", mtcp_adjust_window_sum (aw), aw->n);
}

gdouble
mtcp_adjust_window_desired (gdouble target_Bps, gdouble stream_Bps,
    gdouble headroom)
{
  if (target_Bps <= 0)
    return stream_Bps * headroom;
  return MAX (target_Bps, stream_Bps);
}

void
mtcp_adjust_window_set_target (MtcpAdjustWindow * aw, gdouble target_Bps)
{
  aw->target = target_Bps;
}

void
mtcp_adjust_window_set_connections (MtcpAdjustWindow * aw, guint n)
{
  guint64 total = mtcp_adjust_window_sum (aw);

  aw->n = CLAMP (n, 1, MTCP_WINDOW_MAX_CONNECTIONS);
  spread (aw, total);
}

guint
mtcp_adjust_window_sum (const MtcpAdjustWindow * aw)
{
  guint i, sum = 0;
  for (i = 0; i < aw->n; i++)
    sum += aw->windows[i];
  return sum;
}

gdouble
mtcp_adjust_window_congestion_ratio (const MtcpAdjustWindow * aw,
    gdouble rtt_s)
{
  gdouble wn = aw->target * rtt_s / aw->params.mss;
  return wn > 0 ? mtcp_adjust_window_sum (aw) / wn : 0;
}

/* One segment to the smallest window (the first of equals): windows then
 * never differ by more than one. */
static void
grow_one (MtcpAdjustWindow * aw)
{
  guint i, min = 0;
  for (i = 1; i < aw->n; i++)
    if (aw->windows[i] < aw->windows[min])
      min = i;
  aw->windows[min]++;
}

static gboolean
shrink_one (MtcpAdjustWindow * aw)
{
  guint i, max = 0;
  for (i = 1; i < aw->n; i++)
    if (aw->windows[i] > aw->windows[max])
      max = i;
  if (aw->windows[max] <= 1)
    return FALSE;
  aw->windows[max]--;
  return TRUE;
}

MtcpWindowDecision
mtcp_adjust_window_update (MtcpAdjustWindow * aw, gdouble sample_Bps,
    gdouble rtt_s, gboolean network_limited)
{
  gdouble cap = aw->params.spike_factor * aw->target * rtt_s /
      aw->params.mss;
  guint sum = mtcp_adjust_window_sum (aw);
  guint64 d;

  aw->measured = aw->measured < 0 ? sample_Bps :
      aw->params.smoothing * aw->measured +
      (1 - aw->params.smoothing) * sample_Bps;

  if (aw->measured < aw->target && sum <= cap) {
    if (!network_limited) {
      aw->last = MTCP_WINDOW_HOLD;
      g_snprintf (aw->reason, sizeof (aw->reason), "T_m %.0f < T_d %.0f B/s "
          "but the sender had nothing queued: the path is not the limit",
          aw->measured, aw->target);
      return aw->last;
    }
    d = (guint64) ceil ((aw->target - aw->measured) * rtt_s /
        aw->params.mss);
    while (d-- > 0 && mtcp_adjust_window_sum (aw) < cap)
      grow_one (aw);
    aw->last = MTCP_WINDOW_INCREASE;
    g_snprintf (aw->reason, sizeof (aw->reason), "T_m %.0f < T_d %.0f B/s: "
        "window sum %u -> %u segments (cap %.0f)", aw->measured, aw->target,
        sum, mtcp_adjust_window_sum (aw), cap);
  } else if (aw->measured > aw->target + aw->params.guard) {
    d = (guint64) ceil ((aw->measured - aw->target) * rtt_s /
        aw->params.mss);
    while (d-- > 0 && shrink_one (aw));
    aw->last = MTCP_WINDOW_DECREASE;
    g_snprintf (aw->reason, sizeof (aw->reason), "T_m %.0f > T_d %.0f + "
        "lambda %.0f B/s: window sum %u -> %u segments", aw->measured,
        aw->target, aw->params.guard, sum, mtcp_adjust_window_sum (aw));
  } else {
    aw->last = MTCP_WINDOW_HOLD;
    g_snprintf (aw->reason, sizeof (aw->reason), "T_m %.0f B/s is on target "
        "%.0f (or the window sum %u is at its cap %.0f)", aw->measured,
        aw->target, sum, cap);
  }
  return aw->last;
}

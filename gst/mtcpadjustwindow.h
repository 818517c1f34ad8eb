/* multitcp
 * Copyright (C) 2026 the multitcp authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
/* MultiTCP AdjustWindowSize (Tullimas et al., Alg. 1, Sec. 4.2.1): keep
 * the measured throughput T_m at the desired T_d by moving the receive
 * windows of N connections, in segments, so that they never differ by more
 * than one and their sum stays under f * T_d * RTT / MSS.
 *
 * Pure arithmetic: the caller measures, and applies the windows it reads
 * back (multitcpsrc sets TCP_WINDOW_CLAMP on each socket). */
#ifndef __MTCP_ADJUST_WINDOW_H__
#define __MTCP_ADJUST_WINDOW_H__

#include <glib.h>

G_BEGIN_DECLS

#define MTCP_WINDOW_MAX_CONNECTIONS 1024

typedef struct {
  gdouble smoothing;            /* alpha: weight of the previous T_m (Table I: 0.9) */
  gdouble guard;                /* lambda, bytes/s above T_d before shrinking (Table I: 7000) */
  gdouble spike_factor;         /* f: cap on the window sum (Table I: 6, Table II: 10) */
  guint mss;                    /* bytes per window unit */
} MtcpAdjustWindowParams;

typedef enum {
  MTCP_WINDOW_HOLD,
  MTCP_WINDOW_INCREASE,
  MTCP_WINDOW_DECREASE,
} MtcpWindowDecision;

typedef struct {
  MtcpAdjustWindowParams params;
  guint n;
  guint windows[MTCP_WINDOW_MAX_CONNECTIONS];   /* segments, >= 1 */
  gdouble target;               /* T_d, bytes/s */
  gdouble measured;             /* smoothed T_m, bytes/s; < 0 before the first sample */
  MtcpWindowDecision last;
  gchar reason[160];
} MtcpAdjustWindow;

/* Step 2: w_i = T_d * RTT / (MSS * N), at least one segment each. */
void mtcp_adjust_window_init (MtcpAdjustWindow * aw,
    const MtcpAdjustWindowParams * params, guint n, gdouble target_Bps,
    gdouble rtt_s);
void mtcp_adjust_window_set_target (MtcpAdjustWindow * aw, gdouble target_Bps);
/* T_d from the user's target (0 = automatic) and the stream's own rate
 * (0 = not measured yet): automatic is stream * headroom; a target below the
 * stream is raised to it, since windows held under a live stream's rate can
 * only build a backlog that ends in skips. */
gdouble mtcp_adjust_window_desired (gdouble target_Bps, gdouble stream_Bps,
    gdouble headroom);
/* A connection more or fewer: the total is spread over the new count. */
void mtcp_adjust_window_set_connections (MtcpAdjustWindow * aw, guint n);

/* Steps 3-20, once per sampling interval, with the throughput measured
 * over it. @network_limited FALSE means the sender had nothing queued, so
 * a shortfall says nothing about the path: windows are not raised. */
MtcpWindowDecision mtcp_adjust_window_update (MtcpAdjustWindow * aw,
    gdouble sample_Bps, gdouble rtt_s, gboolean network_limited);

guint mtcp_adjust_window_sum (const MtcpAdjustWindow * aw);
/* W_s / W_n with W_n = T_d * RTT / MSS: MultiTCP's congestion ratio. */
gdouble mtcp_adjust_window_congestion_ratio (const MtcpAdjustWindow * aw,
    gdouble rtt_s);

G_END_DECLS

#endif

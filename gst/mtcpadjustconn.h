/* multitcp
 * Copyright (C) 2026 the multitcp authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
/* MultiTCP AdjustNumConnections (Tullimas et al., Alg. 2, Sec. 4.2.2):
 * one connection more or fewer from the congestion ratio W_s/W_n, run
 * before AdjustWindowSize each interval (VariedConnVariedWinSize, Alg. 3). */
#ifndef __MTCP_ADJUST_CONN_H__
#define __MTCP_ADJUST_CONN_H__

#include <glib.h>

G_BEGIN_DECLS

typedef struct {
  gdouble beta;                 /* damping on the ratio (Table III: 1) */
  gdouble cf;                   /* congestion factor (Table III: 5) */
} MtcpAdjustConnParams;

typedef struct {
  MtcpAdjustConnParams params;
  gdouble prev_ratio;
  gchar reason[160];
} MtcpAdjustConn;

void mtcp_adjust_conn_init (MtcpAdjustConn * ac,
    const MtcpAdjustConnParams * params);
/* Returns -1 (stop one), 0 or +1 (start one). @ratio is W_s/W_n,
 * throughputs in bytes/s. @network_limited FALSE (the sender had nothing
 * queued): windows over cf * W_n are idle, not a sign of severe
 * congestion, so step 3 does not stop one. */
gint mtcp_adjust_conn_update (MtcpAdjustConn * ac, gdouble ratio,
    gdouble measured, gdouble target, gboolean network_limited);

G_END_DECLS

#endif

/* multitcp
 * Copyright (C) 2026 the multitcp authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
/* MULTFRC's connection controller (Chen and Zakhor, Eq. 7): average m RTT
 * reports, track rtt_min, then n -= beta when ave_rtt - rtt_min >
 * gamma * rtt_min (a queue is building: the link is full), else
 * n += alpha / n (inverse increase, additive decrease). */
#ifndef __MTCP_MULTFRC_H__
#define __MTCP_MULTFRC_H__

#include <glib.h>

G_BEGIN_DECLS

typedef struct {
  gdouble alpha;
  gdouble beta;
  gdouble gamma;
  guint m;                      /* RTT reports per decision */
  gdouble n_min, n_max;
} MtcpMultfrcParams;

typedef struct {
  MtcpMultfrcParams params;
  gdouble n;
  gdouble rtt_min;              /* seconds, < 0 until the first average */
  gdouble rtt_sum;
  guint rtt_count;
  gdouble last_ave;
  gchar reason[160];
} MtcpMultfrc;

void mtcp_multfrc_init (MtcpMultfrc * mf, const MtcpMultfrcParams * params,
    gdouble n);
/* Feed one RTT report (s). Returns TRUE when it made a decision; read the
 * count with mtcp_multfrc_connections. */
gboolean mtcp_multfrc_add_rtt (MtcpMultfrc * mf, gdouble rtt_s);
guint mtcp_multfrc_connections (const MtcpMultfrc * mf);

G_END_DECLS

#endif

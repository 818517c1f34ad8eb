/* multitcp
 * Copyright (C) 2026 the multitcp authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
/* ParS's model of how many TCP flows a path needs (Ansari and Ghaderi,
 * Eq. 19): N >= tau * C * sqrt(p) / (phi * (1 - p)), with C the rate to
 * carry in segments per second, tau the RTT, p the loss rate. */
#ifndef __MTCP_PARS_H__
#define __MTCP_PARS_H__

#include <glib.h>

G_BEGIN_DECLS

/* phi: the throughput constant of the sender's congestion control in
 * segments per RTT at loss p (X = phi / (RTT sqrt(p))). */
#define MTCP_PARS_PHI_RENO 1.22

guint mtcp_pars_connections (gdouble rate_bps, gdouble rtt_s, gdouble loss,
    guint mss, gdouble phi, guint n_min, guint n_max);

/* Traffic enough behind a loss rate (losses in segments) for Eq. 19: 500
 * segments, or 10 losses in 200. */
gboolean mtcp_pars_loss_known (gdouble segments, gdouble losses);

/* Enough behind a loss rate that a count from it stays: 30 losses, or
 * 5 000 segments. */
gboolean mtcp_pars_loss_known_well (gdouble segments, gdouble losses);

/* The loss rate about one standard deviation above what @losses in
 * @segments show, (k + sqrt (k + 1)) / segments: errs towards one
 * connection too many, not one too few. */
gdouble mtcp_pars_loss_upper (gdouble segments, gdouble losses);

/* A connection's first recovery, its slow start's overshoot (and any
 * timeouts after it): the first 1 s, or 4 RTTs, from its first REPORT with
 * a retransmission. A window opening a fixed time after a loss samples
 * random loss without bias (docs/control.md). */
typedef struct {
  gint64 since_us;              /* its first REPORT with a retransmission;
                                 * 0 = none yet */
  gboolean over;                /* the marks below are final */
  guint32 retrans;              /* the sink's retransmissions and */
  guint64 acked;                /* acknowledged bytes at the REPORT the
                                 * loss after the start counts from (0: no
                                 * loss yet, from the connection's start) */
} MtcpParsFirstRecovery;

/* A REPORT of the connection: its sink's retransmissions and acknowledged
 * bytes so far, and its RTT. */
void mtcp_pars_first_recovery_note (MtcpParsFirstRecovery * recovery,
    guint32 total_retrans, guint64 bytes_acked, guint32 rtt_us,
    gint64 now_us);

/* Eqs. 1-3, for a shared bottleneck of capacity C carrying M other
 * flows: n connections get X_n = n C / (n + M). From X_a over n_a
 * connections and X_b over n_b > n_a (Eq. 3 is n_a = 1, n_b = 2):
 * M = n_a n_b (X_b - X_a) / (n_b X_a - n_a X_b), C = X_a (n_a + M) / n_a.
 * FALSE when the second count scaled the rate by n_b / n_a or more: no
 * shared limit seen yet, measure with more. X_b <= X_a: the connections
 * alone fill the link (M = 0, C the larger). */
gboolean mtcp_pars_fit_shared_link (guint n_a, gdouble x_a, guint n_b,
    gdouble x_b, gdouble * capacity, gdouble * others);

/* Eq. 1 solved for n: the fewest connections that get @share of the
 * link next to @others flows, within [n_min, n_max]. */
guint mtcp_pars_connections_for_share (gdouble others, gdouble share,
    guint n_min, guint n_max);

/* How a download picks its count with Eq. 3 (multitcphttpsrc
 * connections=0): the first chunk over one connection, the second over
 * two, then, while the rate still scales with the count, twice as many
 * each chunk up to n_max; once Eq. 3 fits, the count Eq. 1 gives. */
typedef struct {
  guint n_max;
  gdouble share;
  guint n_last;                 /* the count of the last chunk noted */
  gdouble x_last;               /* its rate */
  guint count;                  /* 0 while measuring */
  gdouble capacity, others;     /* the fit, once made */
} MtcpParsProbe;

void mtcp_pars_probe_init (MtcpParsProbe * probe, guint n_max, gdouble share);
/* The count for the next chunk. */
guint mtcp_pars_probe_next (const MtcpParsProbe * probe);
/* A chunk fetched over @n connections at @rate (bytes/s). */
void mtcp_pars_probe_note (MtcpParsProbe * probe, guint n, gdouble rate);

G_END_DECLS

#endif

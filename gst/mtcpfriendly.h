/* multitcp
 * Copyright (C) 2026 the multitcp authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
/* The network-friendly transfer of seed 004 (Eqs. 1-8): per RTT, from one
 * TCP connection's state and the receiver's playout buffer b_dst, how many
 * bytes (apwnd) the application passes to TCP in the next RTT, so that the
 * receiver holds enough to ride out the loss the congestion level makes
 * likely, and no more. Pure: times and TCP state are passed in. */
#ifndef __MTCP_FRIENDLY_H__
#define __MTCP_FRIENDLY_H__

#include <glib.h>

#include "mtcptcpinfo.h"

G_BEGIN_DECLS

typedef struct {
  gdouble alpha_s;              /* loss events count this long (3600) */
  gdouble beta;                 /* EWMA weight of a new RTT sample (0.2) */
  gdouble gamma;                /* RTT_max = mean + gamma std (1) */
} MtcpFriendlyParams;

#define MTCP_FRIENDLY_DEFAULT_ALPHA_S 3600.0
#define MTCP_FRIENDLY_DEFAULT_BETA 0.2
#define MTCP_FRIENDLY_DEFAULT_GAMMA 1.0

typedef enum {
  MTCP_FRIENDLY_LOSS_DUPACKS,   /* TCP entered Recovery (TD-ACKs) */
  MTCP_FRIENDLY_LOSS_TIMEOUT,   /* TCP entered Loss (a TO) */
} MtcpFriendlyLoss;

/* What one round computed, for the stats and the tests (bytes, packets) */
typedef struct {
  gdouble rtt_max_s;            /* Eq. 4 */
  gdouble nwnd;                 /* Eq. 3, segments */
  gdouble cl;                   /* Eq. 1, packets queued */
  gdouble b_ret, b_dup, b_to;   /* Eqs. 2, 5, 6 */
  gdouble dup_min, to_min;      /* from past loss events; G_MAXDOUBLE: none */
  gdouble b_tgt;                /* Eq. 7, at least the floor */
  gdouble b_dst;                /* the receiver's, as given */
  guint64 apwnd;                /* Eq. 8 */
} MtcpFriendlyRound;

typedef struct _MtcpFriendly MtcpFriendly;

/* @rate_Bps: the video's playback rate */
MtcpFriendly *mtcp_friendly_new (const MtcpFriendlyParams * params,
    gdouble rate_Bps);
void mtcp_friendly_free (MtcpFriendly * f);
void mtcp_friendly_set_rate (MtcpFriendly * f, gdouble rate_Bps);
/* The least buffer target (bytes), whatever Eqs. 2-7 say (0: none) */
void mtcp_friendly_set_floor (MtcpFriendly * f, gdouble bytes);

/* TCP's state read now (TCP_INFO) and the receiver's playout buffer
 * @b_dst (bytes). A transition of the connection into Recovery or Loss is
 * a loss event, recorded at once with the congestion level; once an RTT
 * (the smoothed one) has passed since the round began, the next round's
 * apwnd is computed (TRUE). */
gboolean mtcp_friendly_update (MtcpFriendly * f, const MtcpTcpInfo * info,
    gdouble b_dst, gint64 now_us);
/* A loss event by hand (tests, or a transport that sees it otherwise). */
void mtcp_friendly_note_loss (MtcpFriendly * f, MtcpFriendlyLoss kind,
    gint64 now_us);

/* What may still go to TCP in this round (apwnd less what was sent). */
guint64 mtcp_friendly_budget (const MtcpFriendly * f);
void mtcp_friendly_sent (MtcpFriendly * f, guint64 bytes);

const MtcpFriendlyRound *mtcp_friendly_round (const MtcpFriendly * f);
guint mtcp_friendly_loss_events (const MtcpFriendly * f);

G_END_DECLS

#endif

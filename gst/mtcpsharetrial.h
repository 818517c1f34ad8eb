/* multitcp
 * Copyright (C) 2026 the multitcp authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
/* A connection more while flows of others hold the stream back (issue 28,
 * multitcpsrc connection-control=share). ParS's count for a bbr sink is
 * the one of a lossless path: next to eight bbr bulk flows that one
 * connection gets a flow's share, below the stream. So, while the sink
 * holds stream back for a second and what arrives is short of the stream,
 * one connection is added on trial, one at a time. It is kept only if
 * what arrived rose, since on a path the stream alone fills (a cellular
 * uplink slower than the stream) more connections only fill its queue;
 * and by no more than n + 1 connections' share over n's (ParS's Eq. 1),
 * or the path itself changed meanwhile. A trial that brought nothing waits
 * twice as long before the next. Once the stream has been served for
 * long, the connections added are given back one at a time (the
 * competition may have gone); a trial that soon after brings one back
 * doubles that wait.
 *
 * Fed once per sampling interval of the receiver's control (mtcpcontrol.c);
 * plain data, no clock of its own (times are monotonic us), no locking. */
#ifndef __MTCP_SHARE_TRIAL_H__
#define __MTCP_SHARE_TRIAL_H__

#include <glib.h>

G_BEGIN_DECLS

/* the stream held back this long before a trial */
#define MTCP_SHARE_TRIAL_LIMITED_US (1000 * G_TIME_SPAN_MILLISECOND)
/* after the new connection is up: its slow start, then a measurement */
#define MTCP_SHARE_TRIAL_SETTLE_US (1000 * G_TIME_SPAN_MILLISECOND)
#define MTCP_SHARE_TRIAL_MEASURE_US (1500 * G_TIME_SPAN_MILLISECOND)
/* the least rise that keeps the connection */
#define MTCP_SHARE_TRIAL_GAIN 0.15
/* served this long: give one added connection back */
#define MTCP_SHARE_TRIAL_RETIRE_US (30 * G_USEC_PER_SEC)

typedef enum {
  MTCP_SHARE_TRIAL_WATCH,       /* counting how long the stream is held */
  MTCP_SHARE_TRIAL_OPENING,     /* one more asked for, not up yet */
  MTCP_SHARE_TRIAL_MEASURING,   /* up: settle, then measure */
} MtcpShareTrialState;

typedef struct {
  guint n_max;
  MtcpShareTrialState state;
  guint extra;                  /* connections added over the base count */
  /* WATCH: the stream held back since, and what arrived meanwhile */
  gint64 held_since_us;
  gdouble held_bytes, held_s;
  gint64 served_since_us;
  guint ready_seen;             /* connections up at the last interval */
  gint64 ready_changed_us;      /* when that count last changed */
  gint64 next_trial_us;
  gint64 backoff_us;            /* after a trial that brought nothing */
  gint64 retire_wait_us;        /* served this long before one goes */
  gint64 retired_us;            /* when one was last given back */
  /* the trial */
  guint n_before;
  guint ready_before;           /* connections up when it was asked for */
  gdouble rate_before;          /* bytes/s */
  gint64 phase_us;              /* asked for, or up */
  gdouble trial_bytes, trial_s;
  gboolean trial_held;          /* the stream was held back during it */
  gchar reason[200];
} MtcpShareTrial;

void mtcp_share_trial_init (MtcpShareTrial * trial, guint n_max);

/* One sampling interval of @interval_s ended at @now_us: @rate_Bps of the
 * stream arrived over @ready connections, the stream's own rate is
 * @stream_Bps, and the sink held @held stream back (over 50 ms of it).
 * Returns the count wanted: @base (ParS's or the property's) and the
 * connections added. @reason says why, when it changed. */
guint mtcp_share_trial_update (MtcpShareTrial * trial, gint64 now_us,
    guint base, guint ready, gdouble rate_Bps, gdouble interval_s,
    gdouble stream_Bps, gboolean held);

G_END_DECLS

#endif

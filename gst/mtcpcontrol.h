/* multitcp
 * Copyright (C) 2026 the multitcp authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
/* The receiver's control policy: from snapshots of what the sink reports
 * on each connection and of what arrived, decides how many connections the
 * session should have (the `connections` property, ParS's Eq. 19, MultiTCP
 * Alg. 2 or MULTFRC's IIAD) and the receive window of each (MultiTCP
 * Alg. 1), with the reason in words.
 *
 * No sockets, no clock of its own: multitcpsrc's transport (mtcpclient.c)
 * takes a snapshot every tick, applies the count it returns (opening or
 * retiring connections), then the windows. Times are monotonic us. No
 * locking: the owner serialises calls. */
#ifndef __MTCP_CONTROL_H__
#define __MTCP_CONTROL_H__

#include <glib.h>

G_BEGIN_DECLS

typedef enum {
  MTCP_WINDOW_CONTROL_NONE,     /* the kernel's own receive windows */
  MTCP_WINDOW_CONTROL_ADJUST,   /* MultiTCP AdjustWindowSize */
} MtcpWindowControl;

typedef enum {
  MTCP_CONNECTION_CONTROL_FIXED,        /* `connections` (0: ParS's model) */
  MTCP_CONNECTION_CONTROL_CONGESTION,   /* MultiTCP AdjustNumConnections */
  MTCP_CONNECTION_CONTROL_RTT,          /* MULTFRC's IIAD on RTT */
  MTCP_CONNECTION_CONTROL_SHARE,        /* `connections` (0: ParS's), and one
                                         * more on trial while others' flows
                                         * hold the stream back */
} MtcpConnectionControl;

/* What to aim at and how (see mtcpadjustwindow.h, mtcpadjustconn.h,
 * mtcpmultfrc.h, mtcppars.h). */
typedef struct {
  MtcpWindowControl window;
  MtcpConnectionControl connections;
  guint64 target_bitrate;       /* bit/s; 0 = the stream's bitrate x headroom */
  gdouble headroom;
  guint sampling_interval_ms;   /* delta; 0 = 6 RTT */
  gdouble smoothing;            /* alpha */
  gdouble guard;                /* lambda, bytes/s */
  gdouble spike_factor;         /* f */
  gdouble conn_beta;            /* MultiTCP beta */
  gdouble congestion_factor;    /* MultiTCP cf */
  gdouble iiad_alpha, iiad_beta, iiad_gamma;
  guint iiad_reports;           /* m */
  guint min_connections, max_connections;
} MtcpControlConfig;

/* connections=0: the count until ParS has a loss rate (MultiTCP's default) */
#define MTCP_CONTROL_START_CONNECTIONS 5
/* connections=0 with a loss-based sink: ParS's count is taken again this
 * long after the first, from the loss after each connection's first
 * recovery and the stream's rate by then */
#define MTCP_CONTROL_PARS_SECOND_LOOK_US (5 * G_USEC_PER_SEC)

/* One connection at a tick, as the sink last reported it. */
typedef struct {
  gboolean ready;               /* carries the stream (not opening, not
                                 * retiring) */
  gboolean reported;            /* a REPORT arrived on it; the rest is 0
                                 * if not */
  guint32 rtt_us;               /* the sink's smoothed RTT */
  guint32 mss;
  guint32 total_retrans;
  guint64 bytes_acked;
  guint32 recovered_retrans;    /* both at the end of its first recovery: */
  guint64 recovered_acked;      /* the loss after the start counts from there */
  guint64 stream_bitrate;       /* bit/s: the stream's rate at the sink */
  gboolean rate_ignores_loss;   /* the sink's congestion control is bbr */
  gint64 report_us;             /* when the last REPORT came */
  gboolean paced;               /* the sink paces the stream (REPORT's
                                 * PACED), and the playout buffer it keeps
                                 * at the receiver is: */
  gboolean paced_low;           /* below half what it wants there */
  gboolean paced_held;          /* at 80% or more */
} MtcpControlConn;

typedef struct {
  gint64 now_us;
  guint64 payload_bytes;        /* stream bytes received, copies not counted */
  guint active;                 /* connections open or opening, not retiring */
  const MtcpControlConn *conns; /* every connection, in the owner's order */
  guint n_conns;
  guint dial_cap;               /* the most the sink takes (its WELCOME,
                                 * its refusals); 0: not known */
} MtcpControlSnapshot;

typedef struct _MtcpControl MtcpControl;

/* @fewest: the fewest connections a controller may choose besides
 * min-connections (one per local address, or a path goes unused). */
MtcpControl *mtcp_control_new (const MtcpControlConfig * config,
    guint connections, guint fewest);
void mtcp_control_free (MtcpControl * ctl);

/* The count to open with: `connections`, or (0) MultiTCP's default until
 * ParS's model has RTT and loss. */
guint mtcp_control_start (MtcpControl * ctl);
/* The user changed `connections` while running; with fixed connection
 * control and @connections > 0 that is the count now (returns TRUE). */
gboolean mtcp_control_set_connections (MtcpControl * ctl, guint connections);

/* A REPORT arrived: its RTT (the least any gave is the path's own, without
 * the queue our flows built) and what the sink holds back for the session
 * now (queue and unsent bytes, summed by the owner over the connections:
 * over 50 ms of stream waiting in an interval, the path is the limit). */
void mtcp_control_note_report (MtcpControl * ctl, guint32 rtt_us,
    guint64 backlog_bytes);

/* Once per tick. Returns TRUE when the owner should apply the count
 * (mtcp_control_wanted) now; it may change without that, and the owner
 * applies it between ticks too. Then call mtcp_control_windows. */
gboolean mtcp_control_tick (MtcpControl * ctl,
    const MtcpControlSnapshot * snapshot);
/* After the count is applied: the receive windows, in bytes, for the first
 * @ready ready connections (in snapshot order); NULL when they stay as they
 * are (no interval ended this tick, or windows are not controlled). Valid
 * until the next call; *n_windows may be below @ready. */
const guint *mtcp_control_windows (MtcpControl * ctl, guint ready,
    guint * n_windows);

guint mtcp_control_wanted (const MtcpControl * ctl);
const gchar *mtcp_control_count_reason (const MtcpControl * ctl);
const gchar *mtcp_control_window_reason (const MtcpControl * ctl);
/* T_d and the smoothed T_m, bit/s (0 before they are known); the windows'
 * sum in segments. */
guint64 mtcp_control_target_bitrate (const MtcpControl * ctl);
guint64 mtcp_control_measured_bitrate (const MtcpControl * ctl);
guint mtcp_control_window_sum (const MtcpControl * ctl);

/* The count over @n_paths paths (a calling sink's uplinks, or this end's
 * local addresses): one each at least, so that no path is given up (a
 * modem that is out comes back only through a connection of its own); the
 * rest in proportion to what each path delivered lately (@rate_Bps; all 0:
 * evenly), by largest remainder. Into @out; returns the sum (@total, or
 * @n_paths if more). */
guint mtcp_control_split (guint total, guint n_paths, const gdouble * rate_Bps,
    guint * out);

/* Mean of the sink's smoothed RTT over the ready connections that
 * reported, s (0: none); *mss the segment size one of them reported, or
 * 1448. */
gdouble mtcp_control_mean_rtt (const MtcpControlSnapshot * snapshot,
    guint * mss);

G_END_DECLS

#endif

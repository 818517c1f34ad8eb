/* multitcp
 * Copyright (C) 2026 the multitcp authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
/* The kernel's view of one TCP connection, and the per-socket knobs
 * multitcp turns (Linux: TCP_INFO, TCP_CC_INFO, TCP_NOTSENT_LOWAT,
 * TCP_CONGESTION, TCP_WINDOW_CLAMP). Elsewhere the reads fail and the
 * knobs are no-ops. No locks. */
#ifndef __MTCP_TCP_INFO_H__
#define __MTCP_TCP_INFO_H__

#include <gio/gio.h>

G_BEGIN_DECLS

typedef struct {
  guint32 rtt_us;
  guint32 rttvar_us;
  guint32 rto_us;               /* the retransmission timer now */
  guint32 min_rtt_us;
  guint32 snd_cwnd;             /* segments */
  guint32 snd_ssthresh;
  guint32 snd_mss;
  guint32 rcv_mss;
  guint32 total_retrans;
  guint32 lost;
  guint32 unacked;
  guint32 notsent_bytes;
  guint32 last_ack_recv_ms;     /* since the last ACK came, duplicates too */
  guint32 last_data_sent_ms;    /* since new data last went out */
  guint32 retrans;              /* segments retransmitted, not yet acknowledged */
  guint8 ca_state;              /* MTCP_TCP_CA_* */
  guint64 bytes_acked;
  guint64 bytes_received;
  guint64 delivery_rate;        /* bytes/s, the last ACK's sample */
  gboolean delivery_rate_app_limited;   /* that sample had less to send
                                         * than the window allowed */
  guint64 pacing_rate;          /* bytes/s */
  guint64 rwnd_limited_us;      /* how long in all the receiver's window
                                 * held the sender back */
  guint32 snd_wnd;              /* the receiver's advertised window, bytes
                                 * (0: a zero window, if snd_wnd_known) */
  gboolean snd_wnd_known;       /* the kernel reports it (5.4 and later) */
  /* bbr's own state (TCP_CC_INFO, mtcp_tcp_info_read_cc), when the
   * socket runs Linux's bbr */
  gboolean bbr_known;
  guint64 bbr_bandwidth;        /* its model's bottleneck rate, bytes/s */
  gboolean bbr_probing_rtt;     /* PROBE_RTT: the flight held at 4 segments
                                 * for 200 ms and a round trip, to measure
                                 * the least RTT when none as low was seen
                                 * for 10 s */
  guint8 state;
} MtcpTcpInfo;

/* The kernel's congestion-avoidance states (tcpi_ca_state) */
enum {
  MTCP_TCP_CA_OPEN = 0,
  MTCP_TCP_CA_DISORDER = 1,     /* SACKs or duplicate ACKs seen */
  MTCP_TCP_CA_CWR = 2,          /* window reduced without a loss (ECN) */
  MTCP_TCP_CA_RECOVERY = 3,     /* fast retransmit: repairing a loss */
  MTCP_TCP_CA_LOSS = 4,         /* after a retransmission timeout */
};

gboolean mtcp_tcp_info_read (GSocket * socket, MtcpTcpInfo * info);
/* The congestion control's own state into @info's bbr_ fields (a second
 * call, for those that need it): whether the socket answered as bbr. */
gboolean mtcp_tcp_info_read_cc (GSocket * socket, MtcpTcpInfo * info);
/* The same from a TCP_CC_INFO answer @cc of @len bytes. */
gboolean mtcp_tcp_info_take_cc (MtcpTcpInfo * info, gconstpointer cc,
    gsize len);
/* Whether TCP is repairing a loss on the connection now (fast recovery,
 * after a timeout, or segments marked lost or retransmitted in flight). */
gboolean mtcp_tcp_info_in_loss_recovery (const MtcpTcpInfo * info);
/* What waits in the path's queue: the smoothed RTT over the least one
 * (µs, 0 when either is unknown). */
gint64 mtcp_tcp_info_queue_us (const MtcpTcpInfo * info);

/* Unsent bytes above which the socket stops polling writable. */
gboolean mtcp_tcp_set_notsent_lowat (GSocket * socket, guint32 bytes);
/* Empty or NULL keeps the system default. */
gboolean mtcp_tcp_set_congestion (GSocket * socket, const gchar * name,
    GError ** error);
/* Name of the congestion control the socket uses now (newly allocated). */
gchar *mtcp_tcp_get_congestion (GSocket * socket);
/* Whether congestion control @name paces to a model of the path (bbr)
 * rather than halving on loss (reno, cubic), so that random loss does not
 * bound its rate. */
gboolean mtcp_tcp_congestion_ignores_loss (const gchar * name);
/* Bound on the receive window the kernel advertises (0 = no clamp). */
gboolean mtcp_tcp_set_window_clamp (GSocket * socket, guint32 bytes);
void mtcp_tcp_set_nodelay (GSocket * socket, gboolean nodelay);
/* Lets the kernel pace the socket at its congestion control's own rate
 * (about cwnd/RTT), instead of sending each window in one burst. */
gboolean mtcp_tcp_set_pacing (GSocket * socket);
/* The pacing cap the socket has (SO_MAX_PACING_RATE), bytes/s;
 * G_MAXUINT64 when none. */
guint64 mtcp_tcp_get_max_pacing_rate (GSocket * socket);
/* Leave the kernel's quick-ACK mode: one ACK per two full segments. */
void mtcp_tcp_delay_acks (GSocket * socket);

G_END_DECLS

#endif

/* multitcp
 * Copyright (C) 2026 the multitcp authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

/* Transfer control at the sink (seed 004): how much a connection may pass
 * to TCP now when the upstream is not live (a file, sent ahead of its
 * playback). greedy: all its socket takes. network-friendly: each
 * connection its apwnd per RTT (mtcpfriendly.c) for its share of the
 * stream's playback rate and of the receiver's playout buffer. burst: the
 * YouTube-like baseline per session (mtcpburst.c). A live upstream is
 * paced by its encoder: no control. */

#include "mtcppacedcount.h"
#include "mtcpserverprivate.h"
#include "mtcptcpinfo.h"

GST_DEBUG_CATEGORY (mtcp_server_transfer_debug);
#define GST_CAT_DEFAULT mtcp_server_transfer_debug

/* how often TCP_INFO of a connection under control is read at most */
#define TRANSFER_READ_US (5 * G_TIME_SPAN_MILLISECOND)

/* server->lock held. What @sess handed to its connections that has not
 * reached the receiver: queued here, unsent in the kernel, in flight (as of
 * each connection's last TCP_INFO: at most 5 ms old under the control).
 * Not a silent connection's: its frames are copied to others, handed
 * again. */
static guint64
session_in_transit (ServerSession * sess)
{
  guint64 bytes = 0;
  guint i;

  for (i = 0; i < sess->conns->len; i++) {
    const ServerConn *sc = g_ptr_array_index (sess->conns, i);
    if (sc->silent)
      continue;
    bytes += server_conn_unsent_bytes (sc) +
        (guint64) sc->info.unacked * sc->info.snd_mss;
  }
  return bytes;
}

/* server->lock held. A FEEDBACK's playout buffer, and how much the session
 * had handed out by then: what was on its way is not in the report but
 * will be there (counted as handed after it, or each round until it
 * arrives sends the same deficit again). */
void
server_transfer_note_feedback (MtcpServer * server, ServerSession * sess,
    const MtcpFeedback * fb, gint64 now)
{
  guint64 in_transit = session_in_transit (sess);

  sess->playout_known = fb->playout_known;
  sess->playout_bytes = fb->playout_bytes;
  sess->playout_us = now;
  sess->handed_at_playout = sess->handed_bytes -
      MIN (in_transit, sess->handed_bytes);
}

/* The receiver's playout buffer now: its last FEEDBACK (every 100 ms),
 * plus what the session handed out since, less what played since: a
 * round (one RTT) between two FEEDBACKs does not count the same deficit
 * twice. */
static gdouble
session_playout (MtcpServer * server, ServerSession * sess, gint64 now)
{
  gdouble est = (gdouble) sess->playout_bytes + (sess->handed_bytes -
      sess->handed_at_playout) - server->media_rate_Bps *
      (now - sess->playout_us) / G_USEC_PER_SEC;
  return MAX (est, 0);
}

/* Why a session runs without the control for now, said once. */
static gboolean
uncontrolled (MtcpServer * server, const gchar * why)
{
  if (!server->transfer_warned) {
    server->transfer_warned = TRUE;
    GST_WARNING ("transfer-control without effect for now: %s", why);
  }
  return TRUE;
}

gsize
server_transfer_room (MtcpServer * server, ServerConn * sc, gint64 now)
{
  ServerSession *sess = sc->session;
  guint n;
  guint64 room;

  if (server->config.transfer == MTCP_TRANSFER_GREEDY || server->live ||
      sess == NULL)
    return G_MAXSIZE;
  if (now == 0)
    now = g_get_monotonic_time ();
  if (server->config.transfer == MTCP_TRANSFER_BURST) {
    if (sess->burst == NULL)
      sess->burst = mtcp_burst_new (&server->config.burst);
    room = mtcp_burst_budget (sess->burst, now, server_session_transit_us
        (sess) * 2);
  } else {
    /* nothing to pace by yet: no playback rate (no PTS, or less than a
     * second of it so far), no RTT, or a receiver that does not say its
     * playout buffer */
    if (server->media_rate_Bps <= 0)
      return G_MAXSIZE;
    if (sess->playout_us && !sess->playout_known && uncontrolled (server,
            "the receiver does not report its playout buffer (an older "
            "multitcpsrc)"))
      return G_MAXSIZE;
    n = MAX (sess->conns->len, 1);
    if (now - sc->transfer_read_us >= TRANSFER_READ_US) {
      mtcp_tcp_info_read (mtcp_connection_get_socket (sc->conn), &sc->info);
      sc->transfer_read_us = now;
    }
    if (sc->info.rtt_us == 0)
      return G_MAXSIZE;
    if (sc->friendly == NULL)
      sc->friendly = mtcp_friendly_new (&server->config.friendly,
          server->media_rate_Bps / n);
    mtcp_friendly_set_rate (sc->friendly, server->media_rate_Bps / n);
    /* the player holds its latency's worth before it starts: keep that
     * there. Eqs. 2-7 aim at an RTO's worth, half the latency starved
     * players on netsim where TCP took 5 s to carry the stream again
     * after a loss (docs/network-friendly.md) */
    mtcp_friendly_set_floor (sc->friendly, server->media_rate_Bps / n *
        sess->latency_us / G_USEC_PER_SEC);
    if (mtcp_friendly_update (sc->friendly, &sc->info,
            session_playout (server, sess, now) / n, now)) {
      const MtcpFriendlyRound *r = mtcp_friendly_round (sc->friendly);
      GST_LOG ("connection %u: apwnd %" G_GUINT64_FORMAT " (rate %.0f B/s, "
          "cl %.1f, b_tgt %.0f of b_ret %.0f b_dup %.0f b_TO %.0f, b_dst "
          "%.0f, RTT_max %.2f ms; TCP's cwnd %u, state %u, delivery %"
          G_GUINT64_FORMAT " B/s)", sc->id, r->apwnd,
          server->media_rate_Bps / n, r->cl, r->b_tgt, r->b_ret, r->b_dup,
          r->b_to, r->b_dst, r->rtt_max_s * 1e3, sc->info.snd_cwnd,
          sc->info.ca_state, sc->info.delivery_rate);
    }
    room = mtcp_friendly_budget (sc->friendly);
  }
  if (room == 0) {
    sess->transfer_held++;
    server->transfer_held = TRUE;
  }
  return (gsize) MIN (room, G_MAXSIZE);
}

void
server_transfer_sent (MtcpServer * server, ServerConn * sc, gsize bytes)
{
  if (server->config.transfer == MTCP_TRANSFER_GREEDY || server->live ||
      sc->session == NULL)
    return;
  sc->session->handed_bytes += bytes;
  if (sc->session->burst)
    mtcp_burst_sent (sc->session->burst, bytes);
  if (sc->friendly)
    mtcp_friendly_sent (sc->friendly, bytes);
}

/* The I/O thread's timer while a control is on, no lock held: every
 * connection under it reads TCP's state (a loss is seen when it happens,
 * not only when the connection could send) and those held back get their
 * next round. */
gboolean
server_on_transfer_timer (gpointer data)
{
  MtcpServer *server = data;
  gint64 now = g_get_monotonic_time ();
  GList *l;

  if (!server->running)
    return G_SOURCE_REMOVE;
  g_mutex_lock (&server->lock);
  if (server->config.transfer == MTCP_TRANSFER_NETWORK_FRIENDLY &&
      !server->live)
    for (l = server->sessions; l; l = l->next) {
      ServerSession *sess = l->data;
      guint i;
      for (i = 0; i < sess->conns->len; i++)
        server_transfer_room (server, g_ptr_array_index (sess->conns, i), now);
    }
  if (server->transfer_held) {
    server->transfer_held = FALSE;
    server_pump_all (server);
    server_reap (server);
  }
  server_unlock (server);
  return G_SOURCE_CONTINUE;
}

void
server_note_media (MtcpServer * server, GstClockTime pts, gsize bytes)
{
  GstClockTime span;
  gdouble sample;

  if (!GST_CLOCK_TIME_IS_VALID (pts) ||
      server->config.transfer == MTCP_TRANSFER_GREEDY)
    return;
  if (!GST_CLOCK_TIME_IS_VALID (server->media_pts0) ||
      pts < server->media_pts0) {
    server->media_pts0 = pts;
    server->media_bytes = 0;
  }
  server->media_bytes += bytes;
  span = pts - server->media_pts0;
  if (span < GST_SECOND)
    return;
  /* bytes per second of stream time: the playback rate, whatever the
   * upstream's pace */
  sample = server->media_bytes * (gdouble) GST_SECOND / span;
  server->media_rate_Bps = server->media_rate_Bps > 0 ?
      0.7 * server->media_rate_Bps + 0.3 * sample : sample;
  server->media_pts0 = pts;
  server->media_bytes = 0;
}

/* server->lock held. network-friendly paces a stored stream at its
 * playback rate (once that is known) */
gboolean
server_transfer_paces (MtcpServer * server)
{
  return !server->live && server->config.transfer ==
      MTCP_TRANSFER_NETWORK_FRIENDLY && server->media_rate_Bps > 0;
}

/* server->lock held. REPORT's PACED, PACED_LOW and PACED_HELD for @sess:
 * whether the control keeps the receiver's playout buffer where it wants
 * it (the connections carry the stream and more), or cannot. */
guint32
server_transfer_report_flags (MtcpServer * server, ServerSession * sess,
    gint64 now)
{
  gdouble kept, target;

  if (!server_transfer_paces (server) || !sess->playout_known ||
      sess->latency_us <= 0)
    return 0;
  kept = session_playout (server, sess, now);
  target = server->media_rate_Bps * sess->latency_us / G_USEC_PER_SEC;
  switch (mtcp_paced_buffer_judge (kept, target)) {
    case MTCP_PACED_BUFFER_LOW:
      return MTCP_REPORT_PACED | MTCP_REPORT_PACED_LOW;
    case MTCP_PACED_BUFFER_HELD:
      return MTCP_REPORT_PACED | MTCP_REPORT_PACED_HELD;
    default:
      return MTCP_REPORT_PACED;
  }
}

/* server->lock held. bit/s: under network-friendly, a stored video's
 * playback rate once known; otherwise what upstream pushes, or the most
 * the sink's bitrate control may give the encoder where that is more. A
 * file is pushed as fast as the queue takes it at first, and the receiver
 * sizes its connections (and, with window-control=adjust, its windows)
 * from this. Burst's first burst runs at line rate: not capped by it. */
guint64
server_transfer_stream_bitrate (MtcpServer * server)
{
  if (!server_transfer_paces (server))
    return MAX (server->stream_bitrate, server->stream_ceiling_bps);
  return (guint64) (server->media_rate_Bps * 8);
}

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

#include "mtcpserverprivate.h"
#include "mtcptcpinfo.h"

GST_DEBUG_CATEGORY (mtcp_server_transfer_debug);
#define GST_CAT_DEFAULT mtcp_server_transfer_debug

/* how often TCP_INFO of a connection under control is read at most */
#define TRANSFER_READ_US (5 * G_TIME_SPAN_MILLISECOND)

/* The receiver's playout buffer, by its latest FEEDBACK. */
static guint64
session_playout (ServerSession * sess)
{
  const ServerConn *latest = NULL;
  guint i;

  for (i = 0; i < sess->conns->len; i++) {
    const ServerConn *sc = g_ptr_array_index (sess->conns, i);
    if (sc->feedback_us && (latest == NULL ||
            sc->feedback_us > latest->feedback_us))
      latest = sc;
  }
  return latest && latest->feedback.playout_known ?
      latest->feedback.playout_bytes : 0;
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
  if (server->config.transfer == MTCP_TRANSFER_BURST) {
    if (sess->burst == NULL)
      sess->burst = mtcp_burst_new (&server->config.burst);
    room = mtcp_burst_budget (sess->burst, now, sc->info.rtt_us);
  } else {
    n = MAX (sess->conns->len, 1);
    if (sc->friendly == NULL)
      sc->friendly = mtcp_friendly_new (&server->config.friendly,
          server->media_rate_Bps / n);
    mtcp_friendly_set_rate (sc->friendly, server->media_rate_Bps / n);
    if (now - sc->transfer_read_us >= TRANSFER_READ_US) {
      mtcp_tcp_info_read (mtcp_connection_get_socket (sc->conn), &sc->info);
      sc->transfer_read_us = now;
    }
    if (mtcp_friendly_update (sc->friendly, &sc->info,
            (gdouble) session_playout (sess) / n, now)) {
      const MtcpFriendlyRound *r = mtcp_friendly_round (sc->friendly);
      GST_LOG ("connection %u: apwnd %" G_GUINT64_FORMAT " (rate %.0f B/s, "
          "cl %.1f, b_tgt %.0f of b_ret %.0f b_dup %.0f b_TO %.0f, b_dst "
          "%.0f, RTT_max %.2f ms)", sc->id, r->apwnd,
          server->media_rate_Bps / n, r->cl, r->b_tgt, r->b_ret, r->b_dup,
          r->b_to, r->b_dst, r->rtt_max_s * 1e3);
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
  if (sc->session->burst)
    mtcp_burst_sent (sc->session->burst, bytes);
  if (sc->friendly)
    mtcp_friendly_sent (sc->friendly, bytes);
}

/* The I/O thread's timer while a control is on, no lock held: the
 * connections held back get their next round. */
gboolean
server_on_transfer_timer (gpointer data)
{
  MtcpServer *server = data;

  if (!server->running)
    return G_SOURCE_REMOVE;
  g_mutex_lock (&server->lock);
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

  if (!GST_CLOCK_TIME_IS_VALID (pts))
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

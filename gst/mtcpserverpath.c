/* multitcp
 * Copyright (C) 2026 the multitcp authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

/* What each session's path carries now, from its connections' TCP_INFO:
 * the spare capacity and darkness the repair budget needs, the transit the
 * queue's deadline gate needs, and the bandwidth estimate (mtcpestimate.c)
 * told to the application. */

#include "mtcpserverprivate.h"
#include "mtcptcpinfo.h"

GST_DEBUG_CATEGORY (mtcp_server_path_debug);
#define GST_CAT_DEFAULT mtcp_server_path_debug

/* how often a probe's padding is given out when nothing else pumps */
#define PROBE_TIMER_MS 20

/* no ACK this long (or 2 RTT + 4 RTTVAR) on a connection with data in
 * flight: silent; all of them silent: the path is dark */
#define DARK_MIN_US (G_USEC_PER_SEC)

guint64
server_conn_unsent_bytes (const ServerConn * sc)
{
  return mtcp_connection_unsent_bytes (sc->conn) + sc->info.notsent_bytes;
}

gboolean
server_conn_backlogged (const ServerConn * sc)
{
  return server_conn_unsent_bytes (sc) > 0;
}

void
server_conn_read_info (ServerConn * sc, gint64 now_us)
{
  gboolean backlogged;

  mtcp_tcp_info_read (mtcp_connection_get_socket (sc->conn), &sc->info);
  mtcp_tcp_info_read_cc (mtcp_connection_get_socket (sc->conn), &sc->info);
  backlogged = server_conn_backlogged (sc);
  /* a backlog while TCP holds its window down (a random loss repaired,
   * bbr's PROBE_RTT) is no "backlogged" span (the path's last rate capped
   * the windows' guess at 1.8 Mbit/s on a 50 Mbit/s path at 3% loss, and
   * the encoder stayed there) */
  mtcp_drain_rate_note_info (&sc->drain, now_us, &sc->info, backlogged);
}

gboolean
server_conn_probe_queued (const ServerConn * sc)
{
  return mtcp_tcp_info_queue_us (&sc->info) > sc->probe_queue_us +
      MTCP_PROBE_QUEUE_US;
}

/* server->lock held. The probe's padding made the path queue on every
 * connection of @sess. */
static gboolean
session_probe_queued (ServerSession * sess)
{
  guint i;

  for (i = 0; i < sess->conns->len; i++)
    if (!server_conn_probe_queued (g_ptr_array_index (sess->conns, i)))
      return FALSE;
  return sess->conns->len > 0;
}

/* server->lock held. What an idle connection (@sc, its TCP_INFO read, RTT
 * known) would carry: its window an RTT, bounded as below; @receiver what
 * a receiver that held it back takes (0: none). */
static guint64
conn_window_reading (const ServerConn * sc, guint64 receiver)
{
  const MtcpTcpInfo *info = &sc->info;
  guint64 window = (guint64) info->snd_cwnd * info->snd_mss;
  guint64 path_last = mtcp_drain_rate_last_of_path (&sc->drain);

  /* the smaller of ours and the receiver's (a slow reader's being small),
   * but no more than the kernel paces at (bbr keeps two BDPs of window for
   * a path it paces at one) */
  if (info->snd_wnd_known)
    window = MIN (window, info->snd_wnd);
  window = window * G_USEC_PER_SEC / info->rtt_us;
  if (info->pacing_rate > 0 && info->pacing_rate != G_MAXUINT64)
    window = MIN (window, info->pacing_rate);
  /* nor than the path carried the last time it was the limit: while the
   * stream is the limit a window is no measure of room. cubic's grows into
   * the bottleneck's queue and stays (132 kB over a 55 ms RTT read 19
   * Mbit/s on a 2 Mbit/s link), bbr keeps the bandwidth it measured before
   * a fall (8.5 Mbit/s on a path carrying 1.1); the kernel's rate sample
   * is kept from before too, its own samples being app-limited */
  if (path_last > 0)
    window = MIN (window, path_last);
  /* nor than a receiver whose window held it back takes: a slow reader's
   * small window over a loopback RTT read as Mbit/s */
  if (receiver > 0)
    window = MIN (window, receiver);
  return window;
}

/* server->lock held. Feeds the session's bandwidth estimate with what its
 * connections delivered, their windows (TCP_INFO just read), what waits
 * here and how long the path's queue holds it; dark from @path. A
 * significant change is told after the lock (server_unlock). */
static void
session_estimate (MtcpServer * server, ServerSession * sess,
    const MtcpRepairPath * path)
{
  MtcpRateSample sample = { sess->closed_acked, 0, 0, path->dark, 0 };
  GstStructure *st;
  MtcpQueueSessionStats qst;
  gint64 queued_us = G_MAXINT64, now = g_get_monotonic_time ();
  guint i, held_down_conns = 0;

  mtcp_send_queue_session_stats (server->queue, sess->qs, &qst);
  sample.waiting_bytes = qst.backlog_bytes;
  for (i = 0; i < sess->conns->len; i++) {
    ServerConn *sc = g_ptr_array_index (sess->conns, i);
    const MtcpTcpInfo *info = &sc->info;
    /* what a receiver takes whose window held the sender back */
    guint64 receiver = mtcp_drain_rate_of_receiver (&sc->drain);
    gboolean held_down = mtcp_transit_window_held_down (info);
    guint64 reading = 0;

    held_down_conns += held_down;
    sample.bytes_acked += info->bytes_acked;
    sample.waiting_bytes += server_conn_unsent_bytes (sc);
    if (info->unacked > 0 && info->min_rtt_us > 0)
      queued_us = MIN (queued_us, mtcp_tcp_info_queue_us (info));
    GST_LOG ("session %s, connection %u: %" G_GUINT64_FORMAT " unsent, "
        "cwnd %u x %u, receiver's window %u, RTT %u us, delivery rate %"
        G_GUINT64_FORMAT " B/s, drained %" G_GUINT64_FORMAT " B/s (the "
        "path's last %" G_GUINT64_FORMAT " B/s), TCP state %u, last ACK %u "
        "ms ago, bbr's bandwidth %" G_GUINT64_FORMAT " B/s%s%s%s%s%s",
        sess->id_str, sc->id, server_conn_unsent_bytes (sc),
        info->snd_cwnd, info->snd_mss, info->snd_wnd, info->rtt_us,
        info->delivery_rate, sc->drain.bytes_per_s,
        mtcp_drain_rate_last_of_path (&sc->drain), info->ca_state,
        info->last_ack_recv_ms, info->bbr_bandwidth,
        sc->drain.backlogged ? ", backlogged" : "",
        receiver ? ", held back by the receiver" : "",
        mtcp_transit_repairing_loss (info) ? ", repairing a loss" : "",
        info->bbr_probing_rtt ? ", bbr's PROBE_RTT" : "",
        info->delivery_rate_app_limited ? ", an app-limited sample" : "");
    /* it has more than it sends: whatever holds it back (its window,
     * the receiver's), what it delivers is what it can; over a span, as
     * the kernel's sample is one flight's, if the span was backlogged all
     * through or the receiver's window holds it back: a span partly idle
     * otherwise (a keyframe after a thin stream) measured the stream, and
     * the estimate cut the encoder to it every keyframe */
    if (server_conn_backlogged (sc))
      reading = mtcp_transit_backlog_rate (info, &sc->drain);
    if (reading == 0 && info->rtt_us == 0)
      continue;
    if (reading == 0)
      reading = conn_window_reading (sc, receiver);
    /* while TCP holds its window down (a random loss repaired, bbr's
     * PROBE_RTT) the window is no reading of the path: the one from before
     * stands (a window at packet conservation read 0.5 Mbit/s on a path
     * carrying 8, and the estimate fell with it once a second at 3% loss) */
    sample.window_bps += mtcp_held_reading_take (&sc->held_reading, now,
        reading, held_down, MAX (2 * (gint64) info->rtt_us,
            MTCP_DRAIN_SPAN_US)) * 8;
  }
  if (queued_us != G_MAXINT64)
    sample.queued_us = queued_us;
  /* one bbr connection's PROBE_RTT (4 segments for 200 ms and an RTT)
   * left 150-250 kB of an 8 Mbit/s stream waiting, which read as the
   * path's limit and cut the encoder to 5.4 Mbit/s on a 50 Mbit/s path */
  sample.held_down = sess->conns->len > 0 &&
      held_down_conns == sess->conns->len;
  /* padding that waits in the path delays the frames behind it */
  if (mtcp_rate_probe_active (sess->probe, now) &&
      (path->dark || session_probe_queued (sess)))
    mtcp_rate_probe_stop (sess->probe, now, TRUE);
  sample.probing = mtcp_rate_probe_recent (sess->probe, now);
  for (i = 0; i < sess->retiring->len; i++) {
    ServerConn *sc = g_ptr_array_index (sess->retiring, i);
    mtcp_tcp_info_read (mtcp_connection_get_socket (sc->conn), &sc->info);
    sample.bytes_acked += sc->info.bytes_acked;
  }
  if (!mtcp_rate_estimate_update (sess->estimate, now, &sample) || server->estimates->len >= MAX_QUEUED_WARNINGS)
    return;
  st = gst_structure_new ("multitcpsink-estimate",
      "session", G_TYPE_STRING, sess->id_str,
      "estimated-bitrate", G_TYPE_UINT64,
      mtcp_rate_estimate_bps (sess->estimate),
      "path-limited", G_TYPE_BOOLEAN,
      mtcp_rate_estimate_path_limited (sess->estimate),
      "delivered-bitrate", G_TYPE_UINT64,
      mtcp_rate_estimate_delivered_bps (sess->estimate),
      "backlog-time", G_TYPE_UINT64,
      (guint64) mtcp_rate_estimate_waited_us (sess->estimate) * GST_USECOND,
      "stream-bitrate", G_TYPE_UINT64, server->stream_bitrate,
      "n-connections", G_TYPE_UINT, sess->conns->len, NULL);
  /* a calling sink's uplinks, each its share (bonded modems) */
  if (server->config.caller) {
    GValue paths = G_VALUE_INIT;
    server_paths_value (server, &paths);
    gst_structure_take_value (st, "paths", &paths);
  }
  g_ptr_array_add (server->estimates, st);
}

/* server->lock held. What the session's connections could carry now and
 * whether the path is dark, for its repair budget: copies come only from
 * spare capacity, and never go into a path that acknowledges nothing. */
void
server_session_measure_path (MtcpServer * server, ServerSession * sess)
{
  MtcpRepairPath path = { 0, server->stream_bitrate, FALSE };
  guint i, busy = 0, silent = 0;

  for (i = 0; i < sess->conns->len; i++) {
    ServerConn *sc = g_ptr_array_index (sess->conns, i);
    MtcpTcpInfo *info = &sc->info;
    gint64 quiet;

    server_conn_read_info (sc, g_get_monotonic_time ());
    if (info->rtt_us > 0)
      path.capacity_bps += (guint64) info->snd_cwnd * info->snd_mss * 8 *
          G_USEC_PER_SEC / info->rtt_us;
    if (info->unacked == 0)
      continue;
    busy++;
    quiet = MAX (DARK_MIN_US, 2 * (gint64) info->rtt_us +
        4 * (gint64) info->rttvar_us);
    if ((gint64) info->last_ack_recv_ms * 1000 > quiet)
      silent++;
  }
  path.dark = busy > 0 && silent == busy;
  mtcp_repair_budget_set_path (sess->repair, &path);
  /* before the transit: a silence that ended caps the RTT it counts */
  server_session_note_silence (server, sess, g_get_monotonic_time ());
  mtcp_send_queue_session_set_transit (server->queue, sess->qs,
      server_session_transit_us (sess) * GST_USECOND);
  session_estimate (server, sess, &path);
}

/* The I/O thread's timer while a probe runs, no lock held (it takes it):
 * the padding goes out at its rate even when nothing else pumps (a stream
 * of a few frames a second). */
static gboolean
on_probe_timer (gpointer data)
{
  MtcpServer *server = data;
  gint64 now = g_get_monotonic_time ();
  gboolean active = FALSE;
  GList *l;

  g_mutex_lock (&server->lock);
  if (!server->running || server->flushing) {
    server->probe_timer = FALSE;
    g_mutex_unlock (&server->lock);
    return G_SOURCE_REMOVE;     /* stopping */
  }
  for (l = server->sessions; l; l = l->next) {
    ServerSession *sess = l->data;
    if (mtcp_rate_probe_active (sess->probe, now)) {
      active = TRUE;
      server_pump_session (server, sess);
    }
  }
  server->probe_timer = active;
  server_reap (server);
  server_unlock (server);
  return active ? G_SOURCE_CONTINUE : G_SOURCE_REMOVE;
}

void
mtcp_server_probe (MtcpServer * server, guint64 total_bps)
{
  gint64 now = g_get_monotonic_time ();
  gboolean started = FALSE;
  GList *l;
  guint i;

  g_mutex_lock (&server->lock);
  for (l = server->sessions; l; l = l->next) {
    ServerSession *sess = l->data;

    if (total_bps == 0) {
      mtcp_rate_probe_stop (sess->probe, now, TRUE);
      continue;
    }
    /* a path that is the limit, or dark, has no room to show */
    if (sess->conns->len == 0 || mtcp_rate_estimate_bps (sess->estimate) == 0
        || mtcp_rate_estimate_path_limited (sess->estimate) ||
        total_bps <= server->stream_bitrate)
      continue;
    for (i = 0; i < sess->conns->len; i++) {
      ServerConn *sc = g_ptr_array_index (sess->conns, i);
      sc->probe_queue_us = mtcp_tcp_info_queue_us (&sc->info);
    }
    mtcp_rate_probe_start (sess->probe, now, total_bps -
        server->stream_bitrate, MTCP_PROBE_DURATION_US);
    started = TRUE;
  }
  if (started && !server->probe_timer && server->running &&
      !server->flushing) {
    server->probe_timer = TRUE;
    mtcp_io_thread_add_timeout (&server->io, PROBE_TIMER_MS, on_probe_timer,
        server);
  }
  g_mutex_unlock (&server->lock);
}

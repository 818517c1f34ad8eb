/* multitcp
 * Copyright (C) 2026 the multitcp authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

/* The sink transport's `stats`: per session and per connection, and the
 * estimate the bitrate controller reads. */

#include "mtcpserverprivate.h"
#include "mtcptcpinfo.h"

static void
append_structure (GValue * array, GstStructure * s)
{
  GValue v = G_VALUE_INIT;
  g_value_init (&v, GST_TYPE_STRUCTURE);
  g_value_take_boxed (&v, s);
  gst_value_array_append_and_take_value (array, &v);
}

static GstStructure *
conn_stats (ServerConn * sc)
{
  GstStructure *s;

  mtcp_tcp_info_read (mtcp_connection_get_socket (sc->conn), &sc->info);
  s = gst_structure_new ("connection",
      "id", G_TYPE_UINT, sc->id,
      "peer", G_TYPE_STRING, mtcp_connection_get_peer (sc->conn),
      "bytes-sent", G_TYPE_UINT64, mtcp_connection_bytes_sent (sc->conn),
      "frames-sent", G_TYPE_UINT64, mtcp_connection_frames_sent (sc->conn),
      "bytes-received", G_TYPE_UINT64,
      mtcp_connection_bytes_received (sc->conn), "frames-received",
      G_TYPE_UINT64, mtcp_connection_frames_received (sc->conn), "bytes-queued",
      G_TYPE_UINT64, (guint64) mtcp_connection_unsent_bytes (sc->conn),
      "frames-queued", G_TYPE_UINT, mtcp_connection_unsent_frames (sc->conn),
      "rtt", G_TYPE_UINT, sc->info.rtt_us, "rttvar", G_TYPE_UINT,
      sc->info.rttvar_us, "min-rtt", G_TYPE_UINT, sc->info.min_rtt_us, "cwnd",
      G_TYPE_UINT, sc->info.snd_cwnd, "mss", G_TYPE_UINT, sc->info.snd_mss,
      "retransmits", G_TYPE_UINT, sc->info.total_retrans, "lost", G_TYPE_UINT,
      sc->info.lost, "notsent-bytes", G_TYPE_UINT, sc->info.notsent_bytes,
      "delivery-rate", G_TYPE_UINT64, sc->info.delivery_rate * 8,
      "feedback-rtt", G_TYPE_UINT, sc->echo_rtt_us, "congestion-control",
      G_TYPE_STRING, sc->congestion, NULL);
  if (sc->friendly) {
    /* transfer-control=network-friendly: its last round */
    const MtcpFriendlyRound *r = mtcp_friendly_round (sc->friendly);
    gst_structure_set (s, "apwnd", G_TYPE_UINT64, r->apwnd,
        "congestion-level", G_TYPE_DOUBLE, r->cl,
        "buffer-target", G_TYPE_DOUBLE, r->b_tgt,
        "loss-events", G_TYPE_UINT, mtcp_friendly_loss_events (sc->friendly),
        NULL);
  }
  return s;
}

/* how long without FEEDBACK makes an uplink's connections dark */
#define PATH_DARK_US (1500 * G_TIME_SPAN_MILLISECOND)

/* server->lock held. A calling sink's uplinks: each one's connections,
 * bytes and share, RTT, retransmissions and loss, and state ("up": heard
 * lately; "dark": connected, nothing heard for 1.5 s; "dialing"; "down":
 * its dials fail), from the TCP_INFO last read. */
void
server_paths_value (MtcpServer * server, GValue * array)
{
  guint64 sent[MTCP_MAX_UPLINKS], retrans[MTCP_MAX_UPLINKS];
  guint64 rtt_sum[MTCP_MAX_UPLINKS] = { 0, }, total = 0;
  guint conns[MTCP_MAX_UPLINKS] = { 0, }, pending[MTCP_MAX_UPLINKS] = { 0, };
  gint64 heard[MTCP_MAX_UPLINKS] = { 0, }, now = g_get_monotonic_time ();
  guint p;
  GList *l;

  g_value_init (array, GST_TYPE_ARRAY);
  for (p = 0; p < server->n_paths; p++) {
    sent[p] = server->paths[p].closed_sent;
    retrans[p] = server->paths[p].closed_retrans;
  }
  for (l = server->conns; l; l = l->next) {
    ServerConn *sc = l->data;
    sent[sc->path] += mtcp_connection_bytes_sent (sc->conn);
    retrans[sc->path] += sc->info.total_retrans;
    if (sc->session == NULL) {
      pending[sc->path]++;
      continue;
    }
    if (sc->retiring)
      continue;
    conns[sc->path]++;
    rtt_sum[sc->path] += sc->info.rtt_us;
    heard[sc->path] = MAX (heard[sc->path], MAX (sc->feedback_us,
            sc->accepted_us));
  }
  for (p = 0; p < server->n_paths; p++)
    total += sent[p];
  for (p = 0; p < server->n_paths; p++) {
    const ServerPath *path = &server->paths[p];
    guint64 segments = sent[p] / 1448 + retrans[p];
    const gchar *state;

    if (conns[p] > 0)
      state = now - heard[p] <= PATH_DARK_US ? "up" : "dark";
    else if (path->failures > 0)
      state = "down";
    else
      state = "dialing";
    pending[p] += mtcp_connector_dialing (server->connector, p);
    append_structure (array, gst_structure_new ("path",
            "index", G_TYPE_UINT, p,
            "uplink", G_TYPE_STRING,
            mtcp_connector_uplink_name (server->connector, p),
            "state", G_TYPE_STRING, state,
            "n-connections", G_TYPE_UINT, conns[p],
            "connecting", G_TYPE_UINT, pending[p],
            "bytes-sent", G_TYPE_UINT64, sent[p],
            "share", G_TYPE_DOUBLE, total ? (gdouble) sent[p] / total : 0.0,
            "rtt", G_TYPE_UINT, conns[p] ? (guint) (rtt_sum[p] / conns[p]) : 0,
            "retransmits", G_TYPE_UINT64, retrans[p],
            "loss", G_TYPE_DOUBLE,
            segments ? (gdouble) retrans[p] / segments : 0.0,
            "dials", G_TYPE_UINT64, path->dials,
            "dial-failures", G_TYPE_UINT64, path->dial_failures, NULL));
  }
}

gboolean
mtcp_server_get_estimate (MtcpServer * server, gboolean strongest,
    MtcpServerEstimate * estimate, guint64 * skips)
{
  gboolean found = FALSE;
  GList *l;

  *estimate = (MtcpServerEstimate) {
  0};
  g_mutex_lock (&server->lock);
  *skips = server->skips_ended;
  for (l = server->sessions; l; l = l->next) {
    ServerSession *sess = l->data;
    MtcpQueueSessionStats qst;
    guint64 est;

    mtcp_send_queue_session_stats (server->queue, sess->qs, &qst);
    *skips += qst.skips;
    /* a receiver that just joined is not weak, only new */
    if (sess->conns->len == 0 || !mtcp_rate_estimate_known (sess->estimate))
      continue;
    est = mtcp_rate_estimate_bps (sess->estimate);
    if (!found || (strongest ? est > estimate->bps : est < estimate->bps)) {
      estimate->bps = est;
      estimate->path_limited =
          mtcp_rate_estimate_path_limited (sess->estimate);
      estimate->delivered_bps =
          mtcp_rate_estimate_delivered_bps (sess->estimate);
      estimate->waited_us = mtcp_rate_estimate_waited_us (sess->estimate);
      estimate->latency_us = sess->latency_us;
      found = TRUE;
    }
  }
  g_mutex_unlock (&server->lock);
  return found;
}

GstStructure *
mtcp_server_get_stats (MtcpServer * server)
{
  GstStructure *s;
  GValue sessions = G_VALUE_INIT;
  GList *l;
  guint64 bytes_sent = 0, buffers_sent = 0, dropped = 0, written = 0;
  guint64 weakest = G_MAXUINT64;

  g_value_init (&sessions, GST_TYPE_ARRAY);
  g_mutex_lock (&server->lock);
  for (l = server->sessions; l; l = l->next) {
    ServerSession *sess = l->data;
    MtcpQueueSessionStats qst;
    GValue conns = G_VALUE_INIT;
    GstStructure *ss;
    GPtrArray *lists[] = { sess->conns, sess->retiring };
    guint i, k;
    guint64 highest = MTCP_TIME_NONE, buffered = 0, playout = 0;
    guint64 sess_written = sess->closed_written, sess_read = sess->closed_read;

    mtcp_send_queue_session_stats (server->queue, sess->qs, &qst);
    /* the weakest receiver that is there */
    if (sess->conns->len > 0 && mtcp_rate_estimate_known (sess->estimate))
      weakest = MIN (weakest, mtcp_rate_estimate_bps (sess->estimate));
    bytes_sent += qst.bytes_sent;
    buffers_sent += qst.buffers_sent;
    dropped += qst.buffers_dropped;
    g_value_init (&conns, GST_TYPE_ARRAY);
    for (i = 0; i < sess->conns->len; i++) {
      ServerConn *sc = g_ptr_array_index (sess->conns, i);
      append_structure (&conns, conn_stats (sc));
      if (sc->feedback_us) {
        if (highest == MTCP_TIME_NONE ||
            (sc->feedback.highest_in_order != MTCP_TIME_NONE &&
                sc->feedback.highest_in_order > highest))
          highest = sc->feedback.highest_in_order;
        buffered = sc->feedback.buffered_bytes;
        playout = sc->feedback.playout_bytes;
      }
    }
    /* every byte of the session on the wire, retiring and closed
     * connections too: what the protocol costs over the payload */
    for (k = 0; k < G_N_ELEMENTS (lists); k++)
      for (i = 0; i < lists[k]->len; i++) {
        ServerConn *sc = g_ptr_array_index (lists[k], i);
        sess_written += mtcp_connection_bytes_sent (sc->conn);
        sess_read += mtcp_connection_bytes_received (sc->conn);
      }
    written += sess_written;
    ss = gst_structure_new ("session",
        "id", G_TYPE_STRING, sess->id_str,
        "n-connections", G_TYPE_UINT, sess->conns->len,
        "buffers-sent", G_TYPE_UINT64, qst.buffers_sent,
        "bytes-sent", G_TYPE_UINT64, qst.bytes_sent,
        "buffers-dropped", G_TYPE_UINT64, qst.buffers_dropped,
        "bytes-dropped", G_TYPE_UINT64, qst.bytes_dropped,
        "bytes-written", G_TYPE_UINT64, sess_written,
        "bytes-read", G_TYPE_UINT64, sess_read,
        "skips", G_TYPE_UINT64, qst.skips,
        "frames-resent", G_TYPE_UINT64, qst.frames_resent,
        "frames-hedged", G_TYPE_UINT64, sess->frames_hedged,
        "frames-copied", G_TYPE_UINT64, sess->frames_copied,
        "estimated-bitrate", G_TYPE_UINT64,
        mtcp_rate_estimate_bps (sess->estimate),
        "path-limited", G_TYPE_BOOLEAN,
        mtcp_rate_estimate_path_limited (sess->estimate),
        "backlog-time", G_TYPE_UINT64,
        (guint64) mtcp_rate_estimate_waited_us (sess->estimate) * GST_USECOND,
        "late-passed-over", G_TYPE_UINT64, sess->gated,
        "gate-margin-waived", G_TYPE_UINT64, sess->gate_margin_waived,
        "passed-to-sooner", G_TYPE_UINT64, sess->passed_to_sooner,
        "silent-held", G_TYPE_UINT64, sess->held_silent,
        "repair", G_TYPE_STRING,
        mtcp_repair_gate_nick (mtcp_repair_budget_gate (sess->repair)),
        "copies-refused", G_TYPE_UINT64,
        mtcp_repair_budget_refused (sess->repair),
        "bytes-copied", G_TYPE_UINT64, sess->bytes_copied,
        "probes", G_TYPE_UINT64, mtcp_rate_probe_count (sess->probe),
        "probes-stopped-early", G_TYPE_UINT64,
        mtcp_rate_probe_stopped_early (sess->probe),
        "bytes-padding", G_TYPE_UINT64, mtcp_rate_probe_bytes (sess->probe),
        "frames-expired", G_TYPE_UINT64, sess->frames_expired,
        "bytes-kept", G_TYPE_UINT64, (guint64) sess->bytes_kept,
        "state", G_TYPE_STRING, sess->orphaned_us ? "waiting" : "active",
        "queue-buffers", G_TYPE_UINT64, qst.backlog_buffers,
        "queue-bytes", G_TYPE_UINT64, qst.backlog_bytes,
        "queue-time", G_TYPE_UINT64, qst.backlog_time,
        "receiver-highest-seq", G_TYPE_INT64,
        highest == MTCP_TIME_NONE ? (gint64) - 1 : (gint64) highest,
        "receiver-buffered-bytes", G_TYPE_UINT64, buffered,
        "receiver-playout-bytes", G_TYPE_UINT64, playout,
        "transfer-held", G_TYPE_UINT64, sess->transfer_held, NULL);
    gst_structure_take_value (ss, "connections", &conns);
    append_structure (&sessions, ss);
  }
  s = gst_structure_new ("multitcpsink-stats",
      "n-sessions", G_TYPE_UINT, g_list_length (server->sessions),
      "bytes-pushed", G_TYPE_UINT64,
      mtcp_send_queue_get_total_pushed (server->queue),
      "bytes-sent", G_TYPE_UINT64, bytes_sent,
      "bytes-written", G_TYPE_UINT64, written,
      "buffers-sent", G_TYPE_UINT64, buffers_sent,
      "buffers-dropped", G_TYPE_UINT64, dropped,
      "queue-bytes", G_TYPE_UINT64, mtcp_send_queue_get_bytes (server->queue),
      "queue-buffers", G_TYPE_UINT64,
      mtcp_send_queue_get_length (server->queue),
      "stream-bitrate", G_TYPE_UINT64, server->stream_bitrate,
      "playback-bitrate", G_TYPE_UINT64, (guint64) (server->media_rate_Bps * 8),
      "estimated-bitrate", G_TYPE_UINT64,
      weakest == G_MAXUINT64 ? (guint64) 0 : weakest,
      "connections-accepted", G_TYPE_UINT64, server->connections_accepted,
      "protocol-errors", G_TYPE_UINT64, server->protocol_errors,
      "refused", G_TYPE_UINT64, server->refused,
      "pending-handshakes", G_TYPE_UINT, server->pending_handshakes,
      "pending-handshakes-peak", G_TYPE_UINT,
      server->pending_handshakes_peak,
      "connections-rejected", G_TYPE_UINT64, server->connections_rejected,
      "handshakes-timed-out", G_TYPE_UINT64, server->handshakes_timed_out,
      "open-connections", G_TYPE_UINT, server->n_conns,
      "accept-errors", G_TYPE_UINT64, server->accept_errors,
      "mode", G_TYPE_STRING, server->config.caller ? "caller" : "listener",
      "dials", G_TYPE_UINT64, server->dials,
      "outage-probes", G_TYPE_UINT64, server->outage_probes,
      "dial-failures", G_TYPE_UINT, server->dial_failures,
      "scheduler", G_TYPE_STRING,
      mtcp_scheduler_nick (server->config.scheduler), NULL);
  if (server->config.caller) {
    GValue paths = G_VALUE_INIT;
    server_paths_value (server, &paths);
    gst_structure_take_value (s, "paths", &paths);
  }
  g_mutex_unlock (&server->lock);
  gst_structure_take_value (s, "sessions", &sessions);
  return s;
}

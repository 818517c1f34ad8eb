/* multitcp
 * Copyright (C) 2026 the multitcp authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

/* The source's transport (multitcpsrc is a thin element over it): start
 * and stop, the items handed to the element in order (pop), a
 * connection's events and closing, the periodic tick (feedback,
 * liveness, the outage timeout) and the stats. The rest of the receiver's
 * role has files named for it: mtcpclientconnect.c (making connections:
 * dial or accept, TLS, HELLO and the passphrase, WELCOME),
 * mtcpclientframes.c (what a session carries: frames into the reorder
 * buffer with their deadlines, REPORT in, FEEDBACK out),
 * mtcpclientcontrol.c (how many connections and their windows, from the
 * policy in mtcpcontrol.c; outage probes). Their shared types and locking
 * rules: mtcpclientprivate.h. */

#include "mtcpclientprivate.h"
#include "mtcptcpinfo.h"

#include <string.h>

GST_DEBUG_CATEGORY (mtcp_client_debug);
#define GST_CAT_DEFAULT mtcp_client_debug

#define REORDER_WINDOW (1 << 20)
/* buffers the playout buffer keeps apart (beyond, the oldest merge) */
#define PLAYOUT_ENTRIES 8192
/* a restarted sink is found within about a second */
#define MAX_BACKOFF_MS 1000
/* a connection that closes sooner after opening counts as a failed try */
#define LOST_AFTER_US (1 * G_USEC_PER_SEC)
/* FEEDBACK goes out every tick on one connection (the acknowledgement is the
 * session's), and on each at least this often: the sink takes silence on a
 * connection for a dead one (idle-timeout, 3 s by default) */
#define FEEDBACK_KEEPALIVE_US (G_USEC_PER_SEC / 2)
/* how long stopping waits for cancelled TLS handshakes to end */
#define STOP_HANDSHAKES_WAIT_US (500 * G_TIME_SPAN_MILLISECOND)
/* every connection silent: an outage; each waits this long (or
 * idle-timeout if longer) before it is presumed dead */
#define OUTAGE_WAIT_US (10 * G_USEC_PER_SEC)
#define LISTEN_HANDSHAKE_TIMEOUT_US (15 * G_USEC_PER_SEC)
/* the reorder buffer holds at most (latency + margin) of a stream this
 * fast, and no less than MIN_HELD_BYTES or four of the largest frames */
#define MAX_HELD_RATE (G_GUINT64_CONSTANT (1000000000) / 8)     /* bytes/s */
#define MIN_HELD_BYTES (G_GUINT64_CONSTANT (32) << 20)
#define MAX_HELD_BYTES (G_GUINT64_CONSTANT (1) << 30)

static const gchar *
conn_state_name (ConnState state)
{
  switch (state) {
    case CONN_CONNECTING:
      return "connecting";
    case CONN_HANDSHAKE:
      return "handshake";
    case CONN_READY:
      return "ready";
    case CONN_RETIRING:
      return "retiring";
  }
  return "unknown";
}

GstClockTime
mtcp_client_now (void)
{
  return (GstClockTime) g_get_monotonic_time () * GST_USECOND;
}

void
mtcp_item_clear (MtcpItem * item)
{
  gst_clear_buffer (&item->buffer);
  gst_clear_caps (&item->caps);
}

void
client_item_free (MtcpItem * item)
{
  mtcp_item_clear (item);
  g_free (item);
}

/* The reorder buffer's byte cap (see MAX_HELD_RATE). No lock. */
static guint64
held_bytes_cap (const MtcpClientConfig * config, GstClockTime horizon)
{
  guint64 cap;

  cap = gst_util_uint64_scale (horizon, MAX_HELD_RATE, GST_SECOND);
  cap = CLAMP (cap, MIN_HELD_BYTES, MAX_HELD_BYTES);
  return MAX (cap, (guint64) 4 * config->max_frame);
}

MtcpClient *
mtcp_client_new (const MtcpClientConfig * config,
    MtcpClientStatsFunc stats_func, gpointer user_data)
{
  MtcpClient *client = g_new0 (MtcpClient, 1);
  static gsize done = 0;

  if (g_once_init_enter (&done)) {
    GST_DEBUG_CATEGORY_INIT (mtcp_client_debug, "multitcpclient", 0,
        "multitcp source transport");
    GST_DEBUG_CATEGORY_INIT (mtcp_client_frames_debug, "multitcpframes", 0,
        "multitcp source: what a session carries");
    GST_DEBUG_CATEGORY_INIT (mtcp_client_connect_debug, "multitcpconnect", 0,
        "multitcp source: making connections");
    GST_DEBUG_CATEGORY_INIT (mtcp_client_control_debug, "multitcpcount", 0,
        "multitcp source: the connection count and windows applied");
    g_once_init_leave (&done, 1);
  }
  client->config = *config;
  client->config.host = g_strdup (config->host);
  client->config.passphrase = g_strdup (config->passphrase);
  client->config.local_addresses = g_strdup (config->local_addresses);
  client->config.tls_ca_file = g_strdup (config->tls_ca_file);
  client->config.tls_server_name = g_strdup (config->tls_server_name);
  client->config.stream_id = g_strdup (config->stream_id);
  client->stats_func = stats_func;
  client->stats_data = user_data;
  g_mutex_init (&client->lock);
  g_cond_init (&client->cond);
  client->playout = mtcp_playout_new (PLAYOUT_ENTRIES);
  client->reorder = mtcp_reorder_new (REORDER_WINDOW,
      (GDestroyNotify) client_item_free);
  client->callers = mtcp_caller_queue_new ();
  client->time_map = mtcp_time_map_new (config->latency,
      config->drift_correction);
  mtcp_reorder_set_limits (client->reorder, held_bytes_cap (&client->config,
          mtcp_time_map_horizon (client->time_map)),
      mtcp_time_map_horizon (client->time_map));
  client->control = mtcp_control_new (&client->config.control,
      client->config.connections, 1);
  return client;
}

void
mtcp_client_free (MtcpClient * client)
{
  mtcp_client_stop (client);
  mtcp_auth_key_clear (&client->auth_key);
  mtcp_reorder_free (client->reorder);
  mtcp_playout_free (client->playout);
  mtcp_time_map_free (client->time_map);
  mtcp_caller_queue_free (client->callers);
  g_clear_object (&client->sender_address);
  mtcp_control_free (client->control);
  mtcp_connector_free (client->connector);
  g_clear_object (&client->address);
  g_clear_error (&client->error);
  g_free (client->session_str);
  g_free (client->last_failure);
  g_free (client->config.host);
  g_free (client->config.passphrase);
  g_free (client->config.local_addresses);
  g_free (client->config.tls_ca_file);
  g_free (client->config.tls_server_name);
  g_free (client->config.stream_id);
  g_clear_object (&client->tls.database);
  if (client->locals)
    g_ptr_array_unref (client->locals);
  g_mutex_clear (&client->lock);
  g_cond_clear (&client->cond);
  g_free (client);
}

void
mtcp_client_set_caller_func (MtcpClient * client, MtcpCallerFunc func,
    gpointer user_data)
{
  client->caller = func;
  client->caller_data = user_data;
}

void
mtcp_client_set_accept_func (MtcpClient * client, MtcpCallerAcceptFunc func,
    gpointer user_data)
{
  client->accept = func;
  client->accept_data = user_data;
}

/* client->lock held. Told after it (client_unlock). */
void
client_note_caller (MtcpClient * client, MtcpCallerEvent event,
    GSocketAddress * address, const gchar * reason)
{
  if (client->caller)
    mtcp_caller_queue_add (client->callers, event,
        event == MTCP_CALLER_REJECTED ? NULL : client->session_str, address,
        reason, NULL, 0);
}

/* Releases client->lock, then tells the owner what was noted while it was
 * held. Only from the I/O thread: the owner's handlers run there. */
void
client_unlock (MtcpClient * client)
{
  GPtrArray *notes = mtcp_caller_queue_take (client->callers);

  g_mutex_unlock (&client->lock);
  mtcp_caller_notes_tell (notes, client->caller, client->caller_data);
}

const gchar *
mtcp_client_get_session_id (MtcpClient * client)
{
  return client->session_str;
}

void
client_fail (MtcpClient * client, GError * error)
{
  if (client->error == NULL)
    client->error = error;
  else
    g_error_free (error);
  g_cond_broadcast (&client->cond);
}

/* Returns FALSE when the connection was closed. */
static gboolean
handle_frames (MtcpClient * client, ClientConn * cc)
{
  GstClockTime now = mtcp_client_now ();

  for (;;) {
    MtcpFrameHeader hdr;
    const guint8 *body;
    gchar *err = NULL;
    gboolean ok;
    MtcpParseResult r = mtcp_connection_next_frame (cc->conn, &hdr, &body,
        &err);

    if (r == MTCP_PARSE_NEED_MORE)
      return TRUE;
    if (r == MTCP_PARSE_OK) {
      if (cc->state == CONN_HANDSHAKE)
        ok = client_handle_welcome (client, cc, &hdr, body, &err);
      else
        ok = client_handle_data_frame (client, cc, &hdr, body, now, &err);
      if (ok)
        continue;
    }
    if (r != MTCP_PARSE_OK || hdr.type != MTCP_FRAME_REFUSE)
      client->protocol_errors++;        /* a refusal is the sink's answer */
    GST_WARNING ("connection %u (%s): %s", cc->index,
        mtcp_connection_get_peer (cc->conn), err);
    client_close_conn (client, cc, err);
    g_free (err);
    return FALSE;
  }
}

/* A connection could not be opened or joined (@error, or @why): back off
 * (doubling, with jitter, up to MAX_BACKOFF_MS) before the next one; give
 * up after `retry` in a row. Told to the owner (a failed dial). */
void
client_note_failure (MtcpClient * client, const GError * error,
    const gchar * why)
{
  gint64 backoff_ms;

  /* listening, a call that failed is the caller's to try again */
  if (client->connector)
    return;
  client->failures++;
  g_free (client->last_failure);
  client->last_failure = g_strdup (error ? error->message : why);
  if (client->caller)
    mtcp_caller_queue_add (client->callers, MTCP_CALLER_DIAL_FAILED, NULL,
        client->address, error ? error->message : why,
        mtcp_caller_failure_kind (error, why), client->failures);
  if (client->config.retry == 0 || client->failures > client->config.retry) {
    if (!client->gave_up) {
      client->gave_up = TRUE;
      GST_WARNING ("giving up on %s:%u after %u failed attempts",
          client->config.host, client->config.port, client->failures);
    }
    g_cond_broadcast (&client->cond);
    return;
  }
  backoff_ms = MIN (100 << MIN (client->failures - 1, 6), MAX_BACKOFF_MS);
  backoff_ms = backoff_ms * g_random_double_range (0.75, 1.25);
  client->next_open_us = g_get_monotonic_time () + backoff_ms * 1000;
  GST_DEBUG ("failure %u: next connection in %" G_GINT64_FORMAT " ms",
      client->failures, backoff_ms);
}

void
client_close_conn (MtcpClient * client, ClientConn * cc, const gchar * why)
{
  gint64 now = g_get_monotonic_time ();
  gboolean worked =
      now - mtcp_connection_get_created_us (cc->conn) > LOST_AFTER_US;

  GST_INFO ("connection %u (%s, %s) closes: %s", cc->index,
      mtcp_connection_get_peer (cc->conn), conn_state_name (cc->state), why);

  client->conns = g_list_remove (client->conns, cc);
  if (cc->state != CONN_RETIRING && !(cc->probe && cc->state ==
          CONN_CONNECTING))
    client->connections_lost++;
  mtcp_connection_free (cc->conn);
  cc->conn = NULL;
  mtcp_auth_key_clear (&cc->proof_key);
  client->closed = g_list_prepend (client->closed, cc);

  if (cc->state == CONN_RETIRING || !client->running ||
      (cc->probe && cc->state == CONN_CONNECTING)) {
    /* asked for, or a probe into a path still dark */
  } else if (cc->state == CONN_READY && worked) {
    /* a connection that worked for a while is a loss, not a failed try:
     * replace it at once (a dead sink then fails the next try), and the
     * tries before it count no more */
    client->failures = 0;
    client->next_open_us = MIN (client->next_open_us, now);
  } else if (cc->state == CONN_HANDSHAKE && client->session_gone
      && !cc->fresh) {
    /* the sink forgot our session: open a fresh one now */
    client->next_open_us = now;
  } else {
    client_note_failure (client, NULL, why);
  }
  if (client->conns == NULL && client->running) {
    client->all_closed = TRUE;
    client->all_closed_us = now;
    g_cond_broadcast (&client->cond);
  }
}

/* client->lock held. Listening, the sender is gone: the next call starts
 * a new session; without keep-listening the stream ends once what it
 * sent is released (pop). */
static void
sender_left (MtcpClient * client, const gchar * why)
{
  client->senders_left++;
  if (client->caller)
    mtcp_caller_queue_add (client->callers, MTCP_CALLER_REMOVED,
        client->session_str, client->sender_address, why, NULL, 0);
  client->session_gone = TRUE;
  if (!client->config.keep_listening)
    client->sender_left = TRUE;
  GST_INFO ("the sender of session %s left: %s; %s", client->session_str,
      why, client->config.keep_listening ? "listening for the next one" :
      "the stream ends");
  g_cond_broadcast (&client->cond);
}

void
client_reap (MtcpClient * client)
{
  g_list_free_full (client->closed, g_free);
  client->closed = NULL;
}

/* A certificate that was refused stays refused: no retry storm. */
static void
give_up_on_tls_error (MtcpClient * client, const GError * err)
{
  /* listening: a caller's bad certificate closes its call only */
  if (!mtcp_tls_error_is_fatal (err) || client->gave_up || client->connector)
    return;
  client->gave_up = TRUE;
  client_fail (client, g_error_copy (err));
}

gboolean
client_on_conn_event (MtcpConnection * conn, GIOCondition cond,
    gpointer user_data)
{
  ClientConn *cc = mtcp_connection_get_user_data (conn);
  MtcpClient *client = user_data;
  GError *err = NULL;

  g_mutex_lock (&client->lock);
  GST_LOG ("connection %u (%s): events 0x%x", cc->index,
      conn_state_name (cc->state), cond);
  if (cc->state == CONN_CONNECTING) {
    if (!(cond & (G_IO_OUT | G_IO_ERR | G_IO_HUP)))
      goto done;
    if (!g_socket_check_connect_result (mtcp_connection_get_socket (conn),
            &err)) {
      client_close_conn (client, cc, err->message);
      g_clear_error (&err);
      goto done;
    }
    /* a call gone already (a calling sink that stopped; it sends nothing
     * before our HELLO): no TLS on a dead socket, which glib-networking
     * does not take well. A dialed one may still hold what its sink wrote
     * before it closed. */
    if (cc->accepted && (cond & G_IO_HUP)) {
      client_close_conn (client, cc, "closed by the peer before the "
          "handshake");
      goto done;
    }
    cc->state = CONN_HANDSHAKE;
    mtcp_connection_set_tls_orphans (conn, &client->tls_orphans);
    if (client->tls.server_name &&
        !mtcp_connection_start_tls (conn, &client->tls, &err)) {
      client_close_conn (client, cc, err->message);
      g_clear_error (&err);
      goto done;
    }
    /* with TLS, HELLO waits in the queue for the handshake */
    client_send_hello (cc, client, !cc->fresh);
  }
  if (cond & (G_IO_IN | G_IO_HUP | G_IO_ERR)) {
    guint64 before = mtcp_connection_bytes_received (conn);
    MtcpIoResult r = mtcp_connection_receive (conn, &err);

    if (mtcp_connection_bytes_received (conn) > before) {
      gint64 now = g_get_monotonic_time ();

      guint64 got = mtcp_connection_bytes_received (conn) - before;

      client->bytes_received += got;
      if (cc->path < MTCP_MAX_PATHS)
        client->path_bytes[cc->path] += got;
      /* a new run of hearing from the sink after a silence */
      if (now - cc->heard_us > HEARING_GAP_US)
        cc->heard_since_us = now;
      client->last_data_us = cc->heard_us = now;
    }
    if (!handle_frames (client, cc)) {
      g_clear_error (&err);
      goto done;
    }
    if (r == MTCP_IO_CLOSED || r == MTCP_IO_ERROR) {
      give_up_on_tls_error (client, err);
      client_close_conn (client, cc, err ? err->message : "closed by sink");
      g_clear_error (&err);
      goto done;
    }
  }
  {
    MtcpIoResult r = mtcp_connection_flush (conn, &err);
    if (r == MTCP_IO_CLOSED || r == MTCP_IO_ERROR) {
      give_up_on_tls_error (client, err);
      client_close_conn (client, cc, err ? err->message : "write failed");
      g_clear_error (&err);
      goto done;
    }
    mtcp_connection_want_write (conn, r == MTCP_IO_BLOCKED);
  }
done:
  client_reap (client);
  client_unlock (client);
  return TRUE;
}

static GstStructure *
build_stats (MtcpClient * client)
{
  MtcpReorderStats rs;
  GValue conns = G_VALUE_INIT;
  GstStructure *s;
  GList *l;
  guint ready = 0, mss;
  guint64 stream_bitrate = 0;
  MtcpControlSnapshot snap;
  MtcpControlConn *snap_conns;
  gdouble late_fraction;

  mtcp_reorder_get_stats (client->reorder, &rs);
  g_value_init (&conns, GST_TYPE_ARRAY);
  for (l = client->conns; l; l = l->next) {
    ClientConn *cc = l->data;
    GValue v = G_VALUE_INIT;
    GstStructure *cs = gst_structure_new ("connection",
        "index", G_TYPE_UINT, cc->index,
        "id", G_TYPE_UINT, cc->id,
        "state", G_TYPE_STRING, conn_state_name (cc->state),
        "bytes-received", G_TYPE_UINT64,
        mtcp_connection_bytes_received (cc->conn),
        "buffers-received", G_TYPE_UINT64, cc->buffers_received,
        "rtt", G_TYPE_UINT, cc->report.rtt_us,
        "cwnd", G_TYPE_UINT, cc->report.snd_cwnd,
        "mss", G_TYPE_UINT, cc->report.snd_mss,
        "retransmits", G_TYPE_UINT, cc->report.total_retrans,
        "window", G_TYPE_UINT, cc->window_bytes,
        "path", G_TYPE_INT, cc->local >= 0 ? cc->local :
        client->n_paths > 1 ? (gint) cc->path : -1,
        NULL);
    if (cc->state == CONN_READY)
      ready++;
    if (cc->report_us)
      stream_bitrate = cc->report.stream_bitrate;
    g_value_init (&v, GST_TYPE_STRUCTURE);
    g_value_take_boxed (&v, cs);
    gst_value_array_append_and_take_value (&conns, &v);
  }
  snap_conns = client_control_snapshot (client, g_get_monotonic_time (), &snap);
  late_fraction = rs.released + rs.skipped > 0 ?
      (gdouble) rs.skipped / (gdouble) (rs.released + rs.skipped) : 0.0;
  s = gst_structure_new ("multitcpsrc-stats",
      "session-id", G_TYPE_STRING,
      client->session_str ? client->session_str : "",
      "bitrate", G_TYPE_UINT64, client->bitrate,
      "stream-bitrate", G_TYPE_UINT64, stream_bitrate,
      "bytes-received", G_TYPE_UINT64, client->bytes_received,
      "buffers-received", G_TYPE_UINT64, client->buffers_received,
      "buffers-pushed", G_TYPE_UINT64, client->buffers_pushed,
      "playout-bytes", G_TYPE_UINT64, mtcp_playout_bytes (client->playout,
          mtcp_client_now ()) + mtcp_reorder_in_order_bytes (client->reorder),
      "playout-time", G_TYPE_UINT64, mtcp_playout_time (client->playout,
          mtcp_client_now ()),
      "bytes-pushed", G_TYPE_UINT64, client->bytes_pushed,
      "buffers-late", G_TYPE_UINT64, client->late,
      "buffers-skipped", G_TYPE_UINT64, rs.skipped,
      "buffers-sender-dropped", G_TYPE_UINT64, rs.sender_skipped,
      "buffers-duplicate", G_TYPE_UINT64, client->duplicates,
      "bytes-padding", G_TYPE_UINT64, client->padding_bytes,
      "buffers-overflow", G_TYPE_UINT64, rs.overflow,
      "skip-ranges", G_TYPE_UINT, mtcp_reorder_n_ranges (client->reorder),
      "late-fraction", G_TYPE_DOUBLE, late_fraction,
      "skew", G_TYPE_DOUBLE, mtcp_time_map_skew_ppm (client->time_map),
      "skew-valid", G_TYPE_BOOLEAN,
      mtcp_time_map_skew_valid (client->time_map),
      "drift-correction", G_TYPE_INT64,
      mtcp_time_map_correction (client->time_map),
      "reorder-depth", G_TYPE_UINT64, rs.depth,
      "reorder-bytes", G_TYPE_UINT64, rs.bytes,
      "n-connections", G_TYPE_UINT, ready,
      "connections-lost", G_TYPE_UINT64, client->connections_lost,
      "reconnects", G_TYPE_UINT64, client->reconnects,
      "dials-dropped", G_TYPE_UINT64, client->dials_dropped,
      "outage-probes", G_TYPE_UINT64, client->outage_probes,
      "sessions", G_TYPE_UINT64, client->sessions_started,
      "senders-left", G_TYPE_UINT64, client->senders_left,
      "protocol-errors", G_TYPE_UINT64, client->protocol_errors,
      "target-bitrate", G_TYPE_UINT64,
      mtcp_control_target_bitrate (client->control),
      "measured-bitrate", G_TYPE_UINT64,
      mtcp_control_measured_bitrate (client->control),
      "wanted-connections", G_TYPE_UINT, client->wanted,
      "rtt", G_TYPE_UINT, (guint) (mtcp_control_mean_rtt (&snap, &mss) * 1e6),
      "window-sum", G_TYPE_UINT, mtcp_control_window_sum (client->control),
      "window-decision", G_TYPE_STRING,
      mtcp_control_window_reason (client->control),
      "connection-decision", G_TYPE_STRING,
      mtcp_control_count_reason (client->control), NULL);
  g_free (snap_conns);
  if (client->n_paths > 1) {
    GValue paths = G_VALUE_INIT;
    guint64 total = 0;
    guint p, n = MIN (client->n_paths, MTCP_MAX_PATHS);

    g_value_init (&paths, GST_TYPE_ARRAY);
    for (p = 0; p < n; p++)
      total += client->path_bytes[p];
    for (p = 0; p < n; p++) {
      GValue v = G_VALUE_INIT;
      guint count = 0;
      for (l = client->conns; l; l = l->next)
        count += ((ClientConn *) l->data)->path == p &&
            ((ClientConn *) l->data)->state == CONN_READY;
      g_value_init (&v, GST_TYPE_STRUCTURE);
      g_value_take_boxed (&v, gst_structure_new ("path",
              "index", G_TYPE_UINT, p,
              "n-connections", G_TYPE_UINT, count,
              "wanted-connections", G_TYPE_UINT, client->path_want[p],
              "bytes-received", G_TYPE_UINT64, client->path_bytes[p],
              "share", G_TYPE_DOUBLE, total ?
              (gdouble) client->path_bytes[p] / total : 0.0,
              "bitrate", G_TYPE_UINT64, (guint64) (client->path_rate[p] * 8),
              NULL));
      gst_value_array_append_and_take_value (&paths, &v);
    }
    gst_structure_take_value (s, "paths", &paths);
  }
  gst_structure_take_value (s, "connections", &conns);
  return s;
}

/* client->lock held. A connection silent for idle-timeout is dead when the
 * sink has been heard on another for idle-timeout meanwhile (a half-open
 * one). Every connection silent at once is an outage of the path (no
 * coverage): TCP carries on when it returns, where closing and
 * reconnecting would storm a dead path, so they wait up to OUTAGE_WAIT_US
 * (and `timeout` for the whole session); after it, each has idle-timeout
 * from the first one heard again to come back (its retransmission timer
 * backed off during the outage). */
static gboolean
conn_presumed_dead (MtcpClient * client, ClientConn * cc, gint64 now)
{
  gint64 idle = (gint64) client->config.idle_timeout_ms * 1000;
  gint64 silent = client_conn_silence (cc, now);
  GList *l;

  if (silent <= idle)
    return FALSE;
  if (silent > MAX (idle, OUTAGE_WAIT_US))
    return TRUE;
  for (l = client->conns; l; l = l->next) {
    ClientConn *other = l->data;
    if (other != cc && other->state == CONN_READY &&
        client_conn_silence (other, now) <= idle / 2 &&
        now - other->heard_since_us >= idle)
      return TRUE;
  }
  return FALSE;
}

static gboolean
on_tick (gpointer data)
{
  MtcpClient *client = data;
  gint64 now = g_get_monotonic_time ();
  GList *l, *next;
  GstStructure *stats = NULL;
  ClientConn *carrier;

  if (!client->running)
    return G_SOURCE_REMOVE;     /* stopping */
  g_mutex_lock (&client->lock);
  carrier = client_feedback_carrier (client);
  for (l = client->conns; l; l = next) {
    ClientConn *cc = l->data;
    GError *err = NULL;
    MtcpIoResult r;

    next = l->next;
    if (cc->state != CONN_READY) {
      /* listening: a caller that does not finish its handshake */
      if (cc->accepted && cc->state != CONN_RETIRING &&
          now - mtcp_connection_get_created_us (cc->conn) >
          LISTEN_HANDSHAKE_TIMEOUT_US)
        client_close_conn (client, cc,
            "the caller did not finish its " "handshake");
      continue;
    }
    /* the sink sends REPORT every 400 ms at least: silence means a
     * half-open one */
    if (client->config.idle_timeout_ms > 0 &&
        conn_presumed_dead (client, cc, now)) {
      client_close_conn (client, cc, "nothing from the sink: connection "
          "presumed dead");
      continue;
    }
    if (cc == carrier || now - cc->feedback_us >= FEEDBACK_KEEPALIVE_US) {
      client_send_feedback (client, cc, now);
      cc->feedback_us = now;
    }
    r = mtcp_connection_flush (cc->conn, &err);
    if (r == MTCP_IO_CLOSED || r == MTCP_IO_ERROR) {
      client_close_conn (client, cc, err ? err->message : "write failed");
      g_clear_error (&err);
      continue;
    }
    mtcp_connection_want_write (cc->conn, r == MTCP_IO_BLOCKED);
  }
  if (now - client->rate_since_us >= G_USEC_PER_SEC) {
    client->bitrate = (client->bytes_received - client->rate_bytes_mark) * 8 *
        G_USEC_PER_SEC / (now - client->rate_since_us);
    client->rate_bytes_mark = client->bytes_received;
    client->rate_since_us = now;
  }
  client_measure_paths (client, now);
  client_controller_tick (client, now);
  client_probe_dark_path (client, now);
  client_keep_connection_count (client, now);
  if (client->connector && client->all_closed && client->session_str &&
      !client->session_gone && client->config.timeout_s > 0 &&
      now - client->all_closed_us >
      (gint64) client->config.timeout_s * G_USEC_PER_SEC)
    sender_left (client, "no call from it for the timeout");
  if (client->config.timeout_s > 0 && client->last_data_us > 0 &&
      client_count_conns (client, TRUE) > 0 &&
      now - client->last_data_us >
      (gint64) client->config.timeout_s * G_USEC_PER_SEC) {
    client_fail (client, g_error_new (G_IO_ERROR, G_IO_ERROR_TIMED_OUT,
            "no data from %s:%u for %u s", client->config.host,
            client->config.port, client->config.timeout_s));
  }
  if (client->stats_func && client->config.stats_interval_ms > 0 &&
      now - client->stats_posted_us >=
      (gint64) client->config.stats_interval_ms * 1000) {
    client->stats_posted_us = now;
    stats = build_stats (client);
  }
  client_reap (client);
  client_unlock (client);
  if (stats)
    client->stats_func (stats, client->stats_data);
  return G_SOURCE_CONTINUE;
}

/* The I/O thread's timers, then the thread, after @first (a dialed
 * connection, already joined) or the listener was put on its context. */
void
client_start_io (MtcpClient * client)
{
  /* a controller may not choose fewer than one connection per local
   * address, or a path would go unused (ParS's model, MULTFRC and Alg. 2
   * all see the paths as one) */
  mtcp_control_free (client->control);
  client->control = mtcp_control_new (&client->config.control,
      client->config.connections, client->locals ? client->locals->len : 1);
  mtcp_io_thread_add_timeout (&client->io,
      MAX (client->config.feedback_interval_ms, 10), on_tick, client);
  g_main_context_invoke (client->io.context, client_open_more_connections,
      client);
  client->running = TRUE;
  client->flushing = FALSE;
  mtcp_io_thread_start (&client->io, "multitcpsrc-io");
}

guint
mtcp_client_get_port (MtcpClient * client)
{
  return client->connector ? mtcp_connector_get_port (client->connector) :
      client->config.port;
}

gboolean
mtcp_client_start (MtcpClient * client, GCancellable * cancellable,
    GError ** error)
{
  ClientConn *first;

  if (client->config.listener)
    return client_start_listening (client, error);

  client->address = mtcp_resolve_address (client->config.host,
      client->config.port, cancellable, error);
  if (client->address == NULL || !client_parse_local_addresses (client, error)
      || !client_setup_tls (client, error))
    return FALSE;
  {
    gboolean had_key = client->auth_key.valid;
    GError *err = NULL;

    first = client_connect_first (client, cancellable, &err);
    /* deriving the key took longer than the sink's handshake timeout (a
     * slow CPU): it is kept for the sink's salt, so the next try is quick */
    if (first == NULL && !had_key && client->auth_key.valid &&
        !g_error_matches (err, G_IO_ERROR, G_IO_ERROR_PERMISSION_DENIED) &&
        !g_error_matches (err, G_IO_ERROR, G_IO_ERROR_CONNECTION_REFUSED) &&
        !g_error_matches (err, G_IO_ERROR, G_IO_ERROR_CANCELLED)) {
      GST_INFO ("the first connection failed after the key derivation (%s): "
          "once more with the key", err->message);
      g_clear_error (&err);
      first = client_connect_first (client, cancellable, &err);
    }
    if (first == NULL) {
      g_propagate_error (error, err);
      return FALSE;
    }
  }

  mtcp_io_thread_init (&client->io);
  client->rate_since_us = client->last_data_us = g_get_monotonic_time ();
  mtcp_connection_attach (first->conn, client->io.context, client_on_conn_event,
      client);
  /* TLS may hold frames that came with WELCOME */
  if (mtcp_connection_is_tls (first->conn))
    mtcp_connection_poke_input (first->conn);
  client_start_io (client);
  return TRUE;
}

void
mtcp_client_stop (MtcpClient * client)
{
  if (!client->running)
    return;
  g_mutex_lock (&client->lock);
  client->running = FALSE;
  client->flushing = TRUE;
  g_cond_broadcast (&client->cond);
  g_mutex_unlock (&client->lock);

  mtcp_io_thread_stop (&client->io);
  if (client->connector)
    mtcp_connector_stop (client->connector);
  /* the I/O thread is gone; stats may still be read from another thread */
  g_mutex_lock (&client->lock);
  while (client->conns)
    client_close_conn (client, client->conns->data, "source stopping");
  client_reap (client);
  g_mutex_unlock (&client->lock);
  /* TLS handshakes cancelled above end in the I/O context: run it until
   * they did (our sources, seeing running FALSE, only remove themselves) */
  mtcp_connection_wait_orphaned_handshakes (client->io.context,
      &client->tls_orphans, STOP_HANDSHAKES_WAIT_US);
  mtcp_io_thread_clear (&client->io);
}

void
mtcp_client_set_flushing (MtcpClient * client, gboolean flushing)
{
  g_mutex_lock (&client->lock);
  client->flushing = flushing;
  /* what went downstream is flushed there too */
  if (flushing)
    mtcp_playout_clear (client->playout);
  g_cond_broadcast (&client->cond);
  g_mutex_unlock (&client->lock);
}

MtcpPopResult
mtcp_client_pop (MtcpClient * client, MtcpItem * out, GError ** error)
{
  MtcpPopResult result;

  g_mutex_lock (&client->lock);
  for (;;) {
    GstClockTime wake_at = GST_CLOCK_TIME_NONE;
    GstClockTime now = mtcp_client_now ();
    gboolean discont = FALSE;
    guint64 seq;
    MtcpItem *item;

    if (client->flushing) {
      result = MTCP_POP_FLUSHING;
      break;
    }
    /* once nothing more can arrive, every gap is final */
    item = mtcp_reorder_pop (client->reorder, (client->gave_up &&
            client->all_closed) || client->sender_left ? G_MAXUINT64 - 1 :
        now, &seq, &discont, &wake_at);
    if (item && item->kind == MTCP_ITEM_EOS && client->connector &&
        client->config.keep_listening) {
      /* the stream goes on with the next sender */
      client_item_free (item);
      sender_left (client, "its stream ended (EOS)");
      continue;
    }
    if (item) {
      *out = *item;
      out->discont = discont || client->reset_discont;
      client->reset_discont = FALSE;
      g_free (item);
      if (out->kind == MTCP_ITEM_BUFFER) {
        client->buffers_pushed++;
        client->bytes_pushed += gst_buffer_get_size (out->buffer);
        /* rendered at its time plus the latency: the playout buffer
         * counts it until then */
        if (GST_BUFFER_PTS_IS_VALID (out->buffer))
          mtcp_playout_push (client->playout, GST_BUFFER_PTS (out->buffer) +
              client->config.latency, gst_buffer_get_size (out->buffer));
      }
      result = MTCP_POP_OK;
      break;
    }
    if (client->error) {
      g_propagate_error (error, client->error);
      client->error = NULL;
      result = MTCP_POP_ERROR;
      break;
    }
    if (client->sender_left) {
      /* everything it sent is out: the stream ends here */
      memset (out, 0, sizeof (*out));
      out->kind = MTCP_ITEM_EOS;
      result = MTCP_POP_OK;
      break;
    }
    if (client->all_closed && client->gave_up) {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_CONNECTION_CLOSED,
          "all connections to %s:%u closed, %u attempts to reconnect failed "
          "(the last: %s)", client->config.host, client->config.port,
          client->failures, client->last_failure ? client->last_failure :
          "no reason given");
      result = MTCP_POP_ERROR;
      break;
    }
    if (GST_CLOCK_TIME_IS_VALID (wake_at)) {
      gint64 until = g_get_monotonic_time () +
          (gint64) ((wake_at > now ? wake_at - now : 0) / GST_USECOND);
      g_cond_wait_until (&client->cond, &client->lock, until);
    } else {
      g_cond_wait_until (&client->cond, &client->lock,
          g_get_monotonic_time () + 200 * G_TIME_SPAN_MILLISECOND);
    }
  }
  g_mutex_unlock (&client->lock);
  return result;
}

GstStructure *
mtcp_client_get_stats (MtcpClient * client)
{
  GstStructure *s;

  g_mutex_lock (&client->lock);
  s = build_stats (client);
  g_mutex_unlock (&client->lock);
  return s;
}

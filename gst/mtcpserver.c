/* multitcp
 * Copyright (C) 2026 the multitcp authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

/* The sink's transport (multitcpsink is a thin element over it): start and
 * stop, the producer's side, what a session's connections read (FEEDBACK,
 * RETIRE, WANT), closing and freeing, and the periodic tick. The rest of
 * the sender's role has files named for it: mtcpserveradmission.c (who
 * gets into a session), mtcpserverschedule.c (which connection sends the
 * next frame), mtcpserverrepair.c (copies and hedges of stuck frames),
 * mtcpserverpath.c (what a session's path carries now), mtcpserverdial.c
 * (calling a listening receiver), mtcpserverstats.c. Their shared types
 * and locking rules: mtcpserverprivate.h. */

#include "mtcpserverprivate.h"
#include "mtcptcpinfo.h"
#include "mtcpauth.h"
#include "mtcpconnector.h"

GST_DEBUG_CATEGORY (mtcp_server_debug);
#define GST_CAT_DEFAULT mtcp_server_debug

/* how often the sink looks for frames about to miss the receiver's
 * deadline (mtcpserverrepair.c) */
#define DEADLINE_WATCH_MS 10
/* connections a transfer control held back get their next round this
 * often at least */
#define TRANSFER_TIMER_MS 5
/* a silence longer than this starts a new run of hearing from the peer */
#define HEARING_GAP_US (G_USEC_PER_SEC)
/* how long stopping waits for cancelled TLS handshakes to end */
#define STOP_HANDSHAKES_WAIT_US (500 * G_TIME_SPAN_MILLISECOND)
/* a retired connection that writes nothing this long (or idle-timeout if
 * longer) is closed, what it holds handed over */
#define RETIRE_STALL_MIN_MS 3000
/* what a session keeps unacknowledged when max-session-bytes is 0 */
#define MAX_KEPT_BYTES_DEFAULT (32 * 1024 * 1024)

MtcpServer *
mtcp_server_new (const MtcpServerConfig * config,
    MtcpServerWarningFunc warning, gpointer user_data)
{
  MtcpServer *server = g_new0 (MtcpServer, 1);
  static gsize done = 0;

  server->refcount = 1;
  server->warnings = g_ptr_array_new_with_free_func (g_free);
  server->estimates = g_ptr_array_new_with_free_func ((GDestroyNotify)
      gst_structure_free);
  server->callers = mtcp_caller_queue_new ();

  if (g_once_init_enter (&done)) {
    GST_DEBUG_CATEGORY_INIT (mtcp_server_debug, "multitcpserver", 0,
        "multitcp sink transport");
    GST_DEBUG_CATEGORY_INIT (mtcp_server_admission_debug,
        "multitcpadmission", 0, "multitcp sink: who gets into a session");
    GST_DEBUG_CATEGORY_INIT (mtcp_server_schedule_debug, "multitcpschedule",
        0, "multitcp sink: which connection sends the next frame");
    GST_DEBUG_CATEGORY_INIT (mtcp_server_repair_debug, "multitcpcopies", 0,
        "multitcp sink: copies and hedges of stuck frames");
    GST_DEBUG_CATEGORY_INIT (mtcp_server_path_debug, "multitcppath", 0,
        "multitcp sink: what a session's path carries");
    GST_DEBUG_CATEGORY_INIT (mtcp_server_dial_debug, "multitcpdial", 0,
        "multitcp sink: dialing the receiver");
    GST_DEBUG_CATEGORY_INIT (mtcp_server_transfer_debug, "multitcptransfer",
        0, "multitcp sink: pacing a stored video's transfer");
    g_once_init_leave (&done, 1);
  }
  server->config = *config;
  server->media_pts0 = GST_CLOCK_TIME_NONE;
  server->config.host = g_strdup (config->host);
  server->config.congestion_control = g_strdup (config->congestion_control);
  server->config.passphrase = g_strdup (config->passphrase);
  server->config.stream_id = g_strdup (config->stream_id);
  server->config.local_addresses = g_strdup (config->local_addresses);
  server->config.interfaces = g_strdup (config->interfaces);
  server->n_paths = 1;
  if (config->tls_certificate)
    g_object_ref (config->tls_certificate);
  server->warning = warning;
  server->warning_data = user_data;
  g_mutex_init (&server->lock);
  g_cond_init (&server->cond);
  server->queue = mtcp_send_queue_new (&config->limits);
  return server;
}

void
mtcp_server_set_caller_func (MtcpServer * server, MtcpCallerFunc func,
    gpointer user_data)
{
  server->caller = func;
  server->caller_data = user_data;
}

void
mtcp_server_set_accept_func (MtcpServer * server, MtcpCallerAcceptFunc func,
    gpointer user_data)
{
  server->accept = func;
  server->accept_data = user_data;
}

/* server->lock held. Told after the lock (server_unlock). */
void
server_note_caller_full (MtcpServer * server, MtcpCallerEvent event,
    const gchar * session_id, GSocketAddress * address, const gchar * reason,
    const gchar * kind, guint attempt)
{
  if (server->caller)
    mtcp_caller_queue_add (server->callers, event, session_id, address,
        reason, kind, attempt);
}

/* server->lock held. */
void
server_note_caller (MtcpServer * server, MtcpCallerEvent event,
    const gchar * session_id, GSocketAddress * address, const gchar * reason)
{
  server_note_caller_full (server, event, session_id, address, reason, NULL, 0);
}

void
mtcp_server_set_estimate_func (MtcpServer * server,
    MtcpServerEstimateFunc func, gpointer user_data)
{
  server->estimate = func;
  server->estimate_data = user_data;
}

void
mtcp_server_set_tick_func (MtcpServer * server, MtcpServerTickFunc func,
    gpointer user_data)
{
  server->tick = func;
  server->tick_data = user_data;
}

MtcpServer *
mtcp_server_ref (MtcpServer * server)
{
  g_atomic_int_inc (&server->refcount);
  return server;
}

void
mtcp_server_unref (MtcpServer * server)
{
  if (!g_atomic_int_dec_and_test (&server->refcount))
    return;
  mtcp_server_stop (server);
  mtcp_send_queue_free (server->queue);
  g_ptr_array_unref (server->warnings);
  g_ptr_array_unref (server->estimates);
  mtcp_caller_queue_free (server->callers);
  mtcp_auth_key_clear (&server->auth_key);
  g_mutex_clear (&server->lock);
  g_cond_clear (&server->cond);
  mtcp_connector_free (server->connector);
  g_free (server->gave_up_reason);
  g_free (server->config.host);
  g_free (server->config.congestion_control);
  g_free (server->config.passphrase);
  g_free (server->config.stream_id);
  g_free (server->config.local_addresses);
  g_free (server->config.interfaces);
  g_clear_object (&server->config.tls_certificate);
  g_free (server);
}

/* server->lock held. The warning reaches the owner once the lock is
 * released (server_unlock): its handler may post on a bus whose sync
 * handler reads our stats, which takes the lock. */
void
server_warn (MtcpServer * server, const gchar * format, ...)
{
  va_list args;
  gchar *msg;

  va_start (args, format);
  msg = g_strdup_vprintf (format, args);
  va_end (args);
  GST_WARNING ("%s", msg);
  if (server->warnings->len < MAX_QUEUED_WARNINGS)
    g_ptr_array_add (server->warnings, msg);
  else {
    server->warnings_dropped++;
    g_free (msg);
  }
}

/* Releases server->lock, then passes on the warnings said while it was
 * held. Only from the I/O thread: the owner's handler runs there. */
void
server_unlock (MtcpServer * server)
{
  GPtrArray *warnings = NULL, *estimates = NULL, *callers = NULL;
  guint i;

  if (server->warnings->len > 0) {
    warnings = server->warnings;
    server->warnings = g_ptr_array_new_with_free_func (g_free);
  }
  if (server->estimates->len > 0) {
    estimates = server->estimates;
    server->estimates = g_ptr_array_new_with_free_func ((GDestroyNotify)
        gst_structure_free);
  }
  callers = mtcp_caller_queue_take (server->callers);
  g_mutex_unlock (&server->lock);
  mtcp_caller_notes_tell (callers, server->caller, server->caller_data);
  if (warnings) {
    for (i = 0; i < warnings->len && server->warning; i++)
      server->warning (g_ptr_array_index (warnings, i), server->warning_data);
    g_ptr_array_unref (warnings);
  }
  if (estimates) {
    /* the handler takes each one */
    g_ptr_array_set_free_func (estimates, NULL);
    for (i = 0; i < estimates->len; i++) {
      GstStructure *st = g_ptr_array_index (estimates, i);
      if (server->estimate)
        server->estimate (st, server->estimate_data);
      else
        gst_structure_free (st);
    }
    g_ptr_array_unref (estimates);
  }
}

/* Closes at once, frees later: callers up the stack may still hold @sc or
 * its session, so both are only marked here and freed by server_reap (). */
void
server_close_conn (MtcpServer * server, ServerConn * sc, const gchar * why)
{
  ServerSession *sess = sc->session;
  guint64 unsent = mtcp_connection_unsent_bytes (sc->conn);

  GST_INFO ("connection %u (%s) of session %s closes: %s (%" G_GUINT64_FORMAT
      " bytes unsent)", sc->id, mtcp_connection_get_peer (sc->conn),
      sess ? sess->id_str : "none", why, unsent);
  server->conns = g_list_remove (server->conns, sc);
  server->n_conns--;
  /* dialed, and the receiver never took it (no FEEDBACK): it is not
   * there yet, or not ours (its stream id, its passphrase) */
  if (server->config.caller && (sc->pending || sc->feedback_us == 0) &&
      server->running && !server->flushing)
    server_note_dial_failure (server, sc->path, NULL, why);
  if (sc->pending) {
    sc->pending = FALSE;
    server->pending_handshakes--;
  }
  /* a retired connection that wrote everything closes with a FIN: what it
   * sent still arrives */
  if (sess && !(sc->retiring && mtcp_connection_is_idle (sc->conn))) {
    /* what it held and the receiver has not acknowledged goes out again on
     * the others: the receiver drops duplicates by sequence number */
    GList *frames = mtcp_connection_take_unacked (sc->conn), *l, *keep = NULL;
    gint64 now = g_get_monotonic_time ();
    for (l = frames; l; l = l->next) {
      MtcpOutFrame *f = l->data;
      if (sess->acked != MTCP_TIME_NONE && f->seq <= sess->acked &&
          f->type != MTCP_FRAME_SKIP)
        mtcp_out_frame_free (f);
      else if (f->type == MTCP_FRAME_BUFFER && f->due_us != 0 &&
          sess->latency_us > 0 && f->due_us + sess->latency_us <= now)
        mtcp_out_frame_free (f);        /* it could only arrive late */
      else
        keep = g_list_prepend (keep, f);
    }
    g_list_free (frames);
    if (keep) {
      GST_INFO ("session %s: %u unacknowledged frames of connection %u go "
          "out again", sess->id_str, g_list_length (keep), sc->id);
      mtcp_send_queue_requeue (server->queue, sess->qs, g_list_reverse (keep));
      sess->requeued = TRUE;
    }
  }
  if (sess) {
    sess->closed_acked += sc->info.bytes_acked;
    server->paths[sc->path].closed_sent +=
        mtcp_connection_bytes_sent (sc->conn);
    server->paths[sc->path].closed_retrans += sc->info.total_retrans;
    sess->closed_written += mtcp_connection_bytes_sent (sc->conn);
    sess->closed_read += mtcp_connection_bytes_received (sc->conn);
  }
  mtcp_connection_free (sc->conn);
  sc->conn = NULL;
  sc->session = NULL;
  if (sess) {
    if (!g_ptr_array_remove (sess->conns, sc))
      g_ptr_array_remove (sess->retiring, sc);
    if (sess->conns->len == 0 && sess->retiring->len == 0) {
      if (server->running && !server->flushing &&
          server->config.session_timeout_ms > 0) {
        /* an outage: the receiver may come back and resume where it was */
        sess->orphaned_us = g_get_monotonic_time ();
        GST_INFO ("session %s has no connection left: kept for %u ms",
            sess->id_str, server->config.session_timeout_ms);
      } else {
        sess->ended = TRUE;
      }
    }
  }
  server->closed = g_list_prepend (server->closed, sc);
  g_cond_broadcast (&server->cond);
}

void
server_reap (MtcpServer * server)
{
  GList *l, *next;

  for (l = server->sessions; l; l = l->next) {
    ServerSession *sess = l->data;
    if (sess->requeued && !sess->ended && sess->conns->len > 0) {
      sess->requeued = FALSE;
      server_pump_session (server, sess);
    }
  }
  while (server->closed) {
    ServerConn *sc = server->closed->data;
    server->closed = g_list_delete_link (server->closed, server->closed);
    g_free (sc->congestion);
    mtcp_friendly_free (sc->friendly);
    g_free (sc);
  }
  for (l = server->sessions; l; l = next) {
    ServerSession *sess = l->data;
    next = l->next;
    if (sess->ended)
      server_session_free (server, sess);
  }
}

/* server->lock held. Returns FALSE if @sc was closed: a hedge writes to
 * the session's connections, @sc among them, and a write can fail. */
static gboolean
handle_feedback (MtcpServer * server, ServerConn * sc, const guint8 * body,
    gsize size)
{
  gchar *err = NULL;
  MtcpFeedback fb;
  guint64 next_seq;
  gboolean advanced;

  if (!mtcp_parse_feedback (body, size, &fb, &err)) {
    server_warn (server, "bad feedback from %s: %s",
        mtcp_connection_get_peer (sc->conn), err);
    g_free (err);
    return TRUE;
  }
  /* a receiver cannot have what was never handed out */
  next_seq = mtcp_send_queue_session_next_seq (server->queue, sc->session->qs);
  if (fb.highest_in_order != MTCP_TIME_NONE
      && fb.highest_in_order >= next_seq) {
    GST_DEBUG ("connection %u claims seq %" G_GUINT64_FORMAT ", only %"
        G_GUINT64_FORMAT " were handed out", sc->id, fb.highest_in_order,
        next_seq);
    fb.highest_in_order = next_seq == 0 ? MTCP_TIME_NONE : next_seq - 1;
  }
  sc->feedback = fb;
  {
    gint64 now = g_get_monotonic_time ();
    /* a new run of hearing from the receiver after a silence */
    /* a receiver that sends FEEDBACK took the call */
    if (sc->feedback_us == 0)
      server_note_dial_success (server, sc->path);
    if (now - sc->feedback_us > HEARING_GAP_US)
      sc->heard_since_us = now;
    sc->feedback_us = now;
    if (sc->session)
      server_transfer_note_feedback (server, sc->session, &fb, now);
  }
  GST_LOG ("connection %u: receiver has everything to %" G_GINT64_FORMAT
      ", %" G_GUINT64_FORMAT " bytes held", sc->id,
      (gint64) fb.highest_in_order, fb.buffered_bytes);
  advanced = fb.highest_in_order != MTCP_TIME_NONE &&
      (sc->session->acked == MTCP_TIME_NONE ||
      fb.highest_in_order > sc->session->acked);
  if (advanced) {
    ServerSession *sess = sc->session;
    guint i;
    sess->acked = fb.highest_in_order;
    sess->acked_us = sc->feedback_us;
    /* the receiver has these: no connection needs to keep them */
    for (i = 0; i < sess->conns->len; i++)
      mtcp_connection_ack (((ServerConn *) g_ptr_array_index (sess->conns,
                  i))->conn, sess->acked);
    for (i = 0; i < sess->retiring->len; i++)
      mtcp_connection_ack (((ServerConn *) g_ptr_array_index (sess->retiring,
                  i))->conn, sess->acked);
    g_cond_broadcast (&server->cond);
  }
  if (fb.echo_sink_time_us > 0 && fb.echo_sink_time_us < G_MAXINT64 / 2 &&
      fb.echo_delay_us < G_MAXINT64 / 2 && (guint64) sc->feedback_us >
      fb.echo_sink_time_us + fb.echo_delay_us)
    sc->echo_rtt_us = MIN (sc->feedback_us - fb.echo_sink_time_us -
        fb.echo_delay_us, G_MAXUINT32);
  if (!advanced)
    server_hedge_stuck_frame (server, sc->session, &fb, sc->feedback_us);
  return sc->conn != NULL;
}

/* The receiver wants one connection fewer: no new frames for it, and it
 * closes once what it holds is written, so nothing is lost. Returns FALSE
 * if it was closed at once. */
static gboolean
retire_conn (MtcpServer * server, ServerConn * sc)
{
  ServerSession *sess = sc->session;
  MtcpIoResult r;

  if (sc->retiring)
    return TRUE;
  /* retired connections are outside the session's limit: as many again
   * at most, the oldest handing over what it holds */
  if (sess->retiring->len >= server->config.max_connections)
    server_close_conn (server, g_ptr_array_index (sess->retiring, 0),
        "too many retired connections in the session");
  sc->retiring = TRUE;
  sc->retiring_sent = mtcp_connection_bytes_sent (sc->conn);
  sc->retiring_progress_us = g_get_monotonic_time ();
  g_ptr_array_remove (sess->conns, sc);
  g_ptr_array_add (sess->retiring, sc);
  GST_INFO ("connection %u of session %s retires (%" G_GSIZE_FORMAT
      " bytes to send first, %u connections left)", sc->id, sess->id_str,
      mtcp_connection_unsent_bytes (sc->conn), sess->conns->len);
  if (!server_conn_flush (server, sc, &r))
    return FALSE;
  if (r == MTCP_IO_DONE) {
    server_close_conn (server, sc, "retired by the receiver");
    return FALSE;
  }
  return TRUE;
}

/* Returns FALSE if the connection was closed. */
static gboolean
handle_frames (MtcpServer * server, ServerConn * sc)
{
  for (;;) {
    MtcpFrameHeader hdr;
    const guint8 *body;
    gchar *err = NULL;
    MtcpParseResult r = mtcp_connection_next_frame (sc->conn, &hdr, &body,
        &err);

    if (r == MTCP_PARSE_NEED_MORE)
      return TRUE;
    if (r == MTCP_PARSE_ERROR) {
      server->protocol_errors++;
      server_warn (server, "protocol error from %s: %s",
          mtcp_connection_get_peer (sc->conn), err);
      server_close_conn (server, sc, err);
      g_free (err);
      return FALSE;
    }
    GST_LOG ("%s frame (%u bytes) on connection %u from %s",
        mtcp_frame_type_name (hdr.type), hdr.length, sc->id,
        mtcp_connection_get_peer (sc->conn));
    if (sc->session == NULL) {
      gboolean ok;
      if (sc->challenged && hdr.type == MTCP_FRAME_AUTH) {
        ok = server_handle_auth (server, sc, body, hdr.length);
      } else if (!sc->challenged && hdr.type == MTCP_FRAME_HELLO) {
        ok = server_handle_hello (server, sc, body, hdr.length);
      } else {
        server->protocol_errors++;
        server_refuse (server, sc, MTCP_REFUSE_PROTOCOL, sc->challenged ?
            "expected AUTH after the CHALLENGE" :
            "expected HELLO as the first frame");
        return FALSE;
      }
      if (!ok)
        return FALSE;
      continue;
    }
    switch (hdr.type) {
      case MTCP_FRAME_FEEDBACK:
        if (!handle_feedback (server, sc, body, hdr.length))
          return FALSE;
        break;
      case MTCP_FRAME_RETIRE:
        if (!retire_conn (server, sc))
          return FALSE;
        break;
      case MTCP_FRAME_WANT:{
        MtcpWant want;
        guint p;
        gboolean changed;
        if (!mtcp_parse_want (body, hdr.length, &want, &err)) {
          server->protocol_errors++;
          server_warn (server, "protocol error from %s: %s",
              mtcp_connection_get_peer (sc->conn), err);
          server_close_conn (server, sc, err);
          g_free (err);
          return FALSE;
        }
        /* a sink that listens has the receiver dial: nothing to do */
        if (!server->config.caller)
          break;
        changed = want.connections != server->dial_wanted;
        for (p = 0; p < server->n_paths; p++) {
          guint w = p < want.n_paths ? want.per_path[p] : 0;
          changed |= w != server->paths[p].want;
          server->paths[p].want = w;
        }
        if (changed) {
          GST_INFO ("the receiver wants %u connections (session %s has %u)"
              ", over %u paths", want.connections, sc->session->id_str,
              sc->session->conns->len, want.n_paths);
          server->dial_wanted = want.connections;
          server_keep_dialing (server, g_get_monotonic_time ());
        }
        break;
      }
      case MTCP_FRAME_HELLO:
      case MTCP_FRAME_CAPS:
      case MTCP_FRAME_BUFFER:
      case MTCP_FRAME_BUFFER_DELTA:
      case MTCP_FRAME_EOS:
      case MTCP_FRAME_SKIP:
        server->protocol_errors++;
        server_warn (server, "unexpected %s frame from %s",
            mtcp_frame_type_name (hdr.type),
            mtcp_connection_get_peer (sc->conn));
        server_close_conn (server, sc, "unexpected frame");
        return FALSE;
      default:
        GST_DEBUG ("skipping frame of unknown type 0x%02x from %s", hdr.type,
            mtcp_connection_get_peer (sc->conn));
        break;
    }
  }
}

/* Reads what the connection has and handles its frames; FALSE when it
 * was closed. */
static gboolean
server_read (MtcpServer * server, ServerConn * sc)
{
  GError *err = NULL;
  MtcpIoResult r = mtcp_connection_receive (sc->conn, &err);

  /* frames that arrived before a close are still handled */
  if (!handle_frames (server, sc)) {
    g_clear_error (&err);
    return FALSE;
  }
  if (r == MTCP_IO_CLOSED || r == MTCP_IO_ERROR) {
    server_close_conn (server, sc, err ? err->message : "closed by peer");
    g_clear_error (&err);
    return FALSE;
  }
  return TRUE;
}

gboolean
server_on_conn_event (MtcpConnection * conn, GIOCondition cond,
    gpointer user_data)
{
  ServerConn *sc = mtcp_connection_get_user_data (conn);
  MtcpServer *server = user_data;
  ServerSession *sess;

  g_mutex_lock (&server->lock);
  if ((cond & (G_IO_IN | G_IO_HUP | G_IO_ERR)) && !server_read (server, sc))
    goto done;
  sess = sc->session;
  if (sess && sc->retiring && (cond & G_IO_OUT)) {
    MtcpIoResult r;
    if (server_conn_flush (server, sc, &r) && r == MTCP_IO_DONE)
      server_close_conn (server, sc, "retired by the receiver");
  } else if (sess && (cond & G_IO_OUT)) {
    server_pump_session (server, sess);
  }
done:
  server_reap (server);
  server_unlock (server);
  return TRUE;
}

void
server_send_report (MtcpServer * server, ServerConn * sc, gint64 now)
{
  MtcpReport rep;
  MtcpQueueSessionStats qst;

  mtcp_tcp_info_read (mtcp_connection_get_socket (sc->conn), &sc->info);
  server_follow_cwnd_with_lowat (server, sc);
  mtcp_send_queue_session_stats (server->queue, sc->session->qs, &qst);
  memset (&rep, 0, sizeof (rep));
  rep.sink_time_us = now;
  rep.stream_bitrate = server_transfer_stream_bitrate (server);
  rep.backlog_bytes = qst.backlog_bytes;
  rep.rtt_us = sc->info.rtt_us;
  rep.rttvar_us = sc->info.rttvar_us;
  rep.snd_cwnd = sc->info.snd_cwnd;
  rep.snd_mss = sc->info.snd_mss;
  rep.total_retrans = sc->info.total_retrans;
  rep.lost = sc->info.lost;
  rep.bytes_acked = sc->info.bytes_acked;
  rep.unsent_bytes = server_conn_unsent_bytes (sc);
  if (mtcp_tcp_congestion_ignores_loss (sc->congestion))
    rep.flags |= MTCP_REPORT_RATE_IGNORES_LOSS;
  if (qst.backlog_bytes > 0)
    rep.flags |= server_transfer_report_flags (server, sc->session, now);
  mtcp_connection_queue (sc->conn, mtcp_out_frame_new_report (&rep));
  sc->report_us = now;
}

/* server->lock held. Frames a receiver has not acknowledged are kept for
 * a hand-over or a copy, but not past their deadline (they would arrive
 * late) nor beyond the session's byte bound: a receiver that reads
 * everything and never acknowledges cannot pin the stream. */
static void
session_expire_kept (MtcpServer * server, ServerSession * sess, gint64 now)
{
  GPtrArray *lists[] = { sess->conns, sess->retiring };
  gint64 keep_due_after = G_MININT64;
  gsize most = server->config.limits.max_lag_bytes ?
      server->config.limits.max_lag_bytes : MAX_KEPT_BYTES_DEFAULT;
  guint k, i, n = 0;
  gsize bytes = 0, kept = 0;

  if (sess->latency_us > 0)
    keep_due_after = now - sess->latency_us;
  else if (GST_CLOCK_TIME_IS_VALID (server->config.limits.max_lag_time))
    keep_due_after = now - (gint64) (server->config.limits.max_lag_time /
        GST_USECOND);
  for (k = 0; k < G_N_ELEMENTS (lists); k++)
    for (i = 0; i < lists[k]->len; i++) {
      ServerConn *sc = g_ptr_array_index (lists[k], i);
      gsize dropped = 0;
      n += mtcp_connection_expire_sent (sc->conn, keep_due_after,
          most > kept ? most - kept : 0, &dropped);
      bytes += dropped;
      kept += mtcp_connection_kept_bytes (sc->conn);
    }
  if (n > 0) {
    sess->frames_expired += n;
    GST_DEBUG ("session %s: %u unacknowledged frames (%" G_GSIZE_FORMAT
        " bytes) past the receiver's deadline or the session's bound are "
        "no longer kept", sess->id_str, n, bytes);
  }
  sess->bytes_kept = kept;
}

/* server->lock held. A connection silent for idle-timeout is dead when the
 * receiver has been heard on another of its connections for idle-timeout
 * meanwhile (a half-open one: a NAT that forgot it). When every connection
 * is silent the path is out (a cellular uplink without coverage): TCP
 * carries on when it returns, and closing would only cost a reconnect and
 * a hand-over, so they wait up to session-timeout; after it, each has
 * idle-timeout from the first one heard again to come back. */
static gboolean
conn_presumed_dead (MtcpServer * server, ServerConn * sc, gint64 now)
{
  gint64 idle = (gint64) server->config.idle_timeout_ms * 1000;
  gint64 silent = now - MAX (sc->feedback_us, sc->accepted_us);
  ServerSession *sess = sc->session;
  guint i;

  if (silent <= idle)
    return FALSE;
  if (silent > MAX (idle, (gint64) server->config.session_timeout_ms * 1000))
    return TRUE;
  for (i = 0; i < sess->conns->len; i++) {
    ServerConn *other = g_ptr_array_index (sess->conns, i);
    if (other != sc && now - MAX (other->feedback_us, other->accepted_us) <=
        idle / 2 && other->feedback_us && now - other->heard_since_us >= idle)
      return TRUE;
  }
  return FALSE;
}

static gboolean
on_tick (gpointer data)
{
  MtcpServer *server = data;
  gint64 now = g_get_monotonic_time ();
  GList *l, *snapshot;

  if (!server->running)
    return G_SOURCE_REMOVE;     /* stopping */
  g_mutex_lock (&server->lock);
  server_keep_dialing (server, now);
  if (server->rate_since_us == 0) {
    server->rate_since_us = now;
  } else if (now - server->rate_since_us >= G_USEC_PER_SEC) {
    server->stream_bitrate = server->rate_bytes * 8 * G_USEC_PER_SEC /
        (now - server->rate_since_us);
    server->rate_bytes = 0;
    server->rate_since_us = now;
  }

  /* reading a connection can close others (a hedge writes to them), and
   * closed ones are freed only by server_reap (): walk a copy, skip the
   * closed */
  snapshot = g_list_copy (server->conns);
  for (l = snapshot; l; l = l->next) {
    ServerConn *sc = l->data;
    if (sc->conn == NULL)
      continue;
    if (sc->session == NULL) {
      if (now - sc->accepted_us >
          (gint64) server->config.handshake_timeout_ms * 1000) {
        server->handshakes_timed_out++;
        server_warn (server, "no handshake from %s within %u ms",
            mtcp_connection_get_peer (sc->conn),
            server->config.handshake_timeout_ms);
        server_close_conn (server, sc, "handshake timeout");
      }
      continue;
    }
    /* the receiver sends FEEDBACK on each connection every 500 ms at least:
     * silence means a half-open connection (a cable pulled, a NAT that
     * forgot us); but first read what waits, in case this thread was too
     * busy writing to see it */
    if (server->config.idle_timeout_ms > 0 && !sc->retiring &&
        now - MAX (sc->feedback_us, sc->accepted_us) >
        (gint64) server->config.idle_timeout_ms * 1000 &&
        !server_read (server, sc))
      continue;                 /* closed while reading */
    if (server->config.idle_timeout_ms > 0 && !sc->retiring &&
        conn_presumed_dead (server, sc, now)) {
      server_close_conn (server, sc, "no feedback from the receiver: "
          "connection presumed dead");
      continue;
    }
    /* a retired connection whose receiver stopped reading would otherwise
     * stay, outside the session's connection limit, for ever */
    if (sc->retiring
        && mtcp_connection_bytes_sent (sc->conn) != sc->retiring_sent) {
      sc->retiring_sent = mtcp_connection_bytes_sent (sc->conn);
      sc->retiring_progress_us = now;
    } else if (sc->retiring && now - sc->retiring_progress_us >
        (gint64) MAX (server->config.idle_timeout_ms, RETIRE_STALL_MIN_MS) *
        1000) {
      server_close_conn (server, sc, "retired and writing nothing");
      continue;
    }
    /* one that carried no frame lately gets its REPORT alone, the tick
     * after it was due; not behind output that does not leave (a receiver
     * that stopped reading), where REPORTs would pile up stale */
    if (!sc->retiring && mtcp_connection_unsent_bytes (sc->conn) == 0
        && now - sc->report_us >=
        (gint64) server->config.report_interval_ms * 1500)
      server_send_report (server, sc, now);
  }
  g_list_free (snapshot);
  for (l = server->sessions; l; l = l->next) {
    ServerSession *sess = l->data;
    session_expire_kept (server, sess, now);
    server_session_measure_path (server, sess);
    if (sess->orphaned_us && now - sess->orphaned_us >
        (gint64) server->config.session_timeout_ms * 1000) {
      GST_INFO ("session %s: no connection for %u ms, it ends", sess->id_str,
          server->config.session_timeout_ms);
      sess->ended = TRUE;
    }
  }
  /* a live upstream that paused or ended pushes nothing that would make
   * a session skip what the gate holds back (its EOS behind it) */
  if (server->live)
    mtcp_send_queue_enforce_limits (server->queue);
  server_pump_all (server);
  server_reap (server);
  server_unlock (server);
  if (server->tick)
    server->tick (server->tick_data);
  return G_SOURCE_CONTINUE;
}

static void
mark_ended (ServerSession * sess, gpointer unused)
{
  sess->ended = TRUE;
}

gboolean
mtcp_server_start (MtcpServer * server, GError ** error)
{
  if (!server_derive_auth_key (server, error))
    return FALSE;

  server->connector = server->config.caller ?
      mtcp_connector_new_dialer (server->config.host, server->config.port,
      server->config.handshake_timeout_ms, NULL, error) :
      mtcp_connector_new_listener (server->config.host, server->config.port,
      error);
  if (server->connector == NULL)
    return FALSE;
  if (!server->config.caller && ((server->config.local_addresses &&
              *server->config.local_addresses) || (server->config.interfaces
              && *server->config.interfaces))) {
    g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
        "local-addresses and interfaces are the uplinks a calling sink "
        "dials from: they need mode=caller");
    return FALSE;
  }
  if (server->config.caller && !mtcp_connector_set_uplinks
      (server->connector, server->config.local_addresses,
          server->config.interfaces, error))
    return FALSE;
  server->n_paths = mtcp_connector_n_uplinks (server->connector);
  server->bound_port = mtcp_connector_get_port (server->connector);

  mtcp_io_thread_init (&server->io);
  mtcp_connector_start (server->connector, server->io.context,
      server_on_connected, server_on_connect_failed, server);
  mtcp_io_thread_add_timeout (&server->io,
      MAX (server->config.report_interval_ms, 10), on_tick, server);
  if (server->config.copy_overhead_percent > 0)
    mtcp_io_thread_add_timeout (&server->io, DEADLINE_WATCH_MS,
        server_on_deadline_watch, server);
  if (server->config.transfer != MTCP_TRANSFER_GREEDY)
    mtcp_io_thread_add_timeout (&server->io, TRANSFER_TIMER_MS,
        server_on_transfer_timer, server);

  server->flushing = FALSE;
  server->running = TRUE;
  mtcp_io_thread_start (&server->io, "multitcpsink-io");
  GST_INFO ("%s %s, scheduler %s", server->config.caller ? "dialing" :
      "listening on", mtcp_connector_describe (server->connector),
      mtcp_scheduler_nick (server->config.scheduler));
  return TRUE;
}

void
mtcp_server_stop (MtcpServer * server)
{
  if (!server->running)
    return;
  g_mutex_lock (&server->lock);
  server->flushing = TRUE;
  g_cond_broadcast (&server->cond);
  g_mutex_unlock (&server->lock);

  mtcp_io_thread_stop (&server->io);

  /* the I/O thread is gone; stats may still be read from another thread */
  g_mutex_lock (&server->lock);
  server->running = FALSE;
  while (server->conns)
    server_close_conn (server, server->conns->data, "sink stopping");
  g_list_foreach (server->sessions, (GFunc) mark_ended, NULL);
  server_reap (server);
  /* nobody is left to tell: the element is stopping */
  g_ptr_array_set_size (server->warnings, 0);
  mtcp_caller_notes_tell (mtcp_caller_queue_take (server->callers), NULL, NULL);
  g_mutex_unlock (&server->lock);
  mtcp_connector_stop (server->connector);
  /* TLS handshakes cancelled above end in the I/O context, which nobody
   * runs now: run it until they did (our own sources, seeing running
   * FALSE, only remove themselves) */
  mtcp_connection_wait_orphaned_handshakes (server->io.context,
      &server->tls_orphans, STOP_HANDSHAKES_WAIT_US);
  mtcp_io_thread_clear (&server->io);
}

guint
mtcp_server_get_port (MtcpServer * server)
{
  return server->bound_port;
}

gchar *
mtcp_server_gave_up (MtcpServer * server)
{
  gchar *reason;

  g_mutex_lock (&server->lock);
  reason = g_strdup (server->gave_up_reason);
  g_mutex_unlock (&server->lock);
  return reason;
}

void
mtcp_server_push_caps (MtcpServer * server, GstCaps * caps)
{
  g_mutex_lock (&server->lock);
  mtcp_send_queue_push_caps (server->queue, caps);
  g_mutex_unlock (&server->lock);
  server_wake (server);
}

gboolean
mtcp_server_push_buffer (MtcpServer * server, GstBuffer * buffer,
    GstClockTime pts, GstClockTime dts, GstClockTime duration, gboolean live)
{
  g_mutex_lock (&server->lock);
  if (!live) {
    while (!server->flushing && mtcp_send_queue_over_limits (server->queue)) {
      gint64 until = g_get_monotonic_time () + 100 * G_TIME_SPAN_MILLISECOND;
      g_cond_wait_until (&server->cond, &server->lock, until);
    }
  }
  if (server->flushing) {
    g_mutex_unlock (&server->lock);
    return FALSE;
  }
  mtcp_send_queue_push_buffer (server->queue, buffer, pts, dts, duration);
  server->live = live;
  server->rate_bytes += gst_buffer_get_size (buffer);
  server_note_media (server, pts, gst_buffer_get_size (buffer));
  if (live)
    mtcp_send_queue_enforce_limits (server->queue);
  g_mutex_unlock (&server->lock);
  server_wake (server);
  return TRUE;
}

void
mtcp_server_push_eos (MtcpServer * server)
{
  g_mutex_lock (&server->lock);
  mtcp_send_queue_push_eos (server->queue);
  g_mutex_unlock (&server->lock);
  server_wake (server);
}

/* Every session got EOS and its receiver says it has everything up to it:
 * written to a socket is not enough, the kernel may still lose it. */
static gboolean
all_received (MtcpServer * server)
{
  GList *l;

  for (l = server->sessions; l; l = l->next) {
    ServerSession *sess = l->data;
    if (sess->ended)
      continue;
    if (!sess->eos_sent || sess->acked == MTCP_TIME_NONE ||
        sess->acked < sess->eos_seq)
      return FALSE;
  }
  return TRUE;
}

gboolean
mtcp_server_wait_drained (MtcpServer * server, gint64 timeout_us)
{
  gint64 until = g_get_monotonic_time () + timeout_us;
  gboolean drained;

  g_mutex_lock (&server->lock);
  while (!(drained = all_received (server)) && !server->flushing) {
    if (!g_cond_wait_until (&server->cond, &server->lock, until))
      break;
  }
  drained = all_received (server);
  g_mutex_unlock (&server->lock);
  return drained;
}

gboolean
mtcp_server_wait_receiver (MtcpServer * server)
{
  gboolean flushing;

  g_mutex_lock (&server->lock);
  for (;;) {
    GList *l;
    gboolean have = FALSE;
    for (l = server->sessions; l && !have; l = l->next)
      have = ((ServerSession *) l->data)->conns->len > 0;
    if (have || server->flushing || server->gave_up)
      break;
    g_cond_wait (&server->cond, &server->lock);
  }
  flushing = server->flushing || server->gave_up;
  g_mutex_unlock (&server->lock);
  return !flushing;
}

void
mtcp_server_set_flushing (MtcpServer * server, gboolean flushing)
{
  g_mutex_lock (&server->lock);
  server->flushing = flushing;
  g_cond_broadcast (&server->cond);
  g_mutex_unlock (&server->lock);
}

void
mtcp_server_set_scheduler (MtcpServer * server, MtcpScheduler scheduler)
{
  g_mutex_lock (&server->lock);
  server->config.scheduler = scheduler;
  g_mutex_unlock (&server->lock);
}

void
mtcp_server_set_stream_ceiling (MtcpServer * server, guint64 bps)
{
  g_mutex_lock (&server->lock);
  server->stream_ceiling_bps = bps;
  g_mutex_unlock (&server->lock);
}

void
mtcp_server_set_limits (MtcpServer * server, const MtcpSendQueueLimits * limits)
{
  g_mutex_lock (&server->lock);
  server->config.limits = *limits;
  mtcp_send_queue_set_limits (server->queue, limits);
  g_mutex_unlock (&server->lock);
}

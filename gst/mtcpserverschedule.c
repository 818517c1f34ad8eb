/* multitcp
 * Copyright (C) 2026 the multitcp authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

/* Scheduling at the sink: which of a session's connections gets the next
 * frame of the shared queue (dynamic DMP pulls, MultiTCP's round robin, or
 * the static baseline), and when a connection is ready for one: its
 * socket takes it and it would not deliver it past the receiver's
 * deadline. */

#include "mtcpserverprivate.h"
#include "mtcptcpinfo.h"
#include "mtcptransit.h"

GST_DEBUG_CATEGORY (mtcp_server_schedule_debug);
#define GST_CAT_DEFAULT mtcp_server_schedule_debug

/* the least unsent data a connection may hold (notsent-lowat is the most):
 * about three segments, so that one in RTO backoff sits on few frames */
#define LOWAT_MIN (4 * 1024)
/* what a connection takes at a time before it writes (dynamic scheduler),
 * and never more than its unsent mark */
#define PUMP_RUN_BYTES (32 * 1024)
/* how old a connection's TCP_INFO may be when it is given a frame (the
 * silence it shows must be seen within a few frames), and when it is
 * refused one for being silent */
#define SILENT_CHECK_US (40 * G_TIME_SPAN_MILLISECOND)
#define SILENT_REREAD_US (10 * G_TIME_SPAN_MILLISECOND)
/* how long after a silence the RTT it left behind does not count in full,
 * and the session keeps what is still in time when it skips */
#define RECOVERY_US G_USEC_PER_SEC
/* how much sooner another connection must deliver a frame for @sc to
 * leave it in the shared queue: a frame interval or so, so that two
 * connections of one path do not take turns by their noise */
#define PASS_TO_SOONER_US (20 * G_TIME_SPAN_MILLISECOND)

/* Write what the connection holds; FALSE if it was closed. */
gboolean
server_conn_flush (MtcpServer * server, ServerConn * sc, MtcpIoResult * result)
{
  GError *err = NULL;

  *result = mtcp_connection_flush (sc->conn, &err);
  if (*result == MTCP_IO_CLOSED || *result == MTCP_IO_ERROR) {
    gchar *why = g_strdup_printf ("write failed: %s",
        err ? err->message : "closed");
    server_close_conn (server, sc, why);
    g_free (why);
    g_clear_error (&err);
    return FALSE;
  }
  mtcp_connection_want_write (sc->conn, *result == MTCP_IO_BLOCKED);
  return TRUE;
}

/* server->lock held. How much later than the session's first frame a
 * frame handed to @sc now reaches the receiver (whose clock that frame
 * set): mtcp_transit_us by the TCP_INFO last read. For RECOVERY_US after
 * a silence the smoothed RTT counts no more than before it: the outage's
 * delayed ACKs hold it at seconds for many more. */
static gint64
conn_transit_us (ServerConn * sc)
{
  const MtcpTcpInfo *info = &sc->info;
  /* a socket that polls writable holds less than its mark, whatever the
   * last TCP_INFO said */
  guint64 waiting = mtcp_connection_unsent_bytes (sc->conn) + (sc->lowat ?
      MIN (info->notsent_bytes, sc->lowat) : info->notsent_bytes);
  guint32 cap = 0;

  if (sc->rtt_before_silence_us > 0 &&
      g_get_monotonic_time () - sc->heard_again_us < RECOVERY_US)
    cap = sc->rtt_before_silence_us;
  return mtcp_transit_us (info, waiting, mtcp_drain_rate_of_path
      (&sc->drain), cap);
}

/* When a frame with @transit_us ahead of it on @sc reaches the receiver:
 * the path's one-way delay added; -1 with no RTT measured yet. */
static gint64
arrival_after_transit (const ServerConn * sc, gint64 transit_us)
{
  if (sc->info.min_rtt_us == 0)
    return -1;
  return sc->info.min_rtt_us / 2 + transit_us;
}

/* server->lock held. When a frame handed to @sc now would reach the
 * receiver, from the path's one-way delay and what is ahead of it
 * (conn_transit_us); -1 with nothing to go by yet. */
static gint64
conn_arrival_us (ServerConn * sc)
{
  return sc->info.min_rtt_us ? arrival_after_transit (sc,
      conn_transit_us (sc)) : -1;
}

/* server->lock held. Another heard connection of @sess would take the
 * session's next frame (late by @late_us already) in time with its own
 * margin: not one that would leave it to @sc (its transit @transit_us) as
 * the sooner (the dynamic scheduler's rule, conn_another_sooner). */
static gboolean
another_in_time (MtcpServer * server, ServerSession * sess, ServerConn * sc,
    gint64 transit_us, gint64 late_us)
{
  gint64 mine = arrival_after_transit (sc, transit_us);
  guint i;

  for (i = 0; i < sess->conns->len; i++) {
    ServerConn *other = g_ptr_array_index (sess->conns, i);
    gint64 theirs, transit;

    if (other == sc || other->silent || other->info.min_rtt_us == 0)
      continue;
    /* conn_arrival_us, its transit kept for the margin's test */
    transit = conn_transit_us (other);
    theirs = arrival_after_transit (other, transit);
    if (server->config.scheduler == MTCP_SCHEDULER_DYNAMIC && mine >= 0 &&
        theirs > mine + PASS_TO_SOONER_US)
      continue;
    if (!mtcp_transit_arrives_late (late_us, transit,
            sess->latency_us, mtcp_transit_queue_held (&other->info,
                &other->drain)))
      return TRUE;
  }
  return FALSE;
}

/* server->lock held. A live session's next frame would reach its
 * receiver past the deadline on @sc: better another connection, or a
 * skip, than a late frame on the wire in a timely one's place. @waived:
 * it passes only because no other connection had the margin. */
static gboolean
conn_would_deliver_late (MtcpServer * server, ServerConn * sc,
    gboolean * waived)
{
  ServerSession *sess = sc->session;
  gint64 late_us, transit;
  gboolean held;

  *waived = FALSE;
  if (!server->live || sess == NULL || sess->latency_us == 0)
    return FALSE;
  late_us = (gint64) MIN (mtcp_send_queue_session_late_by (server->queue,
          sess->qs) / GST_USECOND, (guint64) G_MAXINT32);
  transit = conn_transit_us (sc);
  held = mtcp_transit_queue_held (&sc->info, &sc->drain);
  if (!mtcp_transit_arrives_late (late_us, transit, sess->latency_us, held))
    return FALSE;
  /* with uplinks the margin only sends the frame to another connection:
   * with none that has it, one still in time beats a skip (the bonding
   * grid, stop 34); on one path it stands (the cellular set, stop 28) */
  if (held && server->n_paths > 1 && !mtcp_transit_arrives_late (late_us,
          transit, sess->latency_us, FALSE) &&
      !another_in_time (server, sess, sc, transit, late_us)) {
    *waived = TRUE;
    return FALSE;
  }
  GST_LOG ("session %s: connection %u would deliver late (%" G_GINT64_FORMAT
      " ms behind, %" G_GINT64_FORMAT " ms transit; cwnd %u, RTT %u/%u us, "
      "%u unacked)", sess->id_str, sc->id, late_us / 1000, transit / 1000,
      sc->info.snd_cwnd, sc->info.rtt_us, sc->info.min_rtt_us,
      sc->info.unacked);
  return TRUE;
}

/* server->lock held. A live session's frame waits in the shared queue for
 * another of its connections (one heard: not silent) that would deliver it
 * more than PASS_TO_SOONER_US sooner than @sc (ECF's rule for multipath
 * TCP): a pull that fills every socket it can also fills the slowest
 * path's queue, where a loss then holds frames past their deadline. The
 * soonest one's own frames make it later until @sc is the sooner. */
static gboolean
conn_another_sooner (MtcpServer * server, ServerConn * sc)
{
  ServerSession *sess = sc->session;
  gint64 mine, best = G_MAXINT64;
  guint i;

  if (!server->live || sess == NULL || sess->conns->len < 2 ||
      (mine = conn_arrival_us (sc)) < 0)
    return FALSE;
  for (i = 0; i < sess->conns->len; i++) {
    ServerConn *other = g_ptr_array_index (sess->conns, i);
    gint64 t;

    if (other == sc || other->silent || (t = conn_arrival_us (other)) < 0)
      continue;
    best = MIN (best, t);
  }
  return best != G_MAXINT64 && mine > best + PASS_TO_SOONER_US;
}

/* Ready for a new frame: nothing left in user space, the kernel below
 * its unsent-bytes mark, and it would not deliver the next frame late.
 * Otherwise ask to be woken when writable (the tick pumps the others). */
static gboolean
conn_ready (MtcpServer * server, ServerConn * sc)
{
  MtcpIoResult r;
  gboolean waived;

  if (!server_conn_flush (server, sc, &r))
    return FALSE;
  if (r == MTCP_IO_BLOCKED)
    return FALSE;
  if (!mtcp_connection_can_take (sc->conn)) {
    mtcp_connection_want_write (sc->conn, TRUE);
    return FALSE;
  }
  /* no ACK for a while with data in flight (an outage of its path, or of
   * every path): what it took now would wait there and be stale when the
   * path comes back, where in the shared queue the session can still skip
   * it or hand it to a connection that is heard. A dark one's frames go to
   * the others (mtcpserverrepair.c). Its TCP_INFO is read again when
   * older than SILENT_CHECK_US (the tick reads every 200 ms: too late),
   * or SILENT_REREAD_US while silent: a live upstream pumps at every
   * buffer, so the ACK that ends it lets frames go within one; otherwise
   * the tick's pump (200 ms) does */
  {
    gint64 now = g_get_monotonic_time ();
    if (now - sc->watch_read_us >= (sc->silent ?
            SILENT_REREAD_US : SILENT_CHECK_US)) {
      server_conn_read_info (sc, now);
      sc->watch_read_us = now;
    }
    if (server_conn_note_silence (server, sc, now))
      return FALSE;
  }
  /* a stored video's transfer control: no room in this round */
  if (server_transfer_room (server, sc, 0) == 0)
    return FALSE;
  if (conn_would_deliver_late (server, sc, &waived)) {
    sc->session->gated++;
    return FALSE;
  }
  if (server->config.scheduler == MTCP_SCHEDULER_DYNAMIC &&
      conn_another_sooner (server, sc)) {
    sc->session->passed_to_sooner++;
    return FALSE;
  }
  if (waived)
    sc->session->gate_margin_waived++;
  return TRUE;
}

/* Queues @f on the connection, a REPORT that is due before it so that both
 * ride in the same segments. Written by the next flush. */
void
server_conn_hand (MtcpServer * server, ServerConn * sc, MtcpOutFrame * f)
{
  gint64 now = g_get_monotonic_time ();

  GST_LOG ("session %s: seq %" G_GUINT64_FORMAT " (%s) -> connection %u",
      sc->session->id_str, f->seq, mtcp_frame_type_name (f->type), sc->id);
  if (f->type == MTCP_FRAME_EOS) {
    sc->session->eos_sent = TRUE;
    sc->session->eos_seq = f->seq;
  }
  if (now - sc->report_us >= (gint64) server->config.report_interval_ms * 1000)
    server_send_report (server, sc, now);
  if (f->type == MTCP_FRAME_BUFFER && !f->resend)
    mtcp_repair_budget_earn (sc->session->repair, mtcp_out_frame_size (f),
        server->stream_bitrate);
  server_transfer_sent (server, sc, mtcp_out_frame_size (f));
  mtcp_connection_queue (sc->conn, f);
}

static void
conn_give (MtcpServer * server, ServerConn * sc, MtcpOutFrame * f)
{
  MtcpIoResult r;

  server_conn_hand (server, sc, f);
  server_conn_flush (server, sc, &r);
}

/* DMP: each connection that can send takes frames until it would block,
 * a run at a time, written with one call (with the REPORT that was due).
 * TRUE when the session's queue ran empty. */
static gboolean
pump_dynamic (MtcpServer * server, ServerSession * sess)
{
  guint n = sess->conns->len, k;
  guint first = n ? sess->rr_next % n : 0;

  /* rotate the starting connection so none is always first in line */
  sess->rr_next++;
  for (k = 0; k < n && sess->conns->len > 0; k++) {
    ServerConn *sc = g_ptr_array_index (sess->conns,
        (first + k) % sess->conns->len);

    while (conn_ready (server, sc)) {
      gsize run = 0, most = sc->lowat ? MIN (sc->lowat, PUMP_RUN_BYTES) :
          PUMP_RUN_BYTES;
      MtcpOutFrame *f = NULL;

      /* no more than the transfer control's round has room for */
      most = MIN (most, server_transfer_room (server, sc, 0));

      while (run < most &&
          (f = mtcp_send_queue_take (server->queue, sess->qs)) != NULL) {
        run += mtcp_out_frame_size (f);
        server_conn_hand (server, sc, f);
      }
      if (f == NULL) {
        MtcpIoResult r;
        /* a flush that closed it put its frames back in the queue */
        return run == 0 || server_conn_flush (server, sc, &r);
      }
      if (sc->session == NULL)
        break;                  /* closed while writing */
    }
  }
  return FALSE;
}

/* MultiTCP 4.2.3: frames in turn, a blocked connection loses its turn.
 * TRUE when the session's queue ran empty. */
static gboolean
pump_round_robin (MtcpServer * server, ServerSession * sess)
{
  for (;;) {
    guint n = sess->conns->len, k;
    ServerConn *chosen = NULL;

    for (k = 0; k < n; k++) {
      guint i = (sess->rr_next + k) % n;
      ServerConn *sc = g_ptr_array_index (sess->conns, i);
      if (conn_ready (server, sc)) {
        chosen = sc;
        sess->rr_next = i + 1;
        break;
      }
      if (n != sess->conns->len)
        return FALSE;           /* a connection closed: start over later */
    }
    if (chosen == NULL)
      return FALSE;
    {
      MtcpOutFrame *f = mtcp_send_queue_take (server->queue, sess->qs);
      if (f == NULL)
        return TRUE;
      conn_give (server, chosen, f);
    }
  }
}

/* The baseline: sequence number modulo N fixes the connection. TRUE when
 * the session's queue ran empty. */
static gboolean
pump_static (MtcpServer * server, ServerSession * sess)
{
  MtcpQueueSessionStats qst;
  guint k;

  for (k = 0; k < sess->conns->len; k++) {
    ServerConn *sc = g_ptr_array_index (sess->conns, k);
    guint n = sess->conns->len;

    while (conn_ready (server, sc)) {
      MtcpOutFrame *f = mtcp_send_queue_take_lane (server->queue, sess->qs, k,
          n);
      if (f == NULL)
        break;
      conn_give (server, sc, f);
      if (sc->session == NULL || n != sess->conns->len)
        return FALSE;
    }
  }
  if (!mtcp_rate_probe_active (sess->probe, g_get_monotonic_time ()))
    return FALSE;               /* nothing to pad: no need to know */
  mtcp_send_queue_session_stats (server->queue, sess->qs, &qst);
  return qst.backlog_buffers == 0;
}

/* The session's queue ran empty: the padding its probe owes now goes to
 * the first connection ready for more (mtcpprobe.h), no more than its
 * unsent-bytes mark, in frames any receiver accepts, and none to one
 * whose path's queue grew since the probe began. */
static void
session_pad (MtcpServer * server, ServerSession * sess)
{
  gsize due = mtcp_rate_probe_due (sess->probe, g_get_monotonic_time ());
  guint n = sess->conns->len, k;

  if (due == 0 || sess->requeued)
    return;                     /* frames to send again come first */
  for (k = 0; k < n; k++) {
    ServerConn *sc = g_ptr_array_index (sess->conns, (sess->rr_next + k) % n);
    gsize left;
    MtcpIoResult r;

    if (!conn_ready (server, sc)) {
      if (n != sess->conns->len)
        return;                 /* one closed: the next pump pads */
      continue;
    }
    /* by the TCP_INFO conn_ready just read */
    if (server_conn_probe_queued (sc))
      continue;
    due = MIN (due, sc->lowat ? MIN (sc->lowat, PUMP_RUN_BYTES) :
        PUMP_RUN_BYTES);
    mtcp_rate_probe_sent (sess->probe, due);
    GST_LOG ("session %s: %" G_GSIZE_FORMAT " bytes of padding on "
        "connection %u", sess->id_str, due, sc->id);
    /* in frames any receiver takes, whatever its max-frame-size */
    for (left = due; left > 0;) {
      gsize size = MIN (left, MTCP_PADDING_MAX);
      if (left - size > 0 && left - size < MTCP_HEADER_SIZE)
        size = left - MTCP_HEADER_SIZE;
      mtcp_connection_queue (sc->conn, mtcp_out_frame_new_padding (size));
      left -= size;
    }
    server_conn_flush (server, sc, &r);
    return;
  }
}

void
server_pump_session (MtcpServer * server, ServerSession * sess)
{
  gboolean emptied = FALSE;

  switch (server->config.scheduler) {
    case MTCP_SCHEDULER_DYNAMIC:
      emptied = pump_dynamic (server, sess);
      break;
    case MTCP_SCHEDULER_ROUND_ROBIN:
      emptied = pump_round_robin (server, sess);
      break;
    case MTCP_SCHEDULER_STATIC:
      emptied = pump_static (server, sess);
      break;
  }
  if (emptied)
    session_pad (server, sess);
  g_cond_broadcast (&server->cond);
}

void
server_pump_all (MtcpServer * server)
{
  GList *l, *next;
  for (l = server->sessions; l; l = next) {
    next = l->next;
    server_pump_session (server, l->data);
  }
}

static gboolean
pump_all_cb (gpointer data)
{
  MtcpServer *server = data;

  g_atomic_int_set (&server->wake_pending, 0);
  if (!server->running)
    return G_SOURCE_REMOVE;     /* stopping */
  g_mutex_lock (&server->lock);
  server_pump_all (server);
  server_reap (server);
  server_unlock (server);
  return G_SOURCE_REMOVE;
}

void
server_wake (MtcpServer * server)
{
  if (server->io.context && g_atomic_int_compare_and_exchange
      (&server->wake_pending, 0, 1))
    g_main_context_invoke (server->io.context, pump_all_cb, server);
}

/* What a connection holds unsent waits for its own rate: on a slow one
 * (a few hundred kbit/s on a lossy path) 64 kB is most of a second, which
 * frames spend there instead of in the shared queue, where any connection
 * could take them. So the mark follows one congestion window. */
void
server_follow_cwnd_with_lowat (MtcpServer * server, ServerConn * sc)
{
  guint32 want;

  if (sc->lowat == 0 || sc->info.snd_cwnd == 0 || sc->info.snd_mss == 0)
    return;
  want = CLAMP ((guint64) sc->info.snd_cwnd * sc->info.snd_mss, LOWAT_MIN,
      MAX (server->config.notsent_lowat, LOWAT_MIN));
  if (want != sc->lowat &&
      mtcp_tcp_set_notsent_lowat (mtcp_connection_get_socket (sc->conn),
          want)) {
    GST_LOG ("connection %u: unsent mark %u (cwnd %u x %u)", sc->id, want,
        sc->info.snd_cwnd, sc->info.snd_mss);
    sc->lowat = want;
  }
}

/* server->lock held. A session in an outage or just out of one (a
 * connection silent now, or heard again within RECOVERY_US): when it
 * skips it keeps what can still arrive in time (the path is back, or
 * will be, with room to catch up); otherwise the latest keyframe (a path
 * slower than the stream gains nothing from an older one). */
static void
session_tell_recovering (MtcpServer * server, ServerSession * sess,
    gint64 now)
{
  gboolean recovering = FALSE;
  guint i;

  for (i = 0; i < sess->conns->len && !recovering; i++) {
    ServerConn *sc = g_ptr_array_index (sess->conns, i);
    recovering = sc->silent || (sc->heard_again_us > 0 &&
        now - sc->heard_again_us < RECOVERY_US);
  }
  mtcp_send_queue_session_keep_timely (server->queue, sess->qs, recovering);
}

/* server->lock held. Whether @sc is silent by its TCP_INFO as last read,
 * noting where a silence starts (its RTT then: no ACK has moved it since)
 * and ends, and telling its session's queue. */
gboolean
server_conn_note_silence (MtcpServer * server, ServerConn * sc, gint64 now)
{
  gboolean silent = server_conn_silent (sc);

  if (silent == sc->silent)
    return silent;
  sc->silent = silent;
  if (silent) {
    sc->rtt_before_silence_us = sc->info.rtt_us;
    if (sc->session)
      sc->session->held_silent++;
    GST_DEBUG ("connection %u: silent (%u segments unacked, no ACK for "
        "%u ms, RTT %u us)", sc->id, sc->info.unacked,
        sc->info.last_ack_recv_ms, sc->info.rtt_us);
  } else {
    sc->heard_again_us = now;
    mtcp_drain_rate_restart (&sc->drain, now, sc->info.bytes_acked,
        sc->info.rwnd_limited_us);
    /* nor what it read before: the timeout's repair that follows would
     * hold the path from before the silence */
    sc->held_reading = (MtcpHeldReading) {
    0};
    GST_DEBUG ("connection %u: heard again (RTT %u us)", sc->id,
        sc->info.rtt_us);
  }
  if (sc->session)
    session_tell_recovering (server, sc->session, now);
  return silent;
}

/* server->lock held. At every tick, by TCP_INFO read just before. */
void
server_session_note_silence (MtcpServer * server, ServerSession * sess,
    gint64 now)
{
  guint i;

  for (i = 0; i < sess->conns->len; i++)
    server_conn_note_silence (server, g_ptr_array_index (sess->conns, i),
        now);
  session_tell_recovering (server, sess, now);
}

/* server->lock held. The transit of the session's fastest connection
 * (0: none, or nothing known yet). */
gint64
server_session_transit_us (ServerSession * sess)
{
  gint64 best = G_MAXINT64;
  guint i;

  for (i = 0; i < sess->conns->len; i++) {
    ServerConn *sc = g_ptr_array_index (sess->conns, i);
    best = MIN (best, conn_transit_us (sc));
  }
  return best == G_MAXINT64 ? 0 : best;
}

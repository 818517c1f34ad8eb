/* multitcp
 * Copyright (C) 2026 the multitcp authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

/* Repair at the sink: frames stuck on a connection (a loss TCP has not
 * repaired, RTO backoff) go out again on the others, as hedges when the
 * receiver waits behind a hole and as copies ahead of a frame's deadline;
 * all of it paid from one budget of spare capacity (mtcprepair.c). */

#include "mtcpserverprivate.h"
#include "mtcptcpinfo.h"

GST_DEBUG_CATEGORY (mtcp_server_repair_debug);
#define GST_CAT_DEFAULT mtcp_server_repair_debug

/* a frame the receiver waits for goes out again on another connection after
 * this long, or two RTTs of the connection that holds it if longer */
#define HEDGE_MIN_WAIT_US (200 * G_TIME_SPAN_MILLISECOND)
/* how long before a frame's deadline a copy leaves on another connection
 * (beyond half that connection's RTT, the path's one-way delay) */
#define DEADLINE_COPY_SLACK_US (60 * G_TIME_SPAN_MILLISECOND)
/* RTT plus four RTT variations, this at least (delayed ACKs): how long
 * without an ACK, and since the oldest unacknowledged write, makes a
 * connection stuck */
#define STUCK_MIN_VAR_US (50 * G_TIME_SPAN_MILLISECOND)
/* how often the deadline watch (every 10 ms) reads TCP_INFO of a
 * connection whose oldest frame is not yet near its deadline, to see it
 * go dark: a quarter of HEDGE_MIN_WAIT_US */
#define DARK_READ_PERIOD_US (50 * G_TIME_SPAN_MILLISECOND)

/* The connection of @sess that holds @seq, active or retiring. */
static ServerConn *
session_holder (ServerSession * sess, guint64 seq)
{
  GPtrArray *lists[] = { sess->conns, sess->retiring };
  guint k, i;

  for (k = 0; k < G_N_ELEMENTS (lists); k++)
    for (i = 0; i < lists[k]->len; i++) {
      ServerConn *sc = g_ptr_array_index (lists[k], i);
      if (mtcp_connection_holds_frame (sc->conn, seq))
        return sc;
    }
  return NULL;
}

/* What a connection can send at once, by the TCP_INFO last read: its
 * congestion window's room less what waits before it (negative: a new
 * frame waits for ACKs, up to an RTT). */
static gint64
conn_send_room (ServerConn * sc)
{
  gint64 in_flight = (gint64) sc->info.unacked * sc->info.snd_mss;
  gint64 window = (gint64) sc->info.snd_cwnd * sc->info.snd_mss;

  return window - in_flight - (gint64) server_conn_unsent_bytes (sc);
}

/* Copies go where they arrive soonest: each to the active connection, not
 * @holder and not one that holds that frame already, with the most room in
 * its congestion window (TCP_INFO read now, less the copies it was just
 * given), then the shortest RTT; one repairing a loss only when every other
 * is. All of a stuck connection's frames on one thin connection would wait
 * RTTs for its window (seen at 3% loss: 46 copies at once on one
 * connection whose window held a few segments). Frees what finds no
 * connection; returns how many were handed out, their bytes in @bytes;
 * @closed: a flush closed one. */
static guint
session_spread_copies (MtcpServer * server, ServerSession * sess,
    ServerConn * holder, GList * copies, gsize * bytes, gboolean * closed)
{
  guint n_conns = sess->conns->len, i, n = 0;
  MtcpCopyTarget *t = g_new0 (MtcpCopyTarget, n_conns);
  gboolean *touched = g_new0 (gboolean, n_conns);
  gboolean *silent = g_new0 (gboolean, n_conns);
  GList *l;

  *bytes = 0;
  *closed = FALSE;
  for (i = 0; i < n_conns; i++) {
    ServerConn *sc = g_ptr_array_index (sess->conns, i);
    if (sc == holder)
      continue;
    mtcp_tcp_info_read (mtcp_connection_get_socket (sc->conn), &sc->info);
    t[i].repairing = mtcp_tcp_info_in_loss_recovery (&sc->info);
    silent[i] = server_conn_silent (sc);
    t[i].room = conn_send_room (sc);
    t[i].rtt_us = sc->info.rtt_us;
  }
  for (l = copies; l; l = l->next) {
    MtcpOutFrame *f = l->data;
    ServerConn *sc;
    gint best;

    for (i = 0; i < n_conns; i++) {
      sc = g_ptr_array_index (sess->conns, i);
      /* nor into a connection that hears nothing: it would only wait */
      t[i].excluded = sc == holder || silent[i] ||
          mtcp_connection_holds_frame (sc->conn, f->seq);
    }
    best = mtcp_copy_target_pick (t, n_conns);
    if (best < 0) {
      mtcp_out_frame_free (f);
      continue;
    }
    sc = g_ptr_array_index (sess->conns, best);
    GST_LOG ("session %s: a copy of seq %" G_GUINT64_FORMAT " on connection "
        "%u (room %" G_GINT64_FORMAT " bytes%s)", sess->id_str, f->seq, sc->id,
        t[best].room, t[best].repairing ? ", repairing a loss" : "");
    t[best].room -= mtcp_out_frame_size (f);
    *bytes += mtcp_out_frame_size (f);
    touched[best] = TRUE;
    n++;
    server_conn_hand (server, sc, f);
  }
  g_list_free (copies);
  /* flushing may close one, which changes sess->conns: pointers first */
  for (i = 0, l = NULL; i < n_conns; i++)
    if (touched[i])
      l = g_list_prepend (l, g_ptr_array_index (sess->conns, i));
  for (copies = l; l; l = l->next) {
    MtcpIoResult r;
    if (!server_conn_flush (server, l->data, &r))
      *closed = TRUE;
  }
  g_list_free (copies);
  g_free (t);
  g_free (touched);
  g_free (silent);
  return n;
}

/* server->lock held. Keeps the copies the session's repair budget pays
 * for, oldest first, and frees the rest: hedges and copies ahead of a
 * deadline share one budget, copy_overhead_percent of the stream, so a
 * frame cannot go out on every connection. Their bytes in @paid. */
static GList *
session_pay_for_copies (ServerSession * sess, GList * copies, gsize * paid)
{
  GList *l, *next;

  *paid = 0;
  for (l = copies; l; l = next) {
    MtcpOutFrame *f = l->data;
    next = l->next;
    if (!mtcp_repair_budget_spend (sess->repair, mtcp_out_frame_size (f))) {
      /* over the overhead, or no spare capacity: TCP has to make it */
      mtcp_out_frame_free (f);
      copies = g_list_delete_link (copies, l);
      continue;
    }
    *paid += mtcp_out_frame_size (f);
  }
  return copies;
}

/* The receiver waits behind a hole that has not moved for two of the
 * holding connection's RTTs (200 ms at least): the frame is stuck in TCP
 * retransmissions on that connection, which at a few % loss can take
 * longer than the receiver's latency (RTO backoff). So is every later
 * frame that connection holds (TCP delivers in order): copies of all of
 * them go out at once on the other connections (session_spread_copies),
 * rather than one hole and two RTTs at a time; the receiver drops
 * whichever comes second. Again after as long if a copy is stuck too. */
void
server_hedge_stuck_frame (MtcpServer * server, ServerSession * sess,
    const MtcpFeedback * fb, gint64 now)
{
  guint64 next = sess->acked == MTCP_TIME_NONE ? 0 : sess->acked + 1;
  ServerConn *holder;
  gint64 since, wait;
  guint i, n_copies, n;
  gsize bytes, paid;
  gboolean closed;
  GList *copies;

  if (fb->buffered_bytes == 0)
    return;                     /* no hole: nothing waits behind it */
  since = sess->hedged_seq == next ? sess->hedged_us : sess->acked_us;
  holder = session_holder (sess, next);
  if (holder == NULL) {
    /* frames leave in order, so one after the hole was handed out and the
     * hole should be held somewhere: say so once it has waited long */
    if (now - since >= HEDGE_MIN_WAIT_US)
      GST_DEBUG ("session %s: receiver waits %" G_GINT64_FORMAT " ms for "
          "seq %" G_GUINT64_FORMAT ", which no connection holds", sess->id_str,
          (now - since) / 1000, next);
    return;
  }
  wait = MAX (HEDGE_MIN_WAIT_US, 2 * (gint64) holder->info.rtt_us);
  if (now - since < wait)
    return;
  for (i = 0; i < sess->conns->len; i++)
    if (!mtcp_connection_holds_frame (((ServerConn *)
                g_ptr_array_index (sess->conns, i))->conn, next))
      break;
  if (i == sess->conns->len) {
    GST_DEBUG ("session %s: seq %" G_GUINT64_FORMAT " stuck on connection %u "
        "for %" G_GINT64_FORMAT " ms, and every other one holds it already",
        sess->id_str, next, holder->id, (now - since) / 1000);
    return;
  }
  copies = mtcp_connection_copy_frames_from (holder->conn, next);
  n_copies = g_list_length (copies);
  sess->hedged_seq = next;
  sess->hedged_us = now;
  copies = session_pay_for_copies (sess, copies, &paid);
  if (copies == NULL) {
    GST_DEBUG ("session %s: seq %" G_GUINT64_FORMAT " stuck on connection "
        "%u, no copy budget left", sess->id_str, next, holder->id);
    return;
  }
  n = session_spread_copies (server, sess, holder, copies, &bytes, &closed);
  /* what found no connection */
  mtcp_repair_budget_refund (sess->repair, paid - bytes);
  sess->frames_hedged += n;
  GST_DEBUG ("session %s: seq %" G_GUINT64_FORMAT " stuck on connection %u "
      "for %" G_GINT64_FORMAT " ms: %u of it and the %u after it there again "
      "on other connections (%" G_GSIZE_FORMAT " bytes)", sess->id_str, next,
      holder->id, (now - sess->acked_us) / 1000, n, n_copies - 1, bytes);
}

/* A connection in loss recovery, or that got no ACK for longer than an
 * RTO (without the kernel's floor: a tail loss on a thin connection waits
 * for a probe or a timeout), and whose oldest unacknowledged write is
 * older than that, is stuck on a loss: each
 * frame it holds from there on, once its due time plus latency is one
 * slack plus half an RTT away (the receiver's deadline is a one-way delay
 * later: margin), leaves again on the connections that would deliver it
 * soonest (session_spread_copies). The receiver
 * keeps whichever arrives first. Without the receiver's word, so in time
 * for short budgets; bounded by copy_overhead_percent. */
/* Silent: no ACK for two RTTs and four variations (HEDGE_MIN_WAIT_US at
 * least) with data in flight that went out longer ago than that (a frame
 * written to a connection idle for a while is not silence before its ACK
 * could come; where the connection cannot tell, TLS or only control
 * frames in flight, new data must not have gone out in that time either:
 * TCP sends none while its window hangs on an outage). By the TCP_INFO
 * last read. */
gboolean
server_conn_silent (const ServerConn * sc)
{
  gint64 quiet = MAX (HEDGE_MIN_WAIT_US, 2 * (gint64) sc->info.rtt_us +
      4 * (gint64) sc->info.rttvar_us), since;

  if (sc->info.unacked == 0 ||
      (gint64) sc->info.last_ack_recv_ms * 1000 <= quiet)
    return FALSE;
  since = mtcp_connection_unacked_since (sc->conn, sc->info.bytes_acked);
  if (since == G_MAXINT64)
    return (gint64) sc->info.last_data_sent_ms * 1000 > quiet;
  return g_get_monotonic_time () - since > quiet;
}

/* @holder is silent while another of the session's connections is heard
 * (by their TCP_INFO as last read): a path that went away, not a path
 * that is slow or an outage of every path (copies then only queue). */
gboolean
server_conn_dark (ServerSession * sess, const ServerConn * holder)
{
  guint i;

  if (!server_conn_silent (holder))
    return FALSE;
  for (i = 0; i < sess->conns->len; i++) {
    const ServerConn *other = g_ptr_array_index (sess->conns, i);
    if (other != holder && !server_conn_silent (other) &&
        other->info.rtt_us > 0)
      return TRUE;
  }
  return FALSE;
}

static void
copy_frames_near_deadline (MtcpServer * server, ServerSession * sess,
    gint64 now)
{
  GPtrArray *lists[] = { sess->conns, sess->retiring };
  guint k, i;

  if (sess->latency_us == 0 || server->config.copy_overhead_percent == 0 ||
      sess->conns->len < 2)
    return;
  for (k = 0; k < G_N_ELEMENTS (lists); k++)
    for (i = 0; i < lists[k]->len; i++) {
      ServerConn *holder = g_ptr_array_index (lists[k], i);
      GList *copies, *l;
      gint64 lead, first, stale;
      gsize taken = 0, bytes;
      gboolean closed;
      guint n;

      gboolean dark;

      first = mtcp_connection_first_due (holder->conn);
      if (first == G_MAXINT64 || !mtcp_repair_budget_can_spend (sess->repair))
        continue;
      /* a copy takes the same path: the holder's RTT stands for its */
      lead = DEADLINE_COPY_SLACK_US + holder->info.rtt_us / 2;
      if (first + sess->latency_us - lead <= now ||
          now - holder->watch_read_us >= DARK_READ_PERIOD_US) {
        mtcp_tcp_info_read (mtcp_connection_get_socket (holder->conn),
            &holder->info);
        holder->watch_read_us = now;
        lead = DEADLINE_COPY_SLACK_US + holder->info.rtt_us / 2;
      }
      /* a connection that went dark while others are heard (its modem
       * lost coverage): everything it holds goes to the others now, not
       * frame by frame at each deadline */
      dark = server_conn_dark (sess, holder);
      if (!dark && first + sess->latency_us - lead > now)
        continue;
      /* stuck: repairing a loss, or no ACK (not even a duplicate) for
       * longer than an RTO would be without the kernel's 200 ms floor,
       * and the oldest unacknowledged write older than that: what it
       * holds waits for the repair, or behind the window the loss halved,
       * where a copy on a connection with room does not */
      stale = holder->info.rtt_us + MAX (4 * (gint64) holder->info.rttvar_us,
          STUCK_MIN_VAR_US);
      if (!mtcp_tcp_info_in_loss_recovery (&holder->info) &&
          (gint64) holder->info.last_ack_recv_ms * 1000 < stale)
        continue;
      copies = mtcp_connection_copy_frames_due (holder->conn,
          holder->info.bytes_acked, now - stale, dark ? G_MAXINT64 :
          now - sess->latency_us + lead);
      copies = session_pay_for_copies (sess, copies, &taken);
      for (l = copies; l; l = l->next) {
        MtcpOutFrame *f = l->data;
        GST_LOG ("session %s: seq %" G_GUINT64_FORMAT " due in %"
            G_GINT64_FORMAT " ms, unacknowledged on connection %u: a copy",
            sess->id_str, f->seq, (f->due_us + sess->latency_us - now) / 1000,
            holder->id);
      }
      if (copies == NULL)
        continue;
      n = session_spread_copies (server, sess, holder, copies, &bytes, &closed);
      /* what found no connection */
      mtcp_repair_budget_refund (sess->repair, taken - bytes);
      sess->frames_copied += n;
      sess->bytes_copied += bytes;
      GST_DEBUG ("session %s: %u frames (%" G_GSIZE_FORMAT " bytes) %s "
          "on connection %u (rtt %u ms, %u lost, no ACK for %u ms) copied to "
          "the others", sess->id_str, n, bytes, dark ? "held" :
          "near their deadline", holder->id, holder->info.rtt_us / 1000,
          holder->info.lost, holder->info.last_ack_recv_ms);
      if (closed)
        return;                 /* the lists changed under us */
    }
}

gboolean
server_on_deadline_watch (gpointer data)
{
  MtcpServer *server = data;
  gint64 now = g_get_monotonic_time ();
  GList *l;

  if (!server->running)
    return G_SOURCE_REMOVE;     /* stopping */
  g_mutex_lock (&server->lock);
  for (l = server->sessions; l; l = l->next)
    copy_frames_near_deadline (server, l->data, now);
  server_reap (server);
  server_unlock (server);
  return G_SOURCE_CONTINUE;
}

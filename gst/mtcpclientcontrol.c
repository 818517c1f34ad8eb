/* multitcp
 * Copyright (C) 2026 the multitcp authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

/* The receiver drives the session: applies the count and windows the
 * control policy (mtcpcontrol.c) decides, opening connections or
 * retiring them without loss (listening: asking the sink to dial, WANT);
 * replaces lost ones; and probes a dark path with a new connection each
 * half second while every old one sits in TCP's backed-off
 * retransmissions. */

#include "mtcpclientprivate.h"
#include "mtcptcpinfo.h"
#include "mtcptransit.h"

#include <string.h>

GST_DEBUG_CATEGORY (mtcp_client_control_debug);
#define GST_CAT_DEFAULT mtcp_client_control_debug

/* every ready connection silent this long: probe the path with a new
 * connection, one each mtcp_transit_probe_interval_us (the sink REPORTs
 * every 400 ms at most) */
#define PROBE_AFTER_US (G_USEC_PER_SEC)
/* listener: the count the sink should dial is said again this often */
#define WANT_REPEAT_US G_USEC_PER_SEC

guint
client_count_conns (MtcpClient * client, gboolean ready_only)
{
  GList *l;
  guint n = 0;
  for (l = client->conns; l; l = l->next) {
    ClientConn *cc = l->data;
    if (ready_only ? cc->state == CONN_READY : cc->state != CONN_RETIRING)
      n++;
  }
  return n;
}

/* A refusal can come while the sink still holds connections we closed:
 * the limit it taught lapses, and the dials ask again. */
#define SINK_LIMIT_HOLD_US (10 * G_USEC_PER_SEC)

/* client->lock held. Connections to dial up to: client->wanted, within
 * the sink's max-connections its WELCOME said and the limit its refusals
 * taught while that holds (a dial over either is refused again and
 * again). Retiring goes by client->wanted alone. */
static guint
dial_count (MtcpClient * client, gint64 now)
{
  guint cap = client_dial_cap (client, now);

  return cap ? MIN (client->wanted, cap) : client->wanted;
}

/* client->lock held. The most connections the sink takes, as its WELCOME
 * said and its refusals taught while that holds; 0: no bound known. */
guint
client_dial_cap (MtcpClient * client, gint64 now)
{
  guint cap = client->sink_max_connections;

  if (client->sink_limit && now - client->sink_limit_us >= SINK_LIMIT_HOLD_US)
    client->sink_limit = 0;     /* lapsed: the sink is asked again */
  if (client->sink_limit)
    cap = cap ? MIN (cap, client->sink_limit) : client->sink_limit;
  return cap;
}

/* client->lock held. A join refused for the sink's limit (@refused), or
 * one welcomed while a limit holds: the sink takes at least what the
 * session holds now. */
void
client_note_sink_limit (MtcpClient * client, gboolean refused, gint64 now)
{
  guint had = client->sink_limit;

  if (!refused && had == 0)
    return;
  client->sink_limit = MAX (had, MAX (client_count_conns (client, TRUE), 1));
  if (refused)
    client->sink_limit_us = now;
  if (client->sink_limit != had)
    GST_INFO ("the sink takes %u connections in the session or more: no "
        "more dials for %d s", client->sink_limit,
        (gint) (SINK_LIMIT_HOLD_US / G_USEC_PER_SEC));
}

/* Ask the sink to give this connection nothing more; it closes once the
 * frames it holds are sent, so no buffer is lost or late. */
static void
retire_connection (MtcpClient * client, ClientConn * cc)
{
  guint8 head[MTCP_HEADER_SIZE];
  MtcpOutFrame *f = mtcp_out_frame_new ();

  mtcp_write_header (head, MTCP_FRAME_RETIRE, 0, 0);
  memcpy (f->head, head, MTCP_HEADER_SIZE);
  f->head_size = MTCP_HEADER_SIZE;
  f->type = MTCP_FRAME_RETIRE;
  mtcp_connection_queue (cc->conn, f);
  cc->state = CONN_RETIRING;
  GST_INFO ("retiring connection %u", cc->index);
  if (mtcp_connection_flush (cc->conn, NULL) == MTCP_IO_BLOCKED)
    mtcp_connection_want_write (cc->conn, TRUE);
}

/* How long nothing arrived on @cc (since it was opened, if ever). */
gint64
client_conn_silence (ClientConn * cc, gint64 now)
{
  return now - MAX (cc->heard_us, mtcp_connection_get_created_us (cc->conn));
}

/* client->lock held. Ready connections heard within HEARING_GAP_US. */
static guint
count_heard (MtcpClient * client, gint64 now)
{
  GList *l;
  guint n = 0;

  for (l = client->conns; l; l = l->next) {
    ClientConn *cc = l->data;
    n += cc->state == CONN_READY
        && client_conn_silence (cc, now) <= HEARING_GAP_US;
  }
  return n;
}

/* client->lock held. Listening, the sink dials: tell it how many
 * connections the session should have when that changed, and again every
 * WANT_REPEAT_US (a WANT lost with its connection). */
void
client_tell_want (MtcpClient * client, gint64 now)
{
  ClientConn *carrier;
  MtcpOutFrame *f;
  MtcpWant want;
  gboolean changed;
  guint p;

  if (client->connector == NULL)
    return;
  memset (&want, 0, sizeof (want));
  want.connections = CLAMP (dial_count (client, now), 1, G_MAXUINT16);
  /* the sink's uplinks: how many on each */
  if (client->n_paths > 1) {
    want.n_paths = MIN (client->n_paths, MTCP_MAX_PATHS);
    for (p = 0; p < want.n_paths; p++)
      want.per_path[p] = CLAMP (client->path_want[p], 1, G_MAXUINT16);
  }
  changed = want.connections != client->want_told;
  for (p = 0; p < MTCP_MAX_PATHS; p++) {
    guint w = p < want.n_paths ? want.per_path[p] : 0;
    changed |= w != client->path_want_told[p];
  }
  if (!changed && now - client->want_told_us < WANT_REPEAT_US)
    return;
  carrier = client_feedback_carrier (client);
  if (carrier == NULL)
    return;
  f = mtcp_out_frame_new ();
  f->type = MTCP_FRAME_WANT;
  f->head_size = mtcp_write_want (f->head, sizeof (f->head_inline), &want);
  mtcp_connection_queue (carrier->conn, f);
  if (changed)
    GST_INFO ("asking the sink for %u connections (over %u paths)",
        want.connections, want.n_paths);
  client->want_told = want.connections;
  for (p = 0; p < MTCP_MAX_PATHS; p++)
    client->path_want_told[p] = p < want.n_paths ? want.per_path[p] : 0;
  client->want_told_us = now;
  /* written with the next flush of the carrier (this tick's, or the
   * caller's before a RETIRE) */
  if (mtcp_connection_flush (carrier->conn, NULL) == MTCP_IO_BLOCKED)
    mtcp_connection_want_write (carrier->conn, TRUE);
}

/* client->lock held. The newest connection this receiver dialed that is
 * not ready yet (on @path; -1: any), NULL: none. Not a probe (its own
 * rule replaces it) nor the one opening a fresh session. */
static ClientConn *
newest_pending_dial (MtcpClient * client, gint path)
{
  ClientConn *newest = NULL;
  GList *l;

  /* listening: the sink dials, and its calls are the sink's to make */
  if (client->connector)
    return NULL;
  for (l = client->conns; l; l = l->next) {
    ClientConn *cc = l->data;

    if ((cc->state != CONN_CONNECTING && cc->state != CONN_HANDSHAKE) ||
        cc->probe || cc->fresh || (path >= 0 && cc->path != (guint) path))
      continue;
    if (newest == NULL || mtcp_connection_get_created_us (cc->conn) >
        mtcp_connection_get_created_us (newest->conn))
      newest = cc;
  }
  return newest;
}

/* client->lock held. Closes a dial the count no longer wants: asked for,
 * so neither a lost connection nor a failed try. */
static void
drop_pending_dial (MtcpClient * client, ClientConn * cc)
{
  GST_INFO ("connection %u, still %s, is no longer wanted", cc->index,
      cc->state == CONN_CONNECTING ? "connecting" : "in its handshake");
  client->dials_dropped++;
  cc->state = CONN_RETIRING;
  client_close_conn (client, cc, "no longer wanted: the count fell before "
      "it was ready");
}

/* client->lock held. How many active (not retiring) connections each
 * path has, into @count; returns the number of paths (0: none). */
static guint
count_per_path (MtcpClient * client, guint * count)
{
  guint n = MIN (client->n_paths, MTCP_MAX_PATHS);
  GList *l;

  memset (count, 0, MTCP_MAX_PATHS * sizeof (guint));
  if (n < 2)
    return 0;
  for (l = client->conns; l; l = l->next) {
    ClientConn *cc = l->data;
    if (cc->state != CONN_RETIRING && cc->path < n)
      count[cc->path]++;
  }
  return n;
}

void
client_measure_paths (MtcpClient * client, gint64 now)
{
  guint n = MIN (client->n_paths, MTCP_MAX_PATHS), p;
  gdouble dt;

  if (n < 2)
    return;
  if (client->path_rate_us == 0) {
    client->path_rate_us = now;
    memcpy (client->path_bytes_mark, client->path_bytes,
        sizeof (client->path_bytes));
  }
  dt = (now - client->path_rate_us) / 1e6;
  if (dt >= 1.0) {
    for (p = 0; p < n; p++) {
      gdouble rate = (client->path_bytes[p] - client->path_bytes_mark[p]) /
          dt;
      client->path_rate[p] = 0.5 * client->path_rate[p] + 0.5 * rate;
      client->path_bytes_mark[p] = client->path_bytes[p];
    }
    client->path_rate_us = now;
  }
  mtcp_control_split (client->wanted, n, client->path_rate,
      client->path_want);
}

gint
client_path_to_open (MtcpClient * client)
{
  guint count[MTCP_MAX_PATHS], n, p, best = 0;
  gint best_gap = G_MININT;
  GList *l;

  if (client->locals == NULL)
    return -1;
  n = MIN (client->locals->len, MTCP_MAX_PATHS);
  memset (count, 0, sizeof (count));
  for (l = client->conns; l; l = l->next) {
    ClientConn *cc = l->data;
    if (cc->state != CONN_RETIRING && cc->local >= 0 && cc->local < (gint) n)
      count[cc->local]++;
  }
  /* the most short of its share, then the least used */
  for (p = 0; p < n; p++) {
    gint gap = (gint) client->path_want[p] - (gint) count[p];
    if (gap > best_gap || (gap == best_gap && count[p] < count[best])) {
      best_gap = gap;
      best = p;
    }
  }
  return best;
}

/* Open or retire connections until the session has client->wanted
 * (listening: ask the sink to dial them, before any RETIRE, so that it
 * does not dial again what a RETIRE closes). */
static void
apply_connection_count (MtcpClient * client)
{
  guint active = client_count_conns (client, FALSE);
  guint to_dial = dial_count (client, g_get_monotonic_time ());

  /* what the sink takes, over the paths */
  if (client->n_paths > 1)
    mtcp_control_split (to_dial, MIN (client->n_paths,
            MTCP_MAX_PATHS), client->path_rate, client->path_want);
  client_tell_want (client, g_get_monotonic_time ());

  while (active < to_dial) {
    client_open_connection (client);
    active++;
  }
  while (active > client->wanted) {
    GList *l;
    ClientConn *victim = NULL, *silent = NULL;
    gint64 now = g_get_monotonic_time ();
    guint count[MTCP_MAX_PATHS], n_paths = count_per_path (client, count);
    gint over = -1, most = 0;
    guint p;

    /* over paths: from the one furthest over its share (of those alike,
     * one with a dial on its way), and never a path's last connection (a
     * modem given up cannot come back) */
    for (p = 0; p < n_paths; p++) {
      gint surplus = (gint) count[p] - (gint) MAX (client->path_want[p], 1);
      if (count[p] > 1 && (over < 0 || surplus > most || (surplus == most &&
                  newest_pending_dial (client, p) != NULL &&
                  newest_pending_dial (client, over) == NULL))) {
        over = p;
        most = surplus;
      }
    }
    /* the newest ready one: the first connection stays */
    for (l = client->conns; l; l = l->next) {
      ClientConn *cc = l->data;
      if (cc->state != CONN_READY)
        continue;
      if (n_paths > 0 && (over < 0 || cc->path != (guint) over))
        continue;
      if (l != client->conns)
        victim = cc;
      if (client_conn_silence (cc, now) > HEARING_GAP_US &&
          (silent == NULL || cc->heard_us < silent->heard_us))
        silent = cc;
    }
    /* but one silent while others are heard first (after an outage, stuck
     * in TCP's backed-off retransmissions while a probe carries the
     * stream); else a dial still on its way: a ready one carries frames
     * and has its window open (a trial given back, a count that fell) */
    if (silent && count_heard (client, now) > 0) {
      victim = silent;
    } else if (n_paths == 0 || over >= 0) {
      ClientConn *dial = newest_pending_dial (client, n_paths > 0 ? over : -1);
      if (dial) {
        drop_pending_dial (client, dial);
        active--;
        continue;
      }
    }
    if (victim == NULL)
      break;
    retire_connection (client, victim);
    active--;
  }
}

gboolean
client_open_more_connections (gpointer data)
{
  MtcpClient *client = data;

  if (!client->running)
    return G_SOURCE_REMOVE;     /* stopping */
  g_mutex_lock (&client->lock);
  client->wanted = mtcp_control_start (client->control);
  apply_connection_count (client);
  client_unlock (client);
  return G_SOURCE_REMOVE;
}

static gboolean
apply_connection_count_cb (gpointer data)
{
  MtcpClient *client = data;

  if (!client->running)
    return G_SOURCE_REMOVE;     /* stopping */
  g_mutex_lock (&client->lock);
  apply_connection_count (client);
  client_unlock (client);
  return G_SOURCE_REMOVE;
}

void
mtcp_client_set_connections (MtcpClient * client, guint connections)
{
  g_mutex_lock (&client->lock);
  client->config.connections = connections;
  if (mtcp_control_set_connections (client->control, connections) &&
      client->running) {
    client->wanted = mtcp_control_wanted (client->control);
    client->sink_limit = 0;     /* the user asks: the sink is asked again */
    /* sockets and their sources belong to the I/O thread: it does the work;
     * high priority, or a busy stream would starve it */
    mtcp_io_thread_add_idle (&client->io, G_PRIORITY_HIGH,
        apply_connection_count_cb, client);
  }
  g_mutex_unlock (&client->lock);
}

/* Between controller decisions: replace lost connections (paced by the
 * backoff, one at a time; a fresh session first if the sink forgot ours)
 * and retire extra ones that became ready since the count went down. */
void
client_keep_connection_count (MtcpClient * client, gint64 now)
{
  guint active = client_count_conns (client, FALSE);

  if (!client->running || client->gave_up)
    return;
  if (client->connector) {
    /* listening: the sink dials what is missing */
    client_tell_want (client, now);
    if (active > client->wanted)
      apply_connection_count (client);
    return;
  }
  if (active < dial_count (client, now) && now >= client->next_open_us) {
    /* while a fresh session is being opened, the others wait for its id */
    gboolean opening_fresh = FALSE;
    GList *l;
    for (l = client->conns; l; l = l->next)
      opening_fresh |= ((ClientConn *) l->data)->fresh;
    if (!opening_fresh && (!client->session_gone || active == 0)) {
      client->reconnects++;
      client_open_connection (client);
      /* one at a time while failing, all at once while things work */
      if (client->failures > 0)
        client->next_open_us = now + 100000;
    }
  } else if (active > client->wanted) {
    apply_connection_count (client);
  }
}

/* client->lock held. What the control policy sees of the connections. */
MtcpControlConn *
client_control_snapshot (MtcpClient * client, gint64 now,
    MtcpControlSnapshot * snap)
{
  MtcpControlConn *conns = g_new0 (MtcpControlConn,
      g_list_length (client->conns) + 1);
  GList *l;
  guint n = 0;

  for (l = client->conns; l; l = l->next) {
    ClientConn *cc = l->data;
    MtcpControlConn *c = &conns[n++];
    c->ready = cc->state == CONN_READY;
    c->reported = cc->report_us != 0;
    if (!c->reported)
      continue;
    c->rtt_us = cc->report.rtt_us;
    c->mss = cc->report.snd_mss;
    c->total_retrans = cc->report.total_retrans;
    c->recovered_retrans = cc->first_recovery.retrans;
    c->recovered_acked = cc->first_recovery.acked;
    c->bytes_acked = cc->report.bytes_acked;
    c->stream_bitrate = cc->report.stream_bitrate;
    c->rate_ignores_loss = (cc->report.flags &
        MTCP_REPORT_RATE_IGNORES_LOSS) != 0;
    c->report_us = cc->report_us;
    c->paced = (cc->report.flags & MTCP_REPORT_PACED) != 0;
    c->paced_low = (cc->report.flags & MTCP_REPORT_PACED_LOW) != 0;
    c->paced_held = (cc->report.flags & MTCP_REPORT_PACED_HELD) != 0;
  }
  snap->now_us = now;
  snap->payload_bytes = client->payload_received;
  snap->active = client_count_conns (client, FALSE);
  snap->conns = conns;
  snap->n_conns = n;
  snap->dial_cap = client_dial_cap (client, now);
  return conns;
}

/* client->lock held. The control policy's decisions, applied: the count
 * first, then the windows of the connections ready after it
 * (VariedConnVariedWinSize, Alg. 3). */
void
client_controller_tick (MtcpClient * client, gint64 now)
{
  MtcpControlSnapshot snap;
  MtcpControlConn *conns = client_control_snapshot (client, now, &snap);
  const guint *windows;
  guint n_windows, i = 0;
  GList *l;

  if (mtcp_control_tick (client->control, &snap)) {
    client->wanted = mtcp_control_wanted (client->control);
    apply_connection_count (client);
  }
  g_free (conns);
  windows = mtcp_control_windows (client->control,
      client_count_conns (client, TRUE), &n_windows);
  for (l = client->conns; l && windows && i < n_windows; l = l->next) {
    ClientConn *cc = l->data;
    if (cc->state != CONN_READY)
      continue;
    cc->window_bytes = windows[i++];
    mtcp_tcp_set_window_clamp (mtcp_connection_get_socket (cc->conn),
        cc->window_bytes);
  }
}

/* client->lock held. Every ready connection silent for PROBE_AFTER_US: the
 * path is (or was) dark. After an outage TCP's retransmission timers,
 * backed off during it, keep the old connections silent for seconds more;
 * a new connection every mtcp_transit_probe_interval_us, its SYN on a
 * fresh timer, is the first through when the path returns. The sink puts
 * the stream on it at once (the others are blocked), and the count goes
 * back down by retiring the silent ones. One probe at a time; one that got
 * no answer in that interval makes way for the next (not a failure). */
void
client_probe_dark_path (MtcpClient * client, gint64 now)
{
  ClientConn *pending = NULL, *probe;
  guint ready = 0;
  guint32 least_rtt = 0;
  GList *l;

  /* listening, the sink dials: its own new calls find the path back */
  if (!client->running || client->gave_up || client->session_gone ||
      client->connector)
    return;
  for (l = client->conns; l; l = l->next) {
    ClientConn *cc = l->data;
    if (cc->state == CONN_READY) {
      ready++;
      if (client_conn_silence (cc, now) <= PROBE_AFTER_US)
        return;                 /* the path works */
    } else if (cc->state == CONN_CONNECTING || cc->state == CONN_HANDSHAKE) {
      if (!cc->probe || cc->state == CONN_HANDSHAKE)
        return;                 /* one on its way already */
      pending = cc;
    }
  }
  if (ready == 0 || now < client->next_probe_us)
    return;
  for (l = client->conns; l; l = l->next) {
    ClientConn *cc = l->data;
    MtcpTcpInfo info;
    /* G_MAXUINT32: no sample yet */
    if (cc->state == CONN_READY && mtcp_tcp_info_read
        (mtcp_connection_get_socket (cc->conn), &info) &&
        info.min_rtt_us > 0 && info.min_rtt_us != G_MAXUINT32 &&
        (least_rtt == 0 || info.min_rtt_us < least_rtt))
      least_rtt = info.min_rtt_us;
  }
  if (pending)
    client_close_conn (client, pending, "outage probe: no answer yet");
  probe = client_open_connection (client);
  client->next_probe_us = now + mtcp_transit_probe_interval_us (least_rtt);
  if (probe == NULL)
    return;
  probe->probe = TRUE;
  client->outage_probes++;
  GST_INFO ("no connection heard from the sink for %" G_GINT64_FORMAT
      " ms: probing the path with connection %u",
      (gint64) PROBE_AFTER_US / 1000, probe->index);
}

/* multitcp
 * Copyright (C) 2026 the multitcp authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

/* Caller mode at the sink: dial the listening receiver until its session
 * has the connections it asked for (WANT), with backoff while dials fail
 * and a give-up after `retry`, and one more dial a second while nothing
 * is heard (an outage: a new SYN finds the path back first). */

#include "mtcpserverprivate.h"
#include "mtcpconnector.h"

#include <string.h>

GST_DEBUG_CATEGORY (mtcp_server_dial_debug);
#define GST_CAT_DEFAULT mtcp_server_dial_debug

/* dialing the receiver failed: the next try after this, doubling (with
 * jitter) up to the most */
#define DIAL_BACKOFF_MIN_MS 100
#define DIAL_BACKOFF_MAX_MS 5000
/* dials in progress at once */
#define DIALS_AT_ONCE 4
/* caller: nothing heard on any connection this long is an outage; one
 * more connection is dialed each PROBE_INTERVAL_US while it lasts (the
 * old ones sit in TCP's backed-off retransmissions when the path comes
 * back, a new SYN is on a fresh timer); the receiver retires the silent
 * ones once the probe carries the stream */
#define PROBE_AFTER_US (1500 * G_TIME_SPAN_MILLISECOND)
#define PROBE_INTERVAL_US G_USEC_PER_SEC

/* server->lock held. A dial from @path failed, or a connection dialed
 * from it closed before the receiver took it: that uplink's next dial
 * waits, doubling; once every uplink failed `retry` times in a row the
 * sink gives up (an error on the bus). */
void
server_note_dial_failure (MtcpServer * server, guint path,
    const GError * error, const gchar * why)
{
  ServerPath *p = &server->paths[MIN (path, server->n_paths - 1)];
  gint64 backoff_ms;
  gboolean all_failed = TRUE;
  guint i;

  server->dial_failures++;
  p->failures++;
  p->dial_failures++;
  server_note_caller_full (server, MTCP_CALLER_DIAL_FAILED, NULL,
      mtcp_connector_get_address (server->connector), why,
      mtcp_caller_failure_kind (error, why), p->failures);
  for (i = 0; i < server->n_paths; i++)
    all_failed &= server->paths[i].failures > server->config.retry;
  if (all_failed && !server->gave_up) {
    server->gave_up = TRUE;
    server->gave_up_reason = g_strdup_printf ("could not reach the receiver "
        "at %s: %u attempts failed in a row, the last: %s",
        mtcp_connector_describe (server->connector), server->dial_failures,
        why);
    /* a render waiting for a receiver ends with the error */
    g_cond_broadcast (&server->cond);
    server_warn (server, "%s", server->gave_up_reason);
    return;
  }
  /* jitter first, then the cap: never longer than the most */
  backoff_ms = ((gint64) DIAL_BACKOFF_MIN_MS << MIN (p->failures - 1, 6)) *
      g_random_double_range (0.75, 1.25);
  backoff_ms = MIN (backoff_ms, DIAL_BACKOFF_MAX_MS);
  /* no answer within handshake-timeout, a fresh SYN each half second
   * (mtcpconnector.c): a dark uplink, not a receiver turning us away;
   * the next dial at once, or a return is missed, yet dials still start
   * DIAL_BACKOFF_MAX_MS apart, so that `retry` lasts as long as it says */
  if (error && g_error_matches (error, G_IO_ERROR, G_IO_ERROR_TIMED_OUT))
    backoff_ms = MAX ((gint64) DIAL_BACKOFF_MIN_MS, (gint64)
        DIAL_BACKOFF_MAX_MS - (gint64) server->config.handshake_timeout_ms);
  p->next_dial_us = g_get_monotonic_time () + backoff_ms * 1000;
  /* the session's first call goes out on the next uplink */
  if (path == server->opener)
    server->opener = (server->opener + 1) % server->n_paths;
  GST_INFO ("dialing %s from %s failed (%u in a row: %s): next try in %"
      G_GINT64_FORMAT " ms", mtcp_connector_describe (server->connector),
      mtcp_connector_uplink_name (server->connector, path), p->failures, why,
      backoff_ms);
}

void
server_note_dial_success (MtcpServer * server, guint path)
{
  server->dial_failures = 0;
  server->paths[MIN (path, server->n_paths - 1)].failures = 0;
}

/* The I/O thread, no lock held: accept () ran out of descriptors (the
 * listener rests), or a dial failed. */
void
server_on_connect_failed (const GError * error, gboolean exhausted,
    guint backoff_ms, guint uplink, gpointer user_data)
{
  MtcpServer *server = user_data;

  g_mutex_lock (&server->lock);
  if (exhausted) {
    server->accept_errors++;
    server_warn (server, "cannot accept connections (%s): trying again in %u "
        "ms", error->message, backoff_ms);
  } else {
    server_note_dial_failure (server, uplink, error, error->message);
  }
  server_unlock (server);
}

/* server->lock held. Caller: the receiver's session, the one with the most
 * connections. */
static ServerSession *
dialed_session (MtcpServer * server)
{
  ServerSession *best = NULL;
  GList *l;

  /* one left behind by a receiver that restarted keeps no connection */
  for (l = server->sessions; l; l = l->next) {
    ServerSession *sess = l->data;
    if (!sess->ended && (best == NULL || sess->conns->len > best->conns->len))
      best = sess;
  }
  return best;
}

/* server->lock held. How many connections each uplink should have: the
 * receiver's counts when it said them per path, else what it wants in all
 * spread evenly; at least one per uplink either way (a modem without a
 * connection is not known to be back). Before the session has a
 * connection, only its first call, on one uplink. */
static void
path_wants (MtcpServer * server, ServerSession * sess, guint * want)
{
  guint n = server->n_paths, total, p;
  guint most = MAX (server->config.max_connections, 1);
  gboolean said = FALSE;

  memset (want, 0, n * sizeof (guint));
  if (sess == NULL || sess->conns->len == 0) {
    want[server->opener] = 1;
    return;
  }
  for (p = 0; p < n; p++)
    said |= server->paths[p].want > 0;
  total = MIN (MAX (server->dial_wanted, 1), most);
  for (p = 0; p < n; p++)
    want[p] = said ? MIN (MAX (server->paths[p].want, 1), most) :
        MAX (total / n + (p < total % n), 1);
}

/* server->lock held, I/O thread. Caller: dial from each uplink until it
 * has as many connections as path_wants says, counting handshakes and
 * dials under way, paced by that uplink's backoff while its dials fail;
 * and while an uplink's connections hear nothing (an outage of that
 * modem), one more dial from it a second. */
void
server_keep_dialing (MtcpServer * server, gint64 now)
{
  ServerSession *sess;
  guint want[MTCP_MAX_UPLINKS], have[MTCP_MAX_UPLINKS] = { 0, };
  guint ready[MTCP_MAX_UPLINKS] = { 0, };
  gint64 heard[MTCP_MAX_UPLINKS] = { 0, };
  guint busy[MTCP_MAX_UPLINKS] = { 0, };
  guint p, i, n = 0, total = 0;
  GList *l;

  if (!server->config.caller || !server->running || server->gave_up ||
      server->flushing)
    return;
  sess = dialed_session (server);
  for (l = server->conns; l; l = l->next) {
    ServerConn *sc = l->data;
    if (sc->pending) {
      have[sc->path]++;
      busy[sc->path]++;
    }
  }
  for (p = 0; p < server->n_paths; p++) {
    guint dialing = mtcp_connector_dialing (server->connector, p);
    have[p] += dialing;
    busy[p] += dialing;
  }
  for (i = 0; sess && i < sess->conns->len; i++) {
    ServerConn *sc = g_ptr_array_index (sess->conns, i);
    have[sc->path]++;
    ready[sc->path]++;
    heard[sc->path] = MAX (heard[sc->path], MAX (sc->feedback_us,
            sc->accepted_us));
  }
  for (p = 0; p < server->n_paths; p++)
    total += have[p];
  path_wants (server, sess, want);
  for (p = 0; p < server->n_paths; p++) {
    ServerPath *path = &server->paths[p];

    if (now < path->next_dial_us)
      continue;
    if (ready[p] > 0 && have[p] >= want[p] && busy[p] == 0 &&
        now >= path->next_probe_us && now - heard[p] > PROBE_AFTER_US &&
        total < server->config.max_connections) {
      /* its connections sit in TCP's backed-off retransmissions: a new
       * SYN is the first through when the modem comes back */
      path->next_probe_us = now + PROBE_INTERVAL_US;
      path->outage_probes++;
      server->outage_probes++;
      GST_INFO ("nothing heard from the receiver on %s for %" G_GINT64_FORMAT
          " ms: dialing one more connection to find the path back",
          mtcp_connector_uplink_name (server->connector, p),
          (now - heard[p]) / 1000);
      path->dials++;
      server->dials++;
      total++;
      n++;
      mtcp_connector_dial (server->connector, p);
      continue;
    }
    for (; have[p] < want[p] && n < DIALS_AT_ONCE; n++, have[p]++, total++) {
      path->dials++;
      server->dials++;
      mtcp_connector_dial (server->connector, p);
      /* one at a time while failing, all at once while things work */
      if (path->failures > 0)
        break;
    }
  }
}

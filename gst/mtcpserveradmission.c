/* multitcp
 * Copyright (C) 2026 the multitcp authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

/* Admission at the sink: a new TCP connection (accepted, or dialed in
 * caller mode) waits for HELLO within limits on pending handshakes and
 * open connections; the stream id, the passphrase's CHALLENGE and AUTH,
 * then a session to join or a new one (within max-sessions, evicting the
 * longest orphaned), or a REFUSE with the reason. */

#include "mtcpserverprivate.h"
#include "mtcptcpinfo.h"
#include "mtcpauth.h"
#include "mtcptransit.h"

#include <errno.h>
#include <string.h>
#include <sys/random.h>

GST_DEBUG_CATEGORY (mtcp_server_admission_debug);
#define GST_CAT_DEFAULT mtcp_server_admission_debug

/* server->lock held. What a live session may start with: the latest
 * keyframe and what follows it only if its first connection, in slow
 * start, carries that within the receiver's latency; otherwise the next
 * keyframe (after a lost SYN-ACK the window is 1 segment: at 200 ms RTT
 * and 1 s of latency 45 kB, not the 1 MB an 8 Mbit/s stream queued). */
static guint64
join_backlog (MtcpServer * server, ServerConn * sc, const MtcpHello * hello)
{
  MtcpTcpInfo info;
  guint64 bytes;

  if (!server->live || hello->latency_ms == 0 ||
      !mtcp_tcp_info_read (mtcp_connection_get_socket (sc->conn), &info))
    return G_MAXUINT64;
  bytes = mtcp_transit_slow_start_bytes (&info,
      (gint64) hello->latency_ms * 1000);
  GST_DEBUG ("connection from %s: a backlog of up to %" G_GUINT64_FORMAT
      " bytes (window %u x %u, RTT %u us)", mtcp_connection_get_peer
      (sc->conn), bytes, info.snd_cwnd, info.snd_mss, info.rtt_us);
  return bytes;
}

/* server->lock held. NULL when the kernel gives no random bytes: a
 * session id anyone could guess would let strangers join it. */
static ServerSession *
session_new (MtcpServer * server, guint64 join_backlog)
{
  ServerSession *sess = g_new0 (ServerSession, 1);
  gssize got;

  do
    got = getrandom (sess->id, sizeof (sess->id), 0);
  while (got < 0 && errno == EINTR);
  if (got != sizeof (sess->id)) {
    GST_ERROR ("no random bytes for a session id: %s", g_strerror (errno));
    g_free (sess);
    return NULL;
  }
  sess->id_str = mtcp_session_id_to_string (sess->id);
  sess->qs = mtcp_send_queue_add_session_within (server->queue,
      join_backlog);
  sess->repair = mtcp_repair_budget_new (server->config.copy_overhead_percent);
  sess->estimate = mtcp_rate_estimate_new ();
  sess->probe = mtcp_rate_probe_new ();
  sess->conns = g_ptr_array_new ();
  sess->retiring = g_ptr_array_new ();
  sess->created_us = g_get_monotonic_time ();
  sess->acked = MTCP_TIME_NONE;
  sess->acked_us = sess->created_us;
  sess->hedged_seq = MTCP_TIME_NONE;
  server->sessions = g_list_append (server->sessions, sess);
  GST_INFO ("new session %s", sess->id_str);
  return sess;
}

void
server_session_free (MtcpServer * server, ServerSession * sess)
{
  MtcpQueueSessionStats qst;

  GST_INFO ("session %s ends", sess->id_str);
  server_note_caller (server, MTCP_CALLER_REMOVED, sess->id_str,
      sess->peer_address, NULL);
  server->sessions = g_list_remove (server->sessions, sess);
  mtcp_send_queue_session_stats (server->queue, sess->qs, &qst);
  server->skips_ended += qst.skips;
  mtcp_send_queue_remove_session (server->queue, sess->qs);
  mtcp_repair_budget_free (sess->repair);
  mtcp_rate_estimate_free (sess->estimate);
  mtcp_rate_probe_free (sess->probe);
  mtcp_burst_free (sess->burst);
  g_ptr_array_unref (sess->conns);
  g_ptr_array_unref (sess->retiring);
  g_clear_object (&sess->peer_address);
  g_free (sess->id_str);
  g_free (sess);
}

static ServerSession *
session_find (MtcpServer * server, const guint8 * id)
{
  GList *l;
  for (l = server->sessions; l; l = l->next) {
    ServerSession *sess = l->data;
    /* in constant time: how far a guess matched must not show */
    if (mtcp_bytes_equal_ct (sess->id, id, MTCP_SESSION_ID_SIZE))
      return sess;
  }
  return NULL;
}

void
server_refuse (MtcpServer * server, ServerConn * sc, MtcpRefuseCode code,
    const gchar * reason)
{
  MtcpIoResult r;

  server->refused++;
  server_warn (server, "refusing connection from %s: %s",
      mtcp_connection_get_peer (sc->conn), reason);
  {
    GSocketAddress *addr =
        g_socket_get_remote_address (mtcp_connection_get_socket (sc->conn),
        NULL);
    server_note_caller (server, MTCP_CALLER_REJECTED, NULL, addr, reason);
    g_clear_object (&addr);
  }
  mtcp_connection_queue (sc->conn, mtcp_out_frame_new_refuse (code, reason));
  /* best effort: the peer may already be gone */
  r = mtcp_connection_flush (sc->conn, NULL);
  (void) r;
  server_close_conn (server, sc, reason);
}

static void
apply_socket_options (MtcpServer * server, ServerConn * sc)
{
  GError *err = NULL;

  mtcp_tcp_set_nodelay (mtcp_connection_get_socket (sc->conn), TRUE);
  if (server->config.notsent_lowat > 0 && mtcp_tcp_set_notsent_lowat
      (mtcp_connection_get_socket (sc->conn), server->config.notsent_lowat))
    sc->lowat = server->config.notsent_lowat;
  if (!mtcp_tcp_set_congestion (mtcp_connection_get_socket (sc->conn),
          server->config.congestion_control, &err)) {
    if (server->config.congestion_control_optional)
      GST_INFO ("%s: the system's default instead", err->message);
    else
      server_warn (server, "%s", err->message);
    g_clear_error (&err);
  }
  sc->congestion =
      mtcp_tcp_get_congestion (mtcp_connection_get_socket (sc->conn));
  if (server->config.pacing
      && !mtcp_tcp_set_pacing (mtcp_connection_get_socket (sc->conn)))
    server_warn (server,
        "could not turn on TCP pacing (SO_MAX_PACING_RATE): " "%s",
        g_strerror (errno));
}

/* No lock needed. FALSE with @error when the kernel has no randomness:
 * a guessable nonce or salt would void the passphrase, so no fallback. */
static gboolean
random_bytes (guint8 * out, gsize n, GError ** error)
{
  return mtcp_random_bytes (out, n, error);
}

/* server->lock held. At the session limit, the session that has been
 * without a connection longest makes room for a new receiver: otherwise
 * anyone could fill every slot for session-timeout with a HELLO and a
 * close each. */
static void
session_evict_orphan (MtcpServer * server)
{
  ServerSession *oldest = NULL;
  GList *l;

  for (l = server->sessions; l; l = l->next) {
    ServerSession *sess = l->data;
    gboolean never_acked, oldest_never_acked;
    if (sess->ended || sess->orphaned_us == 0)
      continue;
    /* first one whose receiver never acknowledged a frame (a HELLO and a
     * close, not a receiver waiting out an outage), then the oldest */
    never_acked = sess->acked == MTCP_TIME_NONE;
    oldest_never_acked = oldest && oldest->acked == MTCP_TIME_NONE;
    if (oldest == NULL || (never_acked && !oldest_never_acked) ||
        (never_acked == oldest_never_acked &&
            sess->orphaned_us < oldest->orphaned_us))
      oldest = sess;
  }
  if (oldest == NULL)
    return;
  GST_INFO ("session %s, without a connection for %" G_GINT64_FORMAT " ms, "
      "makes room for a new one", oldest->id_str,
      (g_get_monotonic_time () - oldest->orphaned_us) / 1000);
  server_session_free (server, oldest);
}

/* server->lock held; released while the application decides (the I/O
 * thread alone closes connections, so @sc is still there after). A
 * listener's new receiver that the application turns away is refused.
 * Returns FALSE if the connection was closed. */
static gboolean
caller_accepted (MtcpServer * server, ServerConn * sc, const MtcpHello * hello)
{
  GSocketAddress *addr;
  gchar *stream_id;
  gboolean ok;

  if (server->accept == NULL || server->config.caller)
    return TRUE;
  addr =
      g_socket_get_remote_address (mtcp_connection_get_socket (sc->conn), NULL);
  stream_id = g_strdup (hello->stream_id);
  g_mutex_unlock (&server->lock);
  ok = server->accept (addr, stream_id, server->accept_data);
  g_mutex_lock (&server->lock);
  g_clear_object (&addr);
  g_free (stream_id);
  if (sc->conn == NULL)
    return FALSE;
  if (!ok) {
    GST_INFO ("the application turned %s away",
        mtcp_connection_get_peer (sc->conn));
    server_refuse (server, sc, MTCP_REFUSE_REJECTED,
        "the sink's " "application turned the receiver away");
    return FALSE;
  }
  return TRUE;
}

/* The connection proved itself (or nothing was asked): into a session.
 * Returns FALSE if the connection was closed. */
static gboolean
admit (MtcpServer * server, ServerConn * sc, const MtcpHello * hello)
{
  MtcpWelcome welcome;
  ServerSession *sess;

  memset (&welcome, 0, sizeof (welcome));
  if (hello->flags & MTCP_HELLO_FLAG_JOIN) {
    sess = session_find (server, hello->session_id);
    if (sess == NULL) {
      server_refuse (server, sc, MTCP_REFUSE_UNKNOWN_SESSION,
          "unknown session id (the session ended or never existed)");
      return FALSE;
    }
    if (sess->conns->len >= server->config.max_connections) {
      gchar *reason = g_strdup_printf ("session already has %u connections, "
          "the limit", sess->conns->len);
      server_refuse (server, sc, MTCP_REFUSE_LIMIT, reason);
      g_free (reason);
      return FALSE;
    }
  } else {
    if (!caller_accepted (server, sc, hello))
      return FALSE;
    if (g_list_length (server->sessions) >= server->config.max_sessions)
      session_evict_orphan (server);
    if (g_list_length (server->sessions) >= server->config.max_sessions) {
      gchar *reason = g_strdup_printf ("the sink serves %u sessions, "
          "its limit", server->config.max_sessions);
      server_refuse (server, sc, MTCP_REFUSE_LIMIT, reason);
      g_free (reason);
      return FALSE;
    }
    sess = session_new (server, join_backlog (server, sc, hello));
    if (sess == NULL) {
      server_refuse (server, sc, MTCP_REFUSE_LIMIT, "the sink has no random "
          "bytes for a session id");
      return FALSE;
    }
    sess->peer_address =
        g_socket_get_remote_address (mtcp_connection_get_socket (sc->conn),
        NULL);
    server_note_caller (server, MTCP_CALLER_ADDED, sess->id_str,
        sess->peer_address, NULL);
  }
  sess->latency_us = (gint64) hello->latency_ms * 1000;
  if (hello->latency_ms > 0) {
    /* what waits longer than the receiver's latency can only arrive late:
     * better skip to a keyframe than deliver nothing on time */
    mtcp_send_queue_session_set_max_lag (server->queue, sess->qs,
        (GstClockTime) hello->latency_ms * GST_MSECOND);
  }

  sc->session = sess;
  if (sc->pending) {
    sc->pending = FALSE;
    server->pending_handshakes--;
  }
  /* admitted: a receiver sends FEEDBACK and RETIRE, nothing large */
  mtcp_connection_set_max_body (sc->conn, MTCP_MAX_RECEIVER_BODY);
  sc->id = sess->next_conn_id++;
  g_ptr_array_add (sess->conns, sc);
  mtcp_connection_set_keep_sent (sc->conn, TRUE);
  mtcp_connection_set_heads (sc->conn,
      (hello->flags & MTCP_HELLO_FLAG_BUFFER_DELTA) != 0,
      (hello->flags & MTCP_HELLO_FLAG_COMPACT) != 0);
  if (sess->orphaned_us) {
    GST_INFO ("session %s resumes after %" G_GINT64_FORMAT " ms without "
        "connections", sess->id_str,
        (g_get_monotonic_time () - sess->orphaned_us) / 1000);
    sess->orphaned_us = 0;
  }
  apply_socket_options (server, sc);
  /* a producer may wait for a receiver (wait-for-connection) */
  g_cond_broadcast (&server->cond);

  memcpy (welcome.session_id, sess->id, MTCP_SESSION_ID_SIZE);
  welcome.connection_id = sc->id;
  welcome.max_frame = server->config.max_frame;
  /* calling, the sink names its stream for the listener to check */
  g_strlcpy (welcome.stream_id, server->config.caller &&
      server->config.stream_id ? server->config.stream_id : "",
      sizeof (welcome.stream_id));
  /* calling from several uplinks: the receiver counts per path */
  welcome.path = sc->path;
  welcome.n_paths = server->config.caller && server->n_paths > 1 ?
      server->n_paths : 0;
  /* a receiver that asks more would be refused the rest */
  welcome.max_connections = MIN (server->config.max_connections, G_MAXUINT16);
  mtcp_connection_queue (sc->conn, mtcp_out_frame_new_welcome (&welcome));
  GST_INFO ("connection %u from %s joins session %s (%u connections, "
      "congestion control %s, %s heads)", sc->id,
      mtcp_connection_get_peer (sc->conn), sess->id_str, sess->conns->len,
      sc->congestion, mtcp_connection_heads_name (sc->conn));
  server_pump_session (server, sess);
  return sc->session != NULL;
}

/* server->lock held. Returns FALSE if the connection was closed. */
gboolean
server_handle_hello (MtcpServer * server, ServerConn * sc, const guint8 * body,
    gsize size)
{
  MtcpHello hello;
  gchar *err = NULL;

  if (!mtcp_parse_hello (body, size, &hello, &err)) {
    MtcpRefuseCode code = MTCP_REFUSE_PROTOCOL;
    if (size >= 4 && GST_READ_UINT32_BE (body) != MTCP_MAGIC)
      code = MTCP_REFUSE_BAD_MAGIC;
    else if (size >= 6 && GST_READ_UINT16_BE (body + 4) != MTCP_VERSION)
      code = MTCP_REFUSE_BAD_VERSION;
    server_refuse (server, sc, code, err);
    g_free (err);
    return FALSE;
  }
  /* listening for one stream id: a receiver that names another has the
   * wrong sink (before the passphrase: it costs nothing to say) */
  if (!server->config.caller && server->config.stream_id &&
      *server->config.stream_id &&
      g_strcmp0 (hello.stream_id, server->config.stream_id) != 0) {
    gchar *reason = g_strdup_printf ("this sink serves another stream-id "
        "than \"%s\"", hello.stream_id);
    server_refuse (server, sc, MTCP_REFUSE_STREAM_ID, reason);
    g_free (reason);
    return FALSE;
  }
  if (server->auth_key.valid) {
    MtcpChallenge challenge;
    MtcpOutFrame *f;
    MtcpIoResult r;
    GError *error = NULL;

    if (!(hello.flags & MTCP_HELLO_FLAG_MUTUAL_AUTH)) {
      server_refuse (server, sc, MTCP_REFUSE_AUTH, "this sink wants a "
          "passphrase proven both ways (HELLO flag 0x08): the receiver is too "
          "old");
      return FALSE;
    }
    if (!random_bytes (sc->nonce, sizeof (sc->nonce), &error)) {
      server_refuse (server, sc, MTCP_REFUSE_SHUTDOWN, error->message);
      g_error_free (error);
      return FALSE;
    }
    sc->hello = hello;
    sc->challenged = TRUE;
    memcpy (challenge.nonce, sc->nonce, MTCP_NONCE_SIZE);
    memcpy (challenge.salt, server->auth_key.salt, MTCP_SALT_SIZE);
    challenge.iterations = server->auth_key.iterations;
    f = mtcp_out_frame_new ();
    f->type = MTCP_FRAME_CHALLENGE;
    f->head_size = mtcp_write_challenge (f->head, sizeof (f->head_inline),
        &challenge);
    mtcp_connection_queue (sc->conn, f);
    return server_conn_flush (server, sc, &r);
  }
  return admit (server, sc, &hello);
}

/* server->lock held. Returns FALSE if the connection was closed. */
gboolean
server_handle_auth (MtcpServer * server, ServerConn * sc, const guint8 * body,
    gsize size)
{
  MtcpAuth auth;
  guint8 expected[MTCP_MAC_SIZE];
  MtcpOutFrame *f;
  gchar *err = NULL;

  if (!mtcp_parse_auth (body, size, &auth, &err)) {
    server_refuse (server, sc, MTCP_REFUSE_PROTOCOL, err);
    g_free (err);
    return FALSE;
  }
  mtcp_auth_proof (&server->auth_key, MTCP_AUTH_ROLE_RECEIVER, sc->nonce,
      auth.nonce, &sc->hello, expected);
  if (!mtcp_bytes_equal_ct (auth.mac, expected, MTCP_MAC_SIZE)) {
    server_refuse (server, sc, MTCP_REFUSE_AUTH, "wrong passphrase");
    return FALSE;
  }
  sc->challenged = FALSE;
  /* our own proof, right before WELCOME (or REFUSE) in the same queue */
  mtcp_auth_proof (&server->auth_key, MTCP_AUTH_ROLE_SINK, sc->nonce,
      auth.nonce, &sc->hello, expected);
  f = mtcp_out_frame_new ();
  f->type = MTCP_FRAME_PROOF;
  f->head_size = mtcp_write_proof (f->head, sizeof (f->head_inline), expected);
  mtcp_connection_queue (sc->conn, f);
  return admit (server, sc, &sc->hello);
}

/* Too many connections sit in their handshake: the oldest goes. A real
 * receiver answers within one round trip, so it is only pushed out if
 * max_pending_handshakes newer connections arrive in that time; idle
 * connections cannot keep new receivers out until they time out. */
static void
reject_oldest_pending (MtcpServer * server)
{
  GList *l;
  gint64 now;

  /* server->conns is newest first */
  for (l = g_list_last (server->conns); l; l = l->prev) {
    ServerConn *sc = l->data;
    if (!sc->pending)
      continue;
    server->connections_rejected++;
    server->rejected_unwarned++;
    server_close_conn (server, sc, "too many pending handshakes, this is "
        "the oldest");
    break;
  }
  /* one warning a second at most: a flood must not flood the bus too */
  now = g_get_monotonic_time ();
  if (now - server->rejected_warned_us >= G_USEC_PER_SEC) {
    server_warn (server, "%" G_GUINT64_FORMAT " connections closed before "
        "their handshake: more than %u pending at once",
        server->rejected_unwarned, server->config.max_pending_handshakes);
    server->rejected_unwarned = 0;
    server->rejected_warned_us = now;
  }
}

/* Most connections the sink holds at once, handshakes included: every
 * session full, plus the handshakes. */
static guint
max_open_connections (MtcpServer * server)
{
  return MIN ((guint64) MAX (server->config.max_sessions, 1) *
      (MAX (server->config.max_connections, 1) + 1) +
      MAX (server->config.max_pending_handshakes, 1), G_MAXUINT);
}

/* The I/O thread, no lock held: a connection is up, accepted or dialed;
 * either way it waits for the receiver's HELLO. */
void
server_on_connected (GSocket * sock, guint uplink, gpointer user_data)
{
  MtcpServer *server = user_data;
  ServerConn *sc;
  GError *err = NULL;

  g_mutex_lock (&server->lock);
  if (server->n_conns >= max_open_connections (server)) {
    server->connections_rejected++;
    server->rejected_unwarned++;
    g_mutex_unlock (&server->lock);
    GST_DEBUG ("at the limit of %u open connections: a new one is closed",
        max_open_connections (server));
    g_socket_close (sock, NULL);
    g_object_unref (sock);
    return;
  }
  g_mutex_unlock (&server->lock);
  sc = g_new0 (ServerConn, 1);
  sc->server = server;
  /* a stranger may send HELLO or AUTH and nothing bigger */
  sc->conn = mtcp_connection_new (sock, MTCP_MAX_HANDSHAKE_BODY);
  mtcp_connection_set_user_data (sc->conn, sc);
  sc->accepted_us = g_get_monotonic_time ();
  sc->path = MIN (uplink, MTCP_MAX_UPLINKS - 1);
  g_object_unref (sock);

  g_mutex_lock (&server->lock);
  server->connections_accepted++;
  if (server->pending_handshakes >= MAX (server->config.max_pending_handshakes,
          1))
    reject_oldest_pending (server);
  sc->pending = TRUE;
  server->pending_handshakes++;
  server->pending_handshakes_peak = MAX (server->pending_handshakes_peak,
      server->pending_handshakes);
  server->conns = g_list_prepend (server->conns, sc);
  server->n_conns++;
  GST_DEBUG ("%s connection %s", server->config.caller ? "dialed" :
      "accepted", mtcp_connection_get_peer (sc->conn));
  if (server->config.tls_certificate) {
    MtcpTlsConfig tls = { TRUE, server->config.tls_certificate, };
    mtcp_connection_set_tls_orphans (sc->conn, &server->tls_orphans);
    if (!mtcp_connection_start_tls (sc->conn, &tls, &err)) {
      server_close_conn (server, sc, err->message);
      g_clear_error (&err);
      server_reap (server);
      server_unlock (server);
      return;
    }
  }
  mtcp_connection_attach (sc->conn, server->io.context, server_on_conn_event,
      server);
  /* free what reject_oldest_pending () closed now, not at the next tick */
  server_reap (server);
  server_unlock (server);
}

/* No lock needed (before the I/O thread runs). Slow: one key derivation
 * per start, with a salt of this start's. */
gboolean
server_derive_auth_key (MtcpServer * server, GError ** error)
{
  guint8 salt[MTCP_SALT_SIZE];

  mtcp_auth_key_clear (&server->auth_key);
  if (server->config.passphrase == NULL || *server->config.passphrase == 0)
    return TRUE;
  if (!random_bytes (salt, sizeof (salt), error)) {
    g_prefix_error (error, "no salt for the passphrase: ");
    return FALSE;
  }
  mtcp_auth_key_derive (&server->auth_key, server->config.passphrase, salt,
      MTCP_AUTH_ITERATIONS_DEFAULT);
  return TRUE;
}

/* multitcp
 * Copyright (C) 2026 the multitcp authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

/* Making connections at the receiver, dialing the sink or accepting its
 * calls (listener mode): sockets bound to `local-addresses`, TLS, HELLO,
 * the passphrase's CHALLENGE, AUTH and PROOF both ways, WELCOME into a
 * session (or a new one when the sink forgot ours). The first connection
 * is made blocking at start, the others on the I/O thread. */

#include "mtcpclientprivate.h"
#include "mtcptcpinfo.h"

#include <string.h>

GST_DEBUG_CATEGORY (mtcp_client_connect_debug);
#define GST_CAT_DEFAULT mtcp_client_connect_debug

/* listener: calls not yet admitted at once (the oldest goes first: a
 * stranger's idle calls cannot keep the sink out), and how long one may
 * take (the passphrase's key derivation included) */
#define LISTEN_MAX_PENDING 8

static MtcpOutFrame *answer_challenge (MtcpClient * client, ClientConn * cc,
    gboolean locked, const guint8 * body, gsize size, gchar ** err);
static gboolean check_proof (MtcpClient * client, ClientConn * cc,
    const guint8 * body, gsize size, gchar ** err);
static gboolean sink_may_welcome (MtcpClient * client, ClientConn * cc,
    gchar ** err);

/* client->lock held. Listening: tell the owner a call from @cc was
 * turned away. */
static void
call_rejected (MtcpClient * client, ClientConn * cc, const gchar * why)
{
  GSocketAddress *addr =
      g_socket_get_remote_address (mtcp_connection_get_socket (cc->conn), NULL);

  client_note_caller (client, MTCP_CALLER_REJECTED, addr, why);
  g_clear_object (&addr);
}

/* client->lock held; released while the application decides whether a
 * calling sink's new session is taken (only the I/O thread closes
 * connections: @cc is still there after). */
static gboolean
call_accepted (MtcpClient * client, ClientConn * cc, const gchar * stream_id)
{
  GSocketAddress *addr;
  gchar *id;
  gboolean ok;

  if (client->accept == NULL)
    return TRUE;
  addr =
      g_socket_get_remote_address (mtcp_connection_get_socket (cc->conn), NULL);
  id = g_strdup (stream_id);
  g_mutex_unlock (&client->lock);
  ok = client->accept (addr, id, client->accept_data);
  g_mutex_lock (&client->lock);
  g_clear_object (&addr);
  g_free (id);
  return ok;
}

/* client->lock held. The passphrase handshake failed: a passphrase that
 * does not work now will not later, so no retries. Returns FALSE. */
static gboolean
auth_failed (MtcpClient * client, ClientConn * cc, const gchar * why)
{
  /* listening, whoever calls may fail: that call closes, no more (else
   * any stranger could stop the receiver) */
  if (client->connector) {
    GST_WARNING ("a call from a sink that did not prove the passphrase: %s",
        why);
    call_rejected (client, cc, why);
    return FALSE;
  }
  client->gave_up = TRUE;
  client_fail (client, g_error_new (G_IO_ERROR, G_IO_ERROR_PERMISSION_DENIED,
          "%s", why));
  return FALSE;
}

gboolean
client_handle_welcome (MtcpClient * client, ClientConn * cc,
    const MtcpFrameHeader * hdr, const guint8 * body, gchar ** err)
{
  MtcpWelcome welcome;

  if (hdr->type == MTCP_FRAME_REFUSE) {
    MtcpRefuse refuse;
    if (mtcp_parse_refuse (body, hdr->length, &refuse, err)) {
      if (refuse.code == MTCP_REFUSE_UNKNOWN_SESSION &&
          (client->connector == NULL
              || client_count_conns (client, TRUE) == 0)) {
        /* the sink restarted or dropped us: start over with a new session
         * (listening, a caller that does not know it while the sink is
         * still with us is someone else's) */
        client->session_gone = TRUE;
      } else if (refuse.code == MTCP_REFUSE_LIMIT && !cc->fresh &&
          client->connector == NULL && client_count_conns (client, TRUE) > 0) {
        client_note_sink_limit (client, TRUE, g_get_monotonic_time ());
      } else if (refuse.code == MTCP_REFUSE_AUTH && client->connector) {
        GST_WARNING ("a calling sink refused our passphrase");
      } else if (refuse.code == MTCP_REFUSE_STREAM_ID) {
        /* a stream the sink does not serve stays so: no retry storm */
        client->gave_up = TRUE;
        client_fail (client, g_error_new (G_IO_ERROR,
                G_IO_ERROR_NOT_FOUND, "%s:%u does not serve stream-id "
                "\"%s\": %s", client->config.host, client->config.port,
                client->config.stream_id ? client->config.stream_id : "",
                refuse.reason));
      } else if (refuse.code == MTCP_REFUSE_AUTH) {
        /* a wrong passphrase stays wrong: no retry storm */
        client->gave_up = TRUE;
        client_fail (client, g_error_new (G_IO_ERROR,
                G_IO_ERROR_PERMISSION_DENIED, "%s:%u refused the passphrase",
                client->config.host, client->config.port));
      }
      *err = g_strdup_printf ("refused by the sink: %s", refuse.reason);
    }
    return FALSE;
  }
  if (hdr->type == MTCP_FRAME_CHALLENGE) {
    MtcpOutFrame *f = answer_challenge (client, cc, TRUE, body,
        hdr->length, err);
    if (f == NULL)
      return auth_failed (client, cc, *err);
    mtcp_connection_queue (cc->conn, f);
    return TRUE;                /* PROOF, WELCOME once the sink checked it */
  }
  if (hdr->type == MTCP_FRAME_PROOF) {
    if (!check_proof (client, cc, body, hdr->length, err))
      return auth_failed (client, cc, *err);
    return TRUE;
  }
  if (hdr->type == MTCP_FRAME_WELCOME && !sink_may_welcome (client, cc, err))
    return auth_failed (client, cc, *err);
  if (hdr->type != MTCP_FRAME_WELCOME) {
    *err = g_strdup_printf ("expected WELCOME, got %s",
        mtcp_frame_type_name (hdr->type));
    return FALSE;
  }
  if (!mtcp_parse_welcome (body, hdr->length, &welcome, err))
    return FALSE;
  /* listening for one stream: a sink calling with another is not ours */
  if (client->connector && client->config.stream_id &&
      *client->config.stream_id &&
      g_strcmp0 (welcome.stream_id, client->config.stream_id) != 0) {
    *err = g_strdup_printf ("a sink called with stream-id \"%s\", not ours",
        welcome.stream_id);
    call_rejected (client, cc, *err);
    return FALSE;
  }
  if (cc->fresh && client->connector &&
      !call_accepted (client, cc, welcome.stream_id)) {
    *err = g_strdup ("the application turned the calling sink away");
    call_rejected (client, cc, *err);
    return FALSE;
  }
  if (cc->fresh) {
    /* a new stream: sequence numbers and timing start over, DISCONT */
    memcpy (client->session_id, welcome.session_id, MTCP_SESSION_ID_SIZE);
    g_free (client->session_str);
    client->session_str = mtcp_session_id_to_string (welcome.session_id);
    mtcp_reorder_reset (client->reorder, 0);
    mtcp_time_map_reset (client->time_map);
    mtcp_playout_clear (client->playout);
    client->reset_discont = TRUE;
    client->session_gone = FALSE;
    client->sessions_started++;
    client->sink_limit = 0;     /* maybe another sink */
    client->sink_max_connections = 0;
    cc->fresh = FALSE;
    GST_INFO ("started new session %s", client->session_str);
    if (client->connector) {
      g_clear_object (&client->sender_address);
      client->sender_address =
          g_socket_get_remote_address (mtcp_connection_get_socket (cc->conn),
          NULL);
      client_note_caller (client, MTCP_CALLER_ADDED, client->sender_address,
          NULL);
    }
  } else if (memcmp (welcome.session_id, client->session_id,
          MTCP_SESSION_ID_SIZE) != 0) {
    *err = g_strdup ("the sink put the connection into another session");
    return FALSE;
  }
  cc->id = welcome.connection_id;
  cc->state = CONN_READY;
  if (welcome.max_connections > 0)
    client->sink_max_connections = welcome.max_connections;
  client_note_sink_limit (client, FALSE, 0);
  /* a calling sink's uplink: the count is kept per path */
  if (welcome.n_paths > 0) {
    cc->path = welcome.path;
    client->n_paths = MAX (client->n_paths, welcome.n_paths);
  }
  /* failures are not forgotten here but at the first buffer: a sink that
   * welcomes and then sends what cannot be used (caps refused) would
   * otherwise be dialled again every 100 ms forever */
  client->all_closed = FALSE;
  GST_INFO ("connection %u joined session %s as %u", cc->index,
      client->session_str, cc->id);
  return TRUE;
}

static void
make_hello (MtcpClient * client, gboolean join, MtcpHello * hello)
{
  hello->magic = MTCP_MAGIC;
  hello->version = MTCP_VERSION;
  hello->flags = (join ? MTCP_HELLO_FLAG_JOIN : 0) |
      MTCP_HELLO_FLAG_BUFFER_DELTA | MTCP_HELLO_FLAG_COMPACT |
      MTCP_HELLO_FLAG_MUTUAL_AUTH;
  hello->latency_ms = (guint32) MIN (client->config.latency / GST_MSECOND,
      G_MAXUINT32);
  if (join)
    memcpy (hello->session_id, client->session_id, MTCP_SESSION_ID_SIZE);
  else
    memset (hello->session_id, 0, MTCP_SESSION_ID_SIZE);
  /* a caller names the stream it wants; a listener checks the sink's */
  g_strlcpy (hello->stream_id, !client->config.listener &&
      client->config.stream_id ? client->config.stream_id : "",
      sizeof (hello->stream_id));
}

/* client->lock held (@locked, in the I/O thread), or the I/O thread not
 * running yet. The answer to a CHALLENGE on @cc, or NULL with *err: no
 * passphrase here, a key too weak or too costly, a second CHALLENGE.
 * Derives the key when the sink's salt or rounds are new (tens of ms, up
 * to a second for the most rounds accepted: once per sink, not per
 * connection), with the lock released meanwhile: a sink that changes its
 * salt on every connection must not stall the streaming thread. Only the
 * I/O thread closes connections, so @cc is still there after. */
static MtcpOutFrame *
answer_challenge (MtcpClient * client, ClientConn * cc, gboolean locked,
    const guint8 * body, gsize size, gchar ** err)
{
  MtcpChallenge challenge;
  MtcpAuth auth;
  MtcpOutFrame *f;
  GError *error = NULL;

  if (!mtcp_parse_challenge (body, size, &challenge, err))
    return NULL;
  if (client->config.passphrase == NULL || *client->config.passphrase == 0) {
    *err = g_strdup_printf ("the sink at %s:%u requires a passphrase",
        client->config.host, client->config.port);
    return NULL;
  }
  if (cc->challenged || cc->sink_proven) {
    *err = g_strdup_printf ("the sink at %s:%u sent a second CHALLENGE",
        client->config.host, client->config.port);
    return NULL;
  }
  if (challenge.iterations < MTCP_AUTH_ITERATIONS_MIN ||
      challenge.iterations > MTCP_AUTH_ITERATIONS_MAX) {
    *err = g_strdup_printf ("the sink at %s:%u asks for a key of %u rounds, "
        "outside %u..%u: refusing to prove the passphrase to it",
        client->config.host, client->config.port, challenge.iterations,
        MTCP_AUTH_ITERATIONS_MIN, MTCP_AUTH_ITERATIONS_MAX);
    return NULL;
  }
  if (!mtcp_random_bytes (auth.nonce, MTCP_NONCE_SIZE, &error)) {
    *err = g_strdup (error->message);
    g_error_free (error);
    return NULL;
  }
  if (!mtcp_auth_key_matches (&client->auth_key, challenge.salt,
          challenge.iterations)) {
    gint64 t0 = g_get_monotonic_time ();
    MtcpAuthKey fresh;

    /* config.passphrase changes only while stopped */
    if (locked)
      g_mutex_unlock (&client->lock);
    mtcp_auth_key_derive (&fresh, client->config.passphrase, challenge.salt,
        challenge.iterations);
    if (locked)
      g_mutex_lock (&client->lock);
    client->auth_key = fresh;
    mtcp_auth_key_clear (&fresh);
    GST_INFO ("derived the passphrase key (%u rounds) in %" G_GINT64_FORMAT
        " ms", challenge.iterations, (g_get_monotonic_time () - t0) / 1000);
  }
  cc->proof_key = client->auth_key;
  memcpy (cc->sink_nonce, challenge.nonce, MTCP_NONCE_SIZE);
  memcpy (cc->own_nonce, auth.nonce, MTCP_NONCE_SIZE);
  mtcp_auth_proof (&cc->proof_key, MTCP_AUTH_ROLE_RECEIVER, cc->sink_nonce,
      cc->own_nonce, &cc->auth_hello, auth.mac);
  cc->challenged = TRUE;
  f = mtcp_out_frame_new ();
  f->type = MTCP_FRAME_AUTH;
  f->head_size = mtcp_write_auth (f->head, sizeof (f->head_inline), &auth);
  return f;
}

/* client->lock held, or the I/O thread not running yet. The sink's PROOF
 * on @cc: FALSE with *err unless it answers our AUTH and is right. */
static gboolean
check_proof (MtcpClient * client, ClientConn * cc, const guint8 * body,
    gsize size, gchar ** err)
{
  guint8 mac[MTCP_MAC_SIZE], expected[MTCP_MAC_SIZE];

  if (!cc->challenged) {
    *err = g_strdup_printf ("the sink at %s:%u sent PROOF unasked",
        client->config.host, client->config.port);
    return FALSE;
  }
  if (!mtcp_parse_proof (body, size, mac, err))
    return FALSE;
  mtcp_auth_proof (&cc->proof_key, MTCP_AUTH_ROLE_SINK, cc->sink_nonce,
      cc->own_nonce, &cc->auth_hello, expected);
  if (!mtcp_bytes_equal_ct (mac, expected, MTCP_MAC_SIZE)) {
    *err = g_strdup_printf ("the sink at %s:%u does not know the passphrase "
        "(its proof is wrong)", client->config.host, client->config.port);
    return FALSE;
  }
  cc->challenged = FALSE;
  cc->sink_proven = TRUE;
  return TRUE;
}

/* client->lock held, or the I/O thread not running yet. With a passphrase,
 * only a sink that proved it on @cc may let the connection in: else any
 * listener could feed us a stream. */
static gboolean
sink_may_welcome (MtcpClient * client, ClientConn * cc, gchar ** err)
{
  if (client->config.passphrase == NULL || *client->config.passphrase == 0 ||
      cc->sink_proven)
    return TRUE;
  *err = g_strdup_printf ("the sink at %s:%u did not prove it knows the "
      "passphrase (%s): refusing it", client->config.host,
      client->config.port, cc->challenged ? "no PROOF before WELCOME" :
      "it never sent a CHALLENGE");
  return FALSE;
}

void
client_send_hello (ClientConn * cc, MtcpClient * client, gboolean join)
{
  MtcpHello hello;
  MtcpOutFrame *f = mtcp_out_frame_new ();

  make_hello (client, join, &hello);
  /* a passphrase's proofs cover this HELLO, not one made later (the
   * session id may change meanwhile) */
  cc->auth_hello = hello;
  f->type = MTCP_FRAME_HELLO;
  f->head_size = mtcp_write_hello (mtcp_out_frame_alloc_head (f,
          MTCP_HELLO_FRAME_MAX), MTCP_HELLO_FRAME_MAX, &hello);
  mtcp_connection_queue (cc->conn, f);
}

/* TLS settings every connection uses; server_name stays NULL without. */
gboolean
client_setup_tls (MtcpClient * client, GError ** error)
{
  const MtcpClientConfig *c = &client->config;

  if (!c->tls)
    return TRUE;
  if (!g_tls_backend_supports_tls (g_tls_backend_get_default ())) {
    g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED, "tls=true but "
        "GLib has no TLS backend (install glib-networking)");
    return FALSE;
  }
  if (c->tls_ca_file && *c->tls_ca_file) {
    client->tls.database = g_tls_file_database_new (c->tls_ca_file, error);
    if (client->tls.database == NULL) {
      g_prefix_error (error, "tls-ca-file %s: ", c->tls_ca_file);
      return FALSE;
    }
  }
  client->tls.server = FALSE;
  client->tls.validation_flags = c->tls_validation_flags;
  client->tls.server_name = c->tls_server_name && *c->tls_server_name ?
      c->tls_server_name : c->host;
  client->tls.port = c->port;
  return TRUE;
}

/* `local-addresses`: the IP addresses connections are spread over. */
gboolean
client_parse_local_addresses (MtcpClient * client, GError ** error)
{
  GPtrArray *items = mtcp_connector_split_list (client->config.local_addresses);
  GSocketFamily family = g_socket_address_get_family (client->address);
  gboolean ok = TRUE;
  guint i;

  client->locals = g_ptr_array_new_with_free_func (g_object_unref);
  for (i = 0; i < items->len && ok; i++) {
    const gchar *text = g_ptr_array_index (items, i);
    GInetAddress *ip = g_inet_address_new_from_string (text);

    if (ip == NULL || g_inet_address_get_family (ip) != family) {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
          "local-addresses: \"%s\" is not an %s address", text,
          family == G_SOCKET_FAMILY_IPV6 ? "IPv6" : "IPv4");
      ok = FALSE;
    } else {
      g_ptr_array_add (client->locals, g_inet_socket_address_new (ip, 0));
    }
    g_clear_object (&ip);
  }
  g_ptr_array_unref (items);
  if (!ok || client->locals->len == 0)
    g_clear_pointer (&client->locals, g_ptr_array_unref);
  else
    client->n_paths = MIN (client->locals->len, MTCP_MAX_PATHS);
  return ok;
}

/* A TCP socket bound to local address @local (-1: the kernel's choice). */
static GSocket *
new_socket (MtcpClient * client, gint local, GError ** error)
{
  GSocket *sock = g_socket_new (g_socket_address_get_family (client->address),
      G_SOCKET_TYPE_STREAM, G_SOCKET_PROTOCOL_TCP, error);

  if (sock == NULL)
    return NULL;
  mtcp_tcp_set_nodelay (sock, TRUE);
  if (local >= 0 && !g_socket_bind (sock,
          g_ptr_array_index (client->locals, local), FALSE, error)) {
    gchar *ip = g_inet_address_to_string (g_inet_socket_address_get_address
        (g_ptr_array_index (client->locals, local)));
    g_prefix_error (error, "cannot use local address %s: ", ip);
    g_free (ip);
    g_object_unref (sock);
    return NULL;
  }
  return sock;
}

/* @accepted: the sink dialed it, we listen */
static ClientConn *
conn_new (MtcpClient * client, GSocket * sock, ConnState state, gint local,
    gboolean accepted)
{
  ClientConn *cc = g_new0 (ClientConn, 1);

  cc->client = client;
  cc->local = local;
  cc->path = MAX (local, 0);
  cc->state = state;
  cc->index = client->next_index++;
  cc->conn = mtcp_connection_new (sock, client->config.max_frame);
  mtcp_connection_set_user_data (cc->conn, cc);
  mtcp_connection_set_delay_acks (cc->conn, TRUE);
  cc->accepted = accepted;
  /* dialed: named as the user named the sink (accepted: its address) */
  if (!accepted) {
    gchar *peer = g_strdup_printf ("%s:%u", client->config.host,
        client->config.port);
    mtcp_connection_set_peer (cc->conn, peer);
    g_free (peer);
  }
  client->conns = g_list_append (client->conns, cc);
  return cc;
}

/* client->lock held. Open one more connection without blocking the I/O
 * thread; NULL if it could not even start. */
ClientConn *
client_open_connection (MtcpClient * client)
{
  GError *err = NULL;
  gint local;
  GSocket *sock;
  ClientConn *cc;

  if (client->connector)
    /* listening: the sink dials (client_tell_want) */
    return NULL;
  local = client_path_to_open (client);
  sock = new_socket (client, local, &err);

  if (sock == NULL) {
    GST_WARNING ("cannot open a connection: %s", err->message);
    client_note_failure (client, err, NULL);
    g_error_free (err);
    return NULL;
  }
  g_socket_set_blocking (sock, FALSE);
  if (!g_socket_connect (sock, client->address, NULL, &err) &&
      !g_error_matches (err, G_IO_ERROR, G_IO_ERROR_PENDING)) {
    GST_WARNING ("connecting to %s:%u failed: %s", client->config.host,
        client->config.port, err->message);
    client_note_failure (client, err, NULL);
    g_error_free (err);
    g_object_unref (sock);
    return NULL;
  }
  g_clear_error (&err);
  cc = conn_new (client, sock, CONN_CONNECTING, local, FALSE);
  cc->fresh = client->session_gone;
  g_object_unref (sock);
  mtcp_connection_attach (cc->conn, client->io.context, client_on_conn_event,
      client);
  mtcp_connection_want_write (cc->conn, TRUE);
  GST_DEBUG ("opening connection %u (local address %d)", cc->index, local);
  return cc;
}

/* The I/O thread, no lock held: a sink called. It is handled as a
 * connection we dialed that just connected: TLS as the client, then
 * HELLO (a fresh session while we have none). */
static void
on_accepted (GSocket * sock, guint uplink, gpointer user_data)
{
  MtcpClient *client = user_data;
  ClientConn *cc, *oldest = NULL;
  guint pending = 0, open = 0;
  GList *l;

  g_mutex_lock (&client->lock);
  for (l = client->conns; l; l = l->next) {
    ClientConn *other = l->data;
    open++;
    if (other->state == CONN_CONNECTING || other->state == CONN_HANDSHAKE) {
      pending++;
      if (oldest == NULL
          || mtcp_connection_get_created_us (other->conn) <
          mtcp_connection_get_created_us (oldest->conn))
        oldest = other;
    }
  }
  if (!client->running
      || open >= 2 * MAX (client->config.control.max_connections,
          1) + LISTEN_MAX_PENDING) {
    GST_DEBUG ("at the limit of open connections: a new call is closed");
    g_socket_close (sock, NULL);
    g_object_unref (sock);
    client_unlock (client);
    return;
  }
  if (pending >= LISTEN_MAX_PENDING)
    client_close_conn (client, oldest, "too many calls in their handshake, "
        "this is the oldest");
  cc = conn_new (client, sock, CONN_CONNECTING, -1, TRUE);
  g_object_unref (sock);
  cc->fresh = client->session_gone;
  GST_DEBUG ("call from %s: connection %u%s",
      mtcp_connection_get_peer (cc->conn), cc->index,
      cc->fresh ? ", for a new session" : "");
  mtcp_connection_attach (cc->conn, client->io.context, client_on_conn_event,
      client);
  /* connected already: the handshake starts at the first dispatch */
  mtcp_connection_want_write (cc->conn, TRUE);
  client_reap (client);
  client_unlock (client);
}

/* The I/O thread, no lock held: accept () ran out of descriptors. */
static void
on_accept_failed (const GError * error, gboolean exhausted, guint backoff_ms,
    guint uplink, gpointer user_data)
{
  GST_WARNING ("cannot accept calls (%s): trying again in %u ms",
      error->message, backoff_ms);
}

/* The first connection, blocking: its WELCOME names the session. */
ClientConn *
client_connect_first (MtcpClient * client, GCancellable * cancellable,
    GError ** error)
{
  GSocket *sock;
  ClientConn *cc;
  MtcpFrameHeader hdr;
  const guint8 *body;
  gchar *err = NULL;
  MtcpWelcome welcome;

  sock = new_socket (client, client_path_to_open (client), error);
  if (sock == NULL)
    return NULL;
  g_socket_set_timeout (sock, client->config.timeout_s);
  if (!g_socket_connect (sock, client->address, cancellable, error)) {
    g_object_unref (sock);
    return NULL;
  }
  cc = conn_new (client, sock, CONN_HANDSHAKE, client_path_to_open (client),
      FALSE);
  g_object_unref (sock);
  if (client->tls.server_name && !mtcp_connection_handshake_tls_blocking
      (cc->conn, &client->tls, cancellable, error))
    goto failed;
  client_send_hello (cc, client, FALSE);
  if (mtcp_connection_flush (cc->conn, error) != MTCP_IO_DONE ||
      !mtcp_connection_read_frame_blocking (cc->conn, &hdr, &body, cancellable,
          error))
    goto failed;
  if (hdr.type == MTCP_FRAME_CHALLENGE) {
    MtcpOutFrame *f = answer_challenge (client, cc, FALSE, body, hdr.length,
        &err);
    if (f == NULL) {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_PERMISSION_DENIED, "%s", err);
      goto failed;
    }
    mtcp_connection_queue (cc->conn, f);
    if (mtcp_connection_flush (cc->conn, error) != MTCP_IO_DONE ||
        !mtcp_connection_read_frame_blocking (cc->conn, &hdr, &body,
            cancellable, error))
      goto failed;
  }
  if (hdr.type == MTCP_FRAME_PROOF) {
    if (!check_proof (client, cc, body, hdr.length, &err)) {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_PERMISSION_DENIED, "%s", err);
      goto failed;
    }
    if (!mtcp_connection_read_frame_blocking (cc->conn, &hdr, &body,
            cancellable, error))
      goto failed;
  }
  if (hdr.type == MTCP_FRAME_REFUSE) {
    MtcpRefuse refuse;
    if (mtcp_parse_refuse (body, hdr.length, &refuse, &err))
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_CONNECTION_REFUSED,
          "refused by the sink: %s", refuse.reason);
    else
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA, "%s", err);
    goto failed;
  }
  if (hdr.type == MTCP_FRAME_WELCOME && !sink_may_welcome (client, cc, &err)) {
    g_set_error (error, G_IO_ERROR, G_IO_ERROR_PERMISSION_DENIED, "%s", err);
    goto failed;
  }
  if (hdr.type != MTCP_FRAME_WELCOME ||
      !mtcp_parse_welcome (body, hdr.length, &welcome, &err)) {
    g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
        "not a multitcpsink, or an incompatible one: %s",
        err ? err : "no WELCOME");
    goto failed;
  }
  memcpy (client->session_id, welcome.session_id, MTCP_SESSION_ID_SIZE);
  client->session_str = mtcp_session_id_to_string (welcome.session_id);
  client->sessions_started++;
  client->sink_max_connections = welcome.max_connections;
  cc->id = welcome.connection_id;
  cc->state = CONN_READY;
  g_socket_set_timeout (mtcp_connection_get_socket (cc->conn), 0);
  GST_INFO ("joined new session %s on %s:%u", client->session_str,
      client->config.host, client->config.port);
  g_free (err);
  return cc;

failed:
  if (!client->tls.server_name && error && *error &&
      g_error_matches (*error, G_IO_ERROR, G_IO_ERROR_CONNECTION_CLOSED))
    g_prefix_error (error, "the sink closed the connection before it "
        "answered HELLO (does it want tls=true?): ");
  g_free (err);
  client->conns = g_list_remove (client->conns, cc);
  mtcp_connection_free (cc->conn);
  g_free (cc);
  return NULL;
}

/* Listening: nothing to wait for here; the first call opens the session
 * (pop waits for it). */
gboolean
client_start_listening (MtcpClient * client, GError ** error)
{
  client->connector = mtcp_connector_new_listener (client->config.host,
      client->config.port, error);
  if (client->connector == NULL || !client_setup_tls (client, error))
    return FALSE;
  /* no name to check a caller's certificate against, unless given one */
  if (client->tls.server_name && !(client->config.tls_server_name &&
          *client->config.tls_server_name))
    client->tls.validation_flags &= ~G_TLS_CERTIFICATE_BAD_IDENTITY;
  client->session_gone = TRUE;
  mtcp_io_thread_init (&client->io);
  client->rate_since_us = client->last_data_us = g_get_monotonic_time ();
  mtcp_connector_start (client->connector, client->io.context, on_accepted,
      on_accept_failed, client);
  client_start_io (client);
  GST_INFO ("listening on %s for the sink's calls",
      mtcp_connector_describe (client->connector));
  return TRUE;
}

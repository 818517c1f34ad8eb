/* multitcp
 * Copyright (C) 2026 the multitcp authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "mtcpconnector.h"
#include "mtcpiothread.h"
#include "mtcptcpinfo.h"

#include <gst/gst.h>

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <net/if.h>

GST_DEBUG_CATEGORY_STATIC (mtcp_connector_debug);
#define GST_CAT_DEFAULT mtcp_connector_debug

/* accept () failing (EMFILE, ENFILE, ENOBUFS) leaves the connection in the
 * backlog and the listener readable: rest this long, doubling */
#define ACCEPT_BACKOFF_MIN_MS 50
#define ACCEPT_BACKOFF_MAX_MS 1000
/* connections taken per wake-up of the listener: a flood waits its turn */
#define ACCEPTS_PER_DISPATCH 64

/* An unanswered dial sends a fresh SYN on a new socket this often: the
 * kernel retries a SYN after 1, 3 and 7 s, so a path that comes back after
 * an outage would otherwise wait seconds for the next try. The older
 * attempts stay open (an answer may be on its way), the oldest closed
 * beyond DIAL_ATTEMPTS; the first to connect is the dial's. */
#define DIAL_RESEND_MS 500
#define DIAL_ATTEMPTS 4

typedef struct _Dial Dial;

typedef struct {
  Dial *dial;
  GSocket *socket;
  GSource *watch;
  guint64 syn;                  /* its number in the dial */
} DialAttempt;

struct _Dial {
  MtcpConnector *connector;
  guint uplink;
  DialAttempt *attempts[DIAL_ATTEMPTS]; /* oldest first */
  guint n_attempts;
  GSource *timeout;
  GSource *resend;
  guint64 syns;                 /* attempts made */
};

/* Where a dial goes out from. */
typedef struct {
  gchar *device;                /* SO_BINDTODEVICE, or NULL */
  GSocketAddress *local;        /* bound to (port 0), or NULL */
  gchar *name;
} Uplink;

struct _MtcpConnector {
  GSocket *listener;            /* listener only */
  GSocketAddress *address;      /* dialer only */
  guint port;
  gchar *description;
  guint connect_timeout_ms;

  GMainContext *context;
  MtcpConnectorConnected connected;
  MtcpConnectorFailed failed;
  gpointer user_data;
  gboolean running;

  GSource *accept_source;       /* NULL while resting */
  GSource *rest_source;
  guint backoff_ms;
  /* dials_lock, a leaf: the dials list is read by the owner's stats from
   * another thread than the one whose callbacks change it */
  GMutex dials_lock;
  GList *dials;                 /* Dial*, in progress */
  guint64 syns;                 /* SYNs the dials sent, all told */
  Uplink uplinks[MTCP_MAX_UPLINKS];
  guint n_uplinks;              /* 0: none set, the kernel's choice */
};

static void
init_debug (void)
{
  static gsize done = 0;

  if (g_once_init_enter (&done)) {
    GST_DEBUG_CATEGORY_INIT (mtcp_connector_debug, "multitcpconnector", 0,
        "multitcp connections: listen and accept, or dial");
    g_once_init_leave (&done, 1);
  }
}

MtcpConnector *
mtcp_connector_new_listener (const gchar * host, guint port, GError ** error)
{
  GSocketAddress *saddr, *bound;
  MtcpConnector *c;
  GSocket *sock;

  init_debug ();
  saddr = mtcp_resolve_address (host, port, NULL, error);
  if (saddr == NULL)
    return NULL;
  sock = g_socket_new (g_socket_address_get_family (saddr),
      G_SOCKET_TYPE_STREAM, G_SOCKET_PROTOCOL_TCP, error);
  if (sock == NULL) {
    g_object_unref (saddr);
    return NULL;
  }
  g_socket_set_blocking (sock, FALSE);
  g_socket_set_listen_backlog (sock, 128);
  if (!g_socket_bind (sock, saddr, TRUE, error) ||
      !g_socket_listen (sock, error)) {
    g_object_unref (saddr);
    g_object_unref (sock);
    return NULL;
  }
  g_object_unref (saddr);
  c = g_new0 (MtcpConnector, 1);
  g_mutex_init (&c->dials_lock);
  c->listener = sock;
  bound = g_socket_get_local_address (sock, NULL);
  c->port = bound ?
      g_inet_socket_address_get_port (G_INET_SOCKET_ADDRESS (bound)) : 0;
  g_clear_object (&bound);
  c->description = g_strdup_printf ("%s:%u", host && *host ? host : "*",
      c->port);
  GST_DEBUG ("listening on %s", c->description);
  return c;
}

MtcpConnector *
mtcp_connector_new_dialer (const gchar * host, guint port,
    guint connect_timeout_ms, GCancellable * cancellable, GError ** error)
{
  GSocketAddress *address;
  MtcpConnector *c;

  init_debug ();
  address = mtcp_resolve_address (host, port, cancellable, error);
  if (address == NULL)
    return NULL;
  c = g_new0 (MtcpConnector, 1);
  g_mutex_init (&c->dials_lock);
  c->address = address;
  c->port = port;
  c->connect_timeout_ms = connect_timeout_ms;
  c->description = g_strdup_printf ("%s:%u", host, port);
  return c;
}

gboolean
mtcp_connector_is_listener (const MtcpConnector * c)
{
  return c->listener != NULL;
}

guint
mtcp_connector_get_port (const MtcpConnector * c)
{
  return c->port;
}

GSocketAddress *
mtcp_connector_get_address (const MtcpConnector * c)
{
  return c->address;
}

const gchar *
mtcp_connector_describe (const MtcpConnector * c)
{
  return c->description;
}

/* ---- listening ---- */

static void watch_listener (MtcpConnector * c);

static gboolean
on_rest_over (gpointer data)
{
  MtcpConnector *c = data;

  c->rest_source = NULL;
  if (c->running)
    watch_listener (c);
  return G_SOURCE_REMOVE;
}

/* One comma-separated list into its trimmed, non-empty items. */
GPtrArray *
mtcp_connector_split_list (const gchar * list)
{
  GPtrArray *items = g_ptr_array_new_with_free_func (g_free);
  gchar **tokens;
  guint i;

  if (list == NULL)
    return items;
  tokens = g_strsplit (list, ",", -1);
  for (i = 0; tokens[i]; i++) {
    gchar *t = g_strstrip (tokens[i]);
    if (*t)
      g_ptr_array_add (items, g_strdup (t));
  }
  g_strfreev (tokens);
  return items;
}

static void
uplinks_clear (MtcpConnector * c)
{
  guint i;

  for (i = 0; i < c->n_uplinks; i++) {
    g_free (c->uplinks[i].device);
    g_clear_object (&c->uplinks[i].local);
    g_free (c->uplinks[i].name);
  }
  c->n_uplinks = 0;
}

gboolean
mtcp_connector_set_uplinks (MtcpConnector * c, const gchar * local_addresses,
    const gchar * interfaces, GError ** error)
{
  GPtrArray *addrs = mtcp_connector_split_list (local_addresses);
  GPtrArray *devs = mtcp_connector_split_list (interfaces);
  GSocketFamily family = c->address ?
      g_socket_address_get_family (c->address) : G_SOCKET_FAMILY_INVALID;
  guint i, n = MAX (addrs->len, devs->len);
  gboolean ok = FALSE;

  uplinks_clear (c);
  if (addrs->len && devs->len && addrs->len != devs->len) {
    g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
        "local-addresses has %u items and interfaces %u: given both, they "
        "pair up one to one", addrs->len, devs->len);
    goto done;
  }
  if (n > MTCP_MAX_UPLINKS) {
    g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
        "%u uplinks, at most %d", n, MTCP_MAX_UPLINKS);
    goto done;
  }
  for (i = 0; i < n; i++) {
    Uplink *u = &c->uplinks[i];
    const gchar *addr = i < addrs->len ? g_ptr_array_index (addrs, i) : NULL;
    const gchar *dev = i < devs->len ? g_ptr_array_index (devs, i) : NULL;

    c->n_uplinks = i + 1;
    /* in this network namespace (sysfs may show another's) */
    if (dev && if_nametoindex (dev) == 0) {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND,
          "interfaces: no network device \"%s\"", dev);
      goto done;
    }
    if (addr) {
      GInetAddress *ip = g_inet_address_new_from_string (addr);
      if (ip == NULL || (family != G_SOCKET_FAMILY_INVALID &&
              g_inet_address_get_family (ip) != family)) {
        g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
            "local-addresses: \"%s\" is not an %s address", addr,
            family == G_SOCKET_FAMILY_IPV6 ? "IPv6" : "IPv4");
        g_clear_object (&ip);
        goto done;
      }
      u->local = g_inet_socket_address_new (ip, 0);
      g_object_unref (ip);
    }
    u->device = g_strdup (dev);
    u->name = dev && addr ? g_strdup_printf ("%s/%s", dev, addr) :
        g_strdup (dev ? dev : addr);
  }
  ok = TRUE;
done:
  if (!ok)
    uplinks_clear (c);
  g_ptr_array_unref (addrs);
  g_ptr_array_unref (devs);
  return ok;
}

guint
mtcp_connector_n_uplinks (const MtcpConnector * c)
{
  return MAX (c->n_uplinks, 1);
}

const gchar *
mtcp_connector_uplink_name (const MtcpConnector * c, guint uplink)
{
  return uplink < c->n_uplinks ? c->uplinks[uplink].name : "default";
}

static gboolean
on_accept (GSocket * listener, GIOCondition cond, gpointer data)
{
  MtcpConnector *c = data;
  guint n;

  for (n = 0; n < ACCEPTS_PER_DISPATCH && c->running; n++) {
    GError *err = NULL;
    GSocket *sock = g_socket_accept (listener, NULL, &err);
    gboolean exhausted;

    if (sock) {
      c->backoff_ms = 0;
      c->connected (sock, 0, c->user_data);
      continue;
    }
    if (g_error_matches (err, G_IO_ERROR, G_IO_ERROR_WOULD_BLOCK)) {
      g_error_free (err);
      break;
    }
    /* out of descriptors or memory (EMFILE, ENFILE, ENOMEM); other errors
     * (reset before it was accepted) are that connection's */
    exhausted = g_error_matches (err, G_IO_ERROR,
        G_IO_ERROR_TOO_MANY_OPEN_FILES) || g_error_matches (err, G_IO_ERROR,
        G_IO_ERROR_NO_SPACE);
    if (!exhausted) {
      GST_DEBUG ("accept failed: %s", err->message);
      g_error_free (err);
      continue;
    }
    c->backoff_ms = CLAMP (c->backoff_ms * 2, ACCEPT_BACKOFF_MIN_MS,
        ACCEPT_BACKOFF_MAX_MS);
    c->accept_source = NULL;
    c->rest_source = g_timeout_source_new (c->backoff_ms);
    g_source_set_callback (c->rest_source, on_rest_over, c, NULL);
    g_source_attach (c->rest_source, c->context);
    g_source_unref (c->rest_source);
    c->failed (err, TRUE, c->backoff_ms, 0, c->user_data);
    g_error_free (err);
    return G_SOURCE_REMOVE;
  }
  return G_SOURCE_CONTINUE;
}

static void
watch_listener (MtcpConnector * c)
{
  c->accept_source = g_socket_create_source (c->listener, G_IO_IN, NULL);
  g_source_set_callback (c->accept_source,
      (GSourceFunc) (void (*)(void)) on_accept, c, NULL);
  g_source_attach (c->accept_source, c->context);
  g_source_unref (c->accept_source);
}

/* ---- dialing ---- */

static void
attempt_free (DialAttempt * at)
{
  if (at->watch)
    g_source_destroy (at->watch);
  g_clear_object (&at->socket);
  g_free (at);
}

/* @at gave up (an error of its own): the dial goes on with the others. */
static void
attempt_drop (Dial * d, DialAttempt * at)
{
  guint i;

  for (i = 0; i < d->n_attempts && d->attempts[i] != at; i++);
  g_return_if_fail (i < d->n_attempts);
  memmove (d->attempts + i, d->attempts + i + 1,
      (d->n_attempts - i - 1) * sizeof (d->attempts[0]));
  d->n_attempts--;
  attempt_free (at);
}

static void
dial_end (Dial * d)
{
  MtcpConnector *c = d->connector;
  guint i;

  g_mutex_lock (&c->dials_lock);
  c->dials = g_list_remove (c->dials, d);
  g_mutex_unlock (&c->dials_lock);
  for (i = 0; i < d->n_attempts; i++)
    attempt_free (d->attempts[i]);
  if (d->timeout)
    g_source_destroy (d->timeout);
  if (d->resend)
    g_source_destroy (d->resend);
  g_free (d);
}

static gboolean
on_dial_timeout (gpointer data)
{
  Dial *d = data;
  MtcpConnector *c = d->connector;
  guint uplink = d->uplink;
  GError *err = g_error_new (G_IO_ERROR, G_IO_ERROR_TIMED_OUT,
      "connecting to %s from %s timed out (%" G_GUINT64_FORMAT " SYNs "
      "unanswered)", c->description, mtcp_connector_uplink_name (c, uplink),
      d->syns);

  d->timeout = NULL;
  GST_DEBUG ("%s", err->message);
  dial_end (d);
  c->failed (err, FALSE, 0, uplink, c->user_data);
  g_error_free (err);
  return G_SOURCE_REMOVE;
}

static gboolean
on_dial_event (GSocket * socket, GIOCondition cond, gpointer data)
{
  DialAttempt *at = data;
  Dial *d = at->dial;
  MtcpConnector *c = d->connector;
  guint uplink = d->uplink;
  GError *err = NULL;

  /* this source ends with this call: dial_end must not destroy it */
  at->watch = NULL;
  if (!g_socket_check_connect_result (socket, &err)) {
    g_prefix_error (&err, "connecting to %s from %s: ", c->description,
        mtcp_connector_uplink_name (c, uplink));
    GST_DEBUG ("%s", err->message);
    /* an ICMP error for an old SYN says little of the newer ones; a
     * refusal is the receiver's answer */
    if (d->n_attempts > 1 && !g_error_matches (err, G_IO_ERROR,
            G_IO_ERROR_CONNECTION_REFUSED)) {
      attempt_drop (d, at);
      g_error_free (err);
      return G_SOURCE_REMOVE;
    }
    dial_end (d);
    c->failed (err, FALSE, 0, uplink, c->user_data);
    g_error_free (err);
    return G_SOURCE_REMOVE;
  }
  {
    GSocket *sock = g_object_ref (socket);

    GST_DEBUG ("connected to %s from %s (SYN %" G_GUINT64_FORMAT " of %"
        G_GUINT64_FORMAT " answered first)", c->description,
        mtcp_connector_uplink_name (c, uplink), at->syn, d->syns);
    dial_end (d);
    c->connected (sock, uplink, c->user_data);
  }
  return G_SOURCE_REMOVE;
}

/* @sock out of @u: bound to its device and address. */
static gboolean
bind_uplink (GSocket * sock, const Uplink * u, GError ** error)
{
  if (u->device && setsockopt (g_socket_get_fd (sock), SOL_SOCKET,
          SO_BINDTODEVICE, u->device, strlen (u->device) + 1) < 0) {
    int e = errno;
    g_set_error (error, G_IO_ERROR, g_io_error_from_errno (e),
        "cannot bind to device %s: %s%s", u->device, g_strerror (e),
        e == EPERM ? " (needs CAP_NET_RAW)" : "");
    return FALSE;
  }
  if (u->local && !g_socket_bind (sock, u->local, FALSE, error)) {
    g_prefix_error (error, "cannot use local address %s: ", u->name);
    return FALSE;
  }
  return TRUE;
}

/* A new socket of @d's, its SYN sent; FALSE (and @error) when it could
 * not be: the path is not usable now. */
static gboolean
attempt_start (Dial * d, GError ** error)
{
  MtcpConnector *c = d->connector;
  DialAttempt *at;
  GSocket *sock;

  sock = g_socket_new (g_socket_address_get_family (c->address),
      G_SOCKET_TYPE_STREAM, G_SOCKET_PROTOCOL_TCP, error);
  if (sock == NULL)
    return FALSE;
  mtcp_tcp_set_nodelay (sock, TRUE);
  g_socket_set_blocking (sock, FALSE);
  if ((d->uplink < c->n_uplinks && !bind_uplink (sock,
              &c->uplinks[d->uplink], error)) ||
      (!g_socket_connect (sock, c->address, NULL, error) &&
          !g_error_matches (*error, G_IO_ERROR, G_IO_ERROR_PENDING))) {
    g_prefix_error (error, "connecting to %s from %s: ", c->description,
        mtcp_connector_uplink_name (c, d->uplink));
    g_object_unref (sock);
    return FALSE;
  }
  g_clear_error (error);
  if (d->n_attempts == DIAL_ATTEMPTS) {
    /* the oldest, its SYN long unanswered, makes room */
    attempt_free (d->attempts[0]);
    memmove (d->attempts, d->attempts + 1,
        (DIAL_ATTEMPTS - 1) * sizeof (d->attempts[0]));
    d->n_attempts--;
  }
  at = g_new0 (DialAttempt, 1);
  d->attempts[d->n_attempts++] = at;
  at->dial = d;
  at->socket = sock;
  at->watch = g_socket_create_source (sock, G_IO_OUT | G_IO_ERR | G_IO_HUP,
      NULL);
  g_source_set_callback (at->watch, (GSourceFunc) (void (*)(void))
      on_dial_event, at, NULL);
  g_source_attach (at->watch, c->context);
  g_source_unref (at->watch);
  at->syn = ++d->syns;
  c->syns++;
  return TRUE;
}

static gboolean
on_dial_resend (gpointer data)
{
  Dial *d = data;
  MtcpConnector *c = d->connector;
  guint uplink = d->uplink;
  GError *err = NULL;

  if (attempt_start (d, &err)) {
    GST_LOG ("no answer to %s from %s yet: SYN %" G_GUINT64_FORMAT " on a "
        "new socket", c->description, mtcp_connector_uplink_name (c, uplink),
        d->syns);
    return G_SOURCE_CONTINUE;
  }
  GST_DEBUG ("%s", err->message);
  if (d->n_attempts > 0) {
    /* the earlier SYNs may still be answered */
    g_error_free (err);
    return G_SOURCE_CONTINUE;
  }
  d->resend = NULL;
  dial_end (d);
  c->failed (err, FALSE, 0, uplink, c->user_data);
  g_error_free (err);
  return G_SOURCE_REMOVE;
}

void
mtcp_connector_dial (MtcpConnector * c, guint uplink)
{
  GError *err = NULL;
  Dial *d;
  guint n;

  g_return_if_fail (c->address != NULL && c->running);
  if (uplink >= mtcp_connector_n_uplinks (c))
    uplink = 0;
  d = g_new0 (Dial, 1);
  d->connector = c;
  d->uplink = uplink;
  if (!attempt_start (d, &err)) {
    g_free (d);
    c->failed (err, FALSE, 0, uplink, c->user_data);
    g_error_free (err);
    return;
  }
  if (c->connect_timeout_ms) {
    d->timeout = g_timeout_source_new (c->connect_timeout_ms);
    g_source_set_callback (d->timeout, on_dial_timeout, d, NULL);
    g_source_attach (d->timeout, c->context);
    g_source_unref (d->timeout);
  }
  /* without a timeout the kernel's own (minutes of SYN retries) ends the
   * dial: no fresh SYNs that would keep it going for ever */
  if (c->connect_timeout_ms) {
    d->resend = g_timeout_source_new (DIAL_RESEND_MS);
    g_source_set_callback (d->resend, on_dial_resend, d, NULL);
    g_source_attach (d->resend, c->context);
    g_source_unref (d->resend);
  }
  g_mutex_lock (&c->dials_lock);
  c->dials = g_list_prepend (c->dials, d);
  n = g_list_length (c->dials);
  g_mutex_unlock (&c->dials_lock);
  GST_DEBUG ("dialing %s from %s (%u in progress)", c->description,
      mtcp_connector_uplink_name (c, uplink), n);
}

guint
mtcp_connector_dialing (const MtcpConnector * c, guint uplink)
{
  GList *l;
  guint n = 0;

  g_mutex_lock ((GMutex *) & c->dials_lock);
  for (l = c->dials; l; l = l->next)
    n += uplink == G_MAXUINT || ((Dial *) l->data)->uplink == uplink;
  g_mutex_unlock ((GMutex *) & c->dials_lock);
  return n;
}

guint64
mtcp_connector_syns (const MtcpConnector * c)
{
  return c->syns;
}

/* ---- both ---- */

void
mtcp_connector_start (MtcpConnector * c, GMainContext * context,
    MtcpConnectorConnected connected, MtcpConnectorFailed failed,
    gpointer user_data)
{
  c->context = context;
  c->connected = connected;
  c->failed = failed;
  c->user_data = user_data;
  c->running = TRUE;
  if (c->listener)
    watch_listener (c);
}

void
mtcp_connector_stop (MtcpConnector * c)
{
  c->running = FALSE;
  if (c->accept_source)
    g_source_destroy (c->accept_source);
  c->accept_source = NULL;
  if (c->rest_source)
    g_source_destroy (c->rest_source);
  c->rest_source = NULL;
  while (c->dials)
    dial_end (c->dials->data);
  if (c->listener)
    g_socket_close (c->listener, NULL);
}

void
mtcp_connector_free (MtcpConnector * c)
{
  if (c == NULL)
    return;
  mtcp_connector_stop (c);
  uplinks_clear (c);
  g_clear_object (&c->listener);
  g_clear_object (&c->address);
  g_free (c->description);
  g_mutex_clear (&c->dials_lock);
  g_free (c);
}

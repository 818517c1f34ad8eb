/* multitcp
 * Copyright (C) 2026 the multitcp authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
/* Either end may dial: multitcpsink mode=caller dials a multitcpsrc
 * mode=listener (a camera behind NAT dialing its ingest server), plain,
 * with a passphrase and with TLS; the receiver still decides how many
 * connections (WANT); the caller dials again when the receiver comes back,
 * and gives up after `retry`; strangers calling the listener change
 * nothing; multitcp:// URIs set the mode, the address and the rest. */
#include <gst/check/gstcheck.h>
#include <gio/gio.h>
#include <gst/app/gstappsink.h>
#include <gst/app/gstappsrc.h>
#include <string.h>

#include "mtcptestutil.h"
#include "gstmultitcpuri.h"

/* a loopback port nobody listens on (free a moment ago) */
static gint
closed_port (void)
{
  GSocket *sock = g_socket_new (G_SOCKET_FAMILY_IPV4, G_SOCKET_TYPE_STREAM,
      G_SOCKET_PROTOCOL_TCP, NULL);
  GInetAddress *lo = g_inet_address_new_loopback (G_SOCKET_FAMILY_IPV4);
  GSocketAddress *addr = g_inet_socket_address_new (lo, 0), *bound;
  gint port;

  fail_unless (g_socket_bind (sock, addr, TRUE, NULL));
  bound = g_socket_get_local_address (sock, NULL);
  port = g_inet_socket_address_get_port (G_INET_SOCKET_ADDRESS (bound));
  g_object_unref (bound);
  g_object_unref (addr);
  g_object_unref (lo);
  g_socket_close (sock, NULL);
  g_object_unref (sock);
  return port;
}

/* multitcpsrc mode=listener on a free loopback port: its port in *@port */
static Receiver *
listener_new (guint connections, const gchar * props, gint * port)
{
  gchar *all = g_strdup_printf ("mode=listener %s", props ? props : "");
  Receiver *r = receiver_new_with (0, connections, 5000, all);

  g_free (all);
  g_object_get (r->src, "current-port", port, NULL);
  fail_unless (*port > 0);
  return r;
}

/* appsrc ! multitcpsink mode=caller dialing @port */
static Sender *
caller_new (gint port, const gchar * props)
{
  gchar *all = g_strdup_printf ("mode=caller host=127.0.0.1 port=%d %s", port,
      props ? props : "");
  Sender *s = sender_new (all);

  g_free (all);
  return s;
}

static gchar *
stats_string (GstElement * e, const gchar * field)
{
  GstStructure *st = NULL;
  gchar *v;

  g_object_get (e, "stats", &st, NULL);
  v = g_strdup (gst_structure_get_string (st, field));
  gst_structure_free (st);
  return v;
}

/* The sink dials all three connections the listening receiver wants, and
 * everything arrives byte-exact with its timestamps and flags. */
GST_START_TEST (test_sink_calls_listening_source)
{
  gint port;
  Receiver *r = listener_new (3, NULL, &port);
  Sender *s = caller_new (port, NULL);
  gchar *mode;

  wait_for_connections (s->sink, 3);
  mode = stats_string (s->sink, "mode");
  fail_unless_equals_string (mode, "caller");
  g_free (mode);
  stream_and_check (s, &r, 1, 200, TRUE);
  fail_unless (stats_uint64 (s->sink, "dials") >= 3);
  sender_free (s);
  receiver_free (r);
}

GST_END_TEST;

/* The passphrase, proven both ways, whoever dials. */
GST_START_TEST (test_sink_calls_with_passphrase)
{
  gint port;
  Receiver *r = listener_new (2, "passphrase=\"a caller's secret\"", &port);
  Sender *s = caller_new (port, "passphrase=\"a caller's secret\"");

  wait_for_connections (s->sink, 2);
  stream_and_check (s, &r, 1, 100, TRUE);
  sender_free (s);
  receiver_free (r);
}

GST_END_TEST;

/* A wrong passphrase: the listener never takes the stream; the caller
 * gives up after `retry` and says why on the bus. */
GST_START_TEST (test_caller_wrong_passphrase_gives_up)
{
  gint port;
  Receiver *r = listener_new (2, "passphrase=\"the right one\"", &port);
  Sender *s = caller_new (port, "passphrase=\"another one\" retry=2");
  gchar *text;
  GstBuffer *buf = gst_buffer_new_allocate (NULL, 100, NULL);

  fail_unless_equals_int (gst_app_src_push_buffer (GST_APP_SRC (s->appsrc),
          buf), GST_FLOW_OK);
  text = wait_for_error (s->pipeline, 30 * GST_SECOND);
  fail_unless (text && strstr (text, "Could not reach the receiver"),
      "error: %s", text);
  g_free (text);
  fail_unless_equals_uint64 (stats_uint64 (r->src, "buffers-pushed"), 0);
  sender_free (s);
  receiver_free (r);
}

GST_END_TEST;

/* TLS: the sink is the TLS server and the source the client, whoever
 * dials; the listener checks the certificate against its CA file. */
GST_START_TEST (test_sink_calls_with_tls)
{
  gchar *dir = make_tls_certificate ();
  gchar *sink_props, *src_props;
  gint port;
  Receiver *r;
  Sender *s;

  if (dir == NULL) {
    g_print ("SKIP test_sink_calls_with_tls: openssl is not installed\n");
    return;
  }
  src_props = g_strdup_printf ("tls=true tls-ca-file=%s/cert.pem", dir);
  sink_props = g_strdup_printf ("tls=true tls-certificate-file=%s/cert.pem "
      "tls-key-file=%s/key.pem", dir, dir);
  r = listener_new (3, src_props, &port);
  s = caller_new (port, sink_props);
  wait_for_connections (s->sink, 3);
  stream_and_check (s, &r, 1, 100, TRUE);
  sender_free (s);
  receiver_free (r);
  g_free (src_props);
  g_free (sink_props);
  remove_tls_certificate (dir);
}

GST_END_TEST;

/* The receiver still drives the count: `connections` changed on the
 * listening source while playing makes the caller dial more, or retire
 * some, with nothing lost. */
GST_START_TEST (test_receiver_drives_the_count)
{
  gint port;
  Receiver *r = listener_new (2, NULL, &port);
  Sender *s = caller_new (port, NULL);

  wait_for_connections (s->sink, 2);
  g_object_set (r->src, "connections", 5, NULL);
  wait_for_connections (s->sink, 5);
  g_object_set (r->src, "connections", 1, NULL);
  wait_for_connections (s->sink, 1);
  stream_and_check (s, &r, 1, 100, TRUE);
  sender_free (s);
  receiver_free (r);
}

GST_END_TEST;

/* The receiver goes away and comes back on the same port: the caller
 * dials again (backing off meanwhile) and the new receiver gets the
 * stream, a new session. */
GST_START_TEST (test_caller_redials_when_the_receiver_returns)
{
  gint port, again;
  Receiver *r = listener_new (2, NULL, &port);
  Sender *s = caller_new (port, NULL);
  gchar *props;

  wait_for_connections (s->sink, 2);
  receiver_free (r);
  wait_for_connections (s->sink, 0);
  g_usleep (G_USEC_PER_SEC);
  props = g_strdup_printf ("mode=listener port=%d", port);
  r = receiver_new_with (0, 2, 5000, props);
  g_free (props);
  g_object_get (r->src, "current-port", &again, NULL);
  fail_unless_equals_int (again, port);
  wait_for_connections (s->sink, 2);
  stream_and_check (s, &r, 1, 50, TRUE);
  fail_unless (stats_uint (s->sink, "dial-failures") == 0);
  sender_free (s);
  receiver_free (r);
}

GST_END_TEST;

/* Nobody listens: the caller gives up after `retry` failed dials, with an
 * error that names the address. */
GST_START_TEST (test_caller_gives_up_after_retry)
{
  Sender *s = caller_new (closed_port (), "retry=2");
  gchar *text;
  GstBus *bus = gst_element_get_bus (s->pipeline);
  GstMessage *msg;
  const GstStructure *details = NULL;
  const gchar *kind;

  /* each failed dial: a warning with the reason as data */
  msg = gst_bus_timed_pop_filtered (bus, 20 * GST_SECOND,
      GST_MESSAGE_WARNING);
  fail_unless (msg != NULL);
  gst_message_parse_warning_details (msg, &details);
  fail_unless (details != NULL);
  kind = gst_structure_get_string (details, "kind");
  fail_unless_equals_string (kind, "refused");
  fail_unless (g_str_has_prefix (gst_structure_get_string (details,
              "address"), "127.0.0.1:"));
  gst_message_unref (msg);
  gst_object_unref (bus);

  text = wait_for_error (s->pipeline, 30 * GST_SECOND);
  fail_unless (text && strstr (text, "Could not reach the receiver") &&
      strstr (text, "127.0.0.1"), "error: %s", text);
  g_free (text);
  fail_unless (stats_uint64 (s->sink, "dials") >= 3);
  sender_free (s);
}

GST_END_TEST;

/* Strangers calling the listener (idle, more than it keeps pending) take
 * nothing from the real sink's stream. */
GST_START_TEST (test_strangers_calling_the_listener)
{
  gint port, i;
  Receiver *r = listener_new (2, NULL, &port);
  GSocket *idle[12];
  Sender *s;

  for (i = 0; i < 12; i++)
    idle[i] = raw_connect (port);
  s = caller_new (port, NULL);
  wait_for_connections (s->sink, 2);
  stream_and_check (s, &r, 1, 100, TRUE);
  for (i = 0; i < 12; i++) {
    g_socket_close (idle[i], NULL);
    g_object_unref (idle[i]);
  }
  sender_free (s);
  receiver_free (r);
}

GST_END_TEST;

/* stream-id, as SRT's streamid: the listener checks what the caller
 * names, either way round; a wrong one is an error at the caller, no
 * retries (the source) or `retry` of them (the sink). */
GST_START_TEST (test_stream_id)
{
  Sender *s;
  Receiver *r;
  gchar *text, *props;
  gint port;

  /* the sink listens for "cam/1" */
  s = sender_new ("stream-id=cam/1");
  text = NULL;
  {
    gchar *desc = g_strdup_printf ("multitcpsrc host=127.0.0.1 port=%d "
        "stream-id=cam/2 ! fakesink", sender_port (s));
    GstElement *p = gst_parse_launch (desc, NULL);
    g_free (desc);
    gst_element_set_state (p, GST_STATE_PLAYING);
    text = wait_for_error (p, 20 * GST_SECOND);
    gst_element_set_state (p, GST_STATE_NULL);
    gst_object_unref (p);
  }
  fail_unless (text && strstr (text, "cam/2"), "error: %s", text);
  g_free (text);
  r = receiver_new_with (sender_port (s), 2, 5000, "stream-id=cam/1");
  wait_for_connections (s->sink, 2);
  stream_and_check (s, &r, 1, 50, TRUE);
  receiver_free (r);
  sender_free (s);

  /* the source listens for "cam/1": a sink calling as "cam/2" is never
   * taken and gives up; one calling as "cam/1" streams */
  r = listener_new (2, "stream-id=cam/1", &port);
  s = caller_new (port, "stream-id=cam/2 retry=1");
  text = wait_for_error (s->pipeline, 30 * GST_SECOND);
  fail_unless (text && strstr (text, "Could not reach"), "error: %s", text);
  g_free (text);
  sender_free (s);
  props = g_strdup_printf ("stream-id=cam/1");
  s = caller_new (port, props);
  g_free (props);
  wait_for_connections (s->sink, 2);
  stream_and_check (s, &r, 1, 50, TRUE);
  sender_free (s);
  receiver_free (r);
}

GST_END_TEST;

/* The caller-* signals, as srtsink's: a receiver refused (its address
 * and why), one whose session begins, and ends once it left for
 * session-timeout. */
typedef struct {
  GMutex lock;
  guint added, removed, rejected;
  gchar *added_id, *removed_id, *reason;
  gboolean addresses;           /* every one came with an address */
} CallerLog;

static void
on_added (GstElement * sink, const gchar * id, GSocketAddress * addr,
    CallerLog * log)
{
  g_mutex_lock (&log->lock);
  log->added++;
  g_free (log->added_id);
  log->added_id = g_strdup (id);
  log->addresses &= G_IS_INET_SOCKET_ADDRESS (addr);
  g_mutex_unlock (&log->lock);
}

static void
on_removed (GstElement * sink, const gchar * id, GSocketAddress * addr,
    CallerLog * log)
{
  g_mutex_lock (&log->lock);
  log->removed++;
  g_free (log->removed_id);
  log->removed_id = g_strdup (id);
  log->addresses &= G_IS_INET_SOCKET_ADDRESS (addr);
  g_mutex_unlock (&log->lock);
}

static void
on_rejected (GstElement * sink, GSocketAddress * addr, const gchar * reason,
    CallerLog * log)
{
  g_mutex_lock (&log->lock);
  log->rejected++;
  g_free (log->reason);
  log->reason = g_strdup (reason);
  log->addresses &= G_IS_INET_SOCKET_ADDRESS (addr);
  g_mutex_unlock (&log->lock);
}

static guint
caller_count (CallerLog * log, guint * field)
{
  guint n;
  g_mutex_lock (&log->lock);
  n = *field;
  g_mutex_unlock (&log->lock);
  return n;
}

static void
wait_caller_count (CallerLog * log, guint * field, guint n)
{
  gint64 until = g_get_monotonic_time () + 20 * G_USEC_PER_SEC;
  while (caller_count (log, field) < n && g_get_monotonic_time () < until)
    g_usleep (10000);
  fail_unless (caller_count (log, field) >= n);
}

GST_START_TEST (test_caller_signals)
{
  CallerLog log = { 0, };
  Sender *s = sender_new ("stream-id=cam/1 session-timeout=500");
  Receiver *r;
  gchar *desc;
  GstElement *p;

  g_mutex_init (&log.lock);
  log.addresses = TRUE;
  g_signal_connect (s->sink, "caller-added", G_CALLBACK (on_added), &log);
  g_signal_connect (s->sink, "caller-removed", G_CALLBACK (on_removed), &log);
  g_signal_connect (s->sink, "caller-rejected", G_CALLBACK (on_rejected),
      &log);
  desc = g_strdup_printf ("multitcpsrc host=127.0.0.1 port=%d "
      "stream-id=cam/9 ! fakesink", sender_port (s));
  p = gst_parse_launch (desc, NULL);
  g_free (desc);
  gst_element_set_state (p, GST_STATE_PLAYING);
  wait_caller_count (&log, &log.rejected, 1);
  gst_element_set_state (p, GST_STATE_NULL);
  gst_object_unref (p);
  fail_unless (log.reason && strstr (log.reason, "cam/9"), "%s", log.reason);
  fail_unless_equals_int (caller_count (&log, &log.added), 0);

  r = receiver_new_with (sender_port (s), 2, 5000, "stream-id=cam/1");
  wait_for_connections (s->sink, 2);
  wait_caller_count (&log, &log.added, 1);
  /* one session, not one per connection */
  fail_unless_equals_int (caller_count (&log, &log.added), 1);
  receiver_free (r);
  wait_caller_count (&log, &log.removed, 1);
  g_mutex_lock (&log.lock);
  fail_unless (log.added_id && *log.added_id);
  fail_unless_equals_string (log.removed_id, log.added_id);
  fail_unless (log.addresses);
  g_mutex_unlock (&log.lock);
  sender_free (s);
  g_free (log.added_id);
  g_free (log.removed_id);
  g_free (log.reason);
  g_mutex_clear (&log.lock);
}

GST_END_TEST;

/* caller-connecting's handler: turns the first @refuse callers away */
typedef struct {
  GMutex lock;
  guint asked, refuse;
  gchar *stream_id;
  gboolean addresses;
} Gate;

static gboolean
on_connecting (GstElement * element, GSocketAddress * addr,
    const gchar * stream_id, Gate * gate)
{
  gboolean take;

  g_mutex_lock (&gate->lock);
  gate->asked++;
  take = gate->asked > gate->refuse;
  g_free (gate->stream_id);
  gate->stream_id = g_strdup (stream_id);
  gate->addresses &= G_IS_INET_SOCKET_ADDRESS (addr);
  g_mutex_unlock (&gate->lock);
  return take;
}

static void
gate_init (Gate * gate, guint refuse)
{
  memset (gate, 0, sizeof (*gate));
  g_mutex_init (&gate->lock);
  gate->refuse = refuse;
  gate->addresses = TRUE;
}

static void
gate_clear (Gate * gate)
{
  g_free (gate->stream_id);
  g_mutex_clear (&gate->lock);
}

/* A listening sink's application decides with caller-connecting (after
 * the stream id and passphrase): the receiver it turns away gets an error
 * that says so, the next one streams; its further connections are not
 * asked about. */
GST_START_TEST (test_sink_caller_connecting)
{
  CallerLog log = { 0, };
  Gate gate;
  Sender *s = sender_new (NULL);
  Receiver *r;
  gchar *desc, *msg;
  GstElement *p;

  gate_init (&gate, 1);
  g_mutex_init (&log.lock);
  log.addresses = TRUE;
  g_signal_connect (s->sink, "caller-connecting", G_CALLBACK (on_connecting),
      &gate);
  g_signal_connect (s->sink, "caller-rejected", G_CALLBACK (on_rejected),
      &log);
  desc = g_strdup_printf ("multitcpsrc host=127.0.0.1 port=%d "
      "stream-id=cam/2 ! fakesink", sender_port (s));
  p = gst_parse_launch (desc, NULL);
  g_free (desc);
  gst_element_set_state (p, GST_STATE_PLAYING);
  msg = wait_for_error (p, WAIT_TIMEOUT);
  fail_unless (msg && strstr (msg, "turned the receiver away"), "%s", msg);
  g_free (msg);
  gst_element_set_state (p, GST_STATE_NULL);
  gst_object_unref (p);
  wait_caller_count (&log, &log.rejected, 1);

  r = receiver_new_with (sender_port (s), 3, 5000, "stream-id=cam/2");
  wait_for_connections (s->sink, 3);
  stream_and_check (s, &r, 1, 40, TRUE);
  g_mutex_lock (&gate.lock);
  fail_unless_equals_int (gate.asked, 2);
  fail_unless_equals_string (gate.stream_id, "cam/2");
  fail_unless (gate.addresses);
  g_mutex_unlock (&gate.lock);
  receiver_free (r);
  sender_free (s);
  gate_clear (&gate);
  g_free (log.reason);
  g_mutex_clear (&log.lock);
}

GST_END_TEST;

/* A listening source has the same signals: the calling sink it turns away
 * dials again (a warning on its bus says why, as data), the one it takes
 * is added, and removed when its stream ends. */
GST_START_TEST (test_listening_source_signals)
{
  CallerLog log = { 0, };
  Gate gate;
  gint port;
  Receiver *r = listener_new (2, "keep-listening=true stream-id=cam/3",
      &port);
  Sender *s;
  GstStructure *details;
  guint attempt = 0;

  gate_init (&gate, 1);
  g_mutex_init (&log.lock);
  log.addresses = TRUE;
  g_signal_connect (r->src, "caller-connecting", G_CALLBACK (on_connecting),
      &gate);
  g_signal_connect (r->src, "caller-added", G_CALLBACK (on_added), &log);
  g_signal_connect (r->src, "caller-removed", G_CALLBACK (on_removed), &log);
  g_signal_connect (r->src, "caller-rejected", G_CALLBACK (on_rejected),
      &log);
  s = caller_new (port, "stream-id=cam/3");
  details = wait_for_warning_details (s->pipeline, WAIT_TIMEOUT);
  fail_unless (details != NULL);
  fail_unless_equals_string (gst_structure_get_string (details, "kind"),
      "closed");
  fail_unless (gst_structure_get_uint (details, "attempt", &attempt));
  fail_unless (attempt >= 1);
  gst_structure_free (details);
  wait_for_connections (s->sink, 2);
  stream_and_check_full (s, &r, 1, 40, TRUE, FALSE);
  wait_caller_count (&log, &log.removed, 1);
  g_mutex_lock (&log.lock);
  fail_unless_equals_int (log.added, 1);
  fail_unless (log.rejected >= 1);
  fail_unless (log.reason && strstr (log.reason, "turned"), "%s", log.reason);
  fail_unless (log.added_id && *log.added_id);
  fail_unless_equals_string (log.removed_id, log.added_id);
  fail_unless (log.addresses);
  g_mutex_unlock (&log.lock);
  g_mutex_lock (&gate.lock);
  fail_unless_equals_int (gate.asked, 2);
  fail_unless_equals_string (gate.stream_id, "cam/3");
  g_mutex_unlock (&gate.lock);
  sender_free (s);
  receiver_free (r);
  gate_clear (&gate);
  g_free (log.added_id);
  g_free (log.removed_id);
  g_free (log.reason);
  g_mutex_clear (&log.lock);
}

GST_END_TEST;

/* A calling source whose sink went away: each failed reconnect is a
 * warning whose details say why and which attempt; once the sink's
 * listening socket is gone, "refused". */
GST_START_TEST (test_calling_source_reconnect_warnings)
{
  Sender *s = sender_new (NULL);
  Receiver *r = receiver_new_with (sender_port (s), 2, 5000, "retry=8");
  GstStructure *details;
  gboolean refused = FALSE;
  guint attempt = 0, i;

  wait_for_connections (s->sink, 2);
  for (i = 0; i < 10; i++)
    push_tagged (s, i, 1000, 5);
  expect_tagged (r, 10);
  /* connections that lived a second are lost, not failed tries: the
   * failures are the reconnects' */
  g_usleep (1200 * G_TIME_SPAN_MILLISECOND);
  sender_free (s);
  /* the first may have reached the dying sink's backlog ("closed") */
  while (!refused && (details = wait_for_warning_details (r->pipeline,
              WAIT_TIMEOUT)) != NULL) {
    const gchar *kind = gst_structure_get_string (details, "kind");
    fail_unless (g_strcmp0 (kind, "refused") == 0 ||
        g_strcmp0 (kind, "closed") == 0, "kind %s", kind);
    fail_unless (gst_structure_get_uint (details, "attempt", &attempt));
    fail_unless (attempt >= 1);
    fail_unless (strlen (gst_structure_get_string (details, "address")) > 0);
    refused = g_strcmp0 (kind, "refused") == 0;
    gst_structure_free (details);
  }
  fail_unless (refused);
  receiver_free (r);
}

GST_END_TEST;

/* Listening on "::" takes calls over IPv4 and IPv6 alike (a dual-stack
 * socket), at either end: a listening source takes one sender over each in
 * turn, a listening sink a receiver over each at once. */
GST_START_TEST (test_dual_stack_listeners)
{
  gint port;
  Receiver *r = listener_new (2, "host=:: keep-listening=true", &port);
  Receiver *r6;
  Sender *s;
  gchar *props;

  s = caller_new (port, NULL);
  wait_for_connections (s->sink, 2);
  stream_and_check_full (s, &r, 1, 30, TRUE, FALSE);
  sender_free (s);
  props = g_strdup_printf ("mode=caller host=::1 port=%d", port);
  s = sender_new (props);
  g_free (props);
  wait_for_connections (s->sink, 2);
  stream_and_check_full (s, &r, 1, 30, TRUE, FALSE);
  sender_free (s);
  fail_unless_equals_uint64 (stats_uint64 (r->src, "sessions"), 2);
  receiver_free (r);

  /* the sink: host=:: serves a receiver dialing 127.0.0.1 and one ::1 */
  s = sender_new ("host=::");
  r = receiver_new_with (sender_port (s), 2, 5000, "");
  props = g_strdup_printf ("multitcpsrc name=src host=::1 port=%d "
      "connections=2 latency=5000 ! appsink name=out sync=false "
      "max-buffers=0", sender_port (s));
  r6 = g_new0 (Receiver, 1);
  r6->pipeline = gst_parse_launch (props, NULL);
  g_free (props);
  r6->src = gst_bin_get_by_name (GST_BIN (r6->pipeline), "src");
  r6->appsink = gst_bin_get_by_name (GST_BIN (r6->pipeline), "out");
  gst_element_set_state (r6->pipeline, GST_STATE_PLAYING);
  wait_for_connections (s->sink, 4);
  {
    Receiver *both[] = { r, r6 };
    stream_and_check (s, both, 2, 30, TRUE);
  }
  receiver_free (r6);
  receiver_free (r);
  sender_free (s);
}

GST_END_TEST;

/* The "path" structures of @e's stats, or NULL */
static const GValue *
stats_paths (GstElement * e, GstStructure ** st)
{
  g_object_get (e, "stats", st, NULL);
  return gst_structure_get_value (*st, "paths");
}

/* A calling sink bonds two uplinks (here two loopback addresses): every
 * uplink gets its connections and the receiver counts them per path, and
 * the stream arrives whole. */
GST_START_TEST (test_sink_bonds_uplinks)
{
  gint port;
  Receiver *r = listener_new (4, NULL, &port);
  Sender *s = caller_new (port, "local-addresses=127.0.0.1,127.0.0.2");
  GstStructure *st;
  const GValue *paths;
  guint p, total = 0;

  wait_for_connections (s->sink, 4);
  stream_and_check (s, &r, 1, 100, TRUE);
  paths = stats_paths (s->sink, &st);
  fail_unless (paths != NULL);
  fail_unless_equals_int (gst_value_array_get_size (paths), 2);
  for (p = 0; p < 2; p++) {
    const GstStructure *ps =
        gst_value_get_structure (gst_value_array_get_value (paths, p));
    guint n = 0;
    guint64 sent = 0;
    fail_unless (gst_structure_get_uint (ps, "n-connections", &n));
    fail_unless (gst_structure_get_uint64 (ps, "bytes-sent", &sent));
    /* each uplink is used: connections and bytes */
    fail_unless (n >= 1, "uplink %u has no connection", p);
    fail_unless (sent > 0);
    fail_unless_equals_string (gst_structure_get_string (ps, "state"), "up");
    total += n;
  }
  fail_unless_equals_int (total, 4);
  fail_unless_equals_string (gst_structure_get_string (gst_value_get_structure
          (gst_value_array_get_value (paths, 1)), "uplink"), "127.0.0.2");
  gst_structure_free (st);
  /* the receiver knows them as paths */
  paths = stats_paths (r->src, &st);
  fail_unless (paths != NULL);
  fail_unless_equals_int (gst_value_array_get_size (paths), 2);
  gst_structure_free (st);
  sender_free (s);
  receiver_free (r);
}

GST_END_TEST;

/* Uplinks are a calling sink's; bad ones are refused with a clear error */
GST_START_TEST (test_uplinks_need_caller_and_sense)
{
  const gchar *bad[] = {
    "local-addresses=127.0.0.1",        /* a listening sink */
    "mode=caller host=127.0.0.1 port=9 local-addresses=::1",
    "mode=caller host=127.0.0.1 port=9 interfaces=nosuchdevice0",
    "mode=caller host=127.0.0.1 port=9 interfaces=lo,lo "
        "local-addresses=127.0.0.1",
  };
  const gchar *says[] = { "mode=caller", "not an IPv4", "nosuchdevice0",
    "pair up"
  };
  guint i;

  for (i = 0; i < G_N_ELEMENTS (bad); i++) {
    gchar *desc = g_strdup_printf ("appsrc ! multitcpsink %s", bad[i]);
    GstElement *p = gst_parse_launch (desc, NULL);
    gchar *msg;

    g_free (desc);
    gst_element_set_state (p, GST_STATE_PLAYING);
    msg = wait_for_error (p, WAIT_TIMEOUT);
    fail_unless (msg && strstr (msg, says[i]), "%s: %s", bad[i], msg);
    g_free (msg);
    gst_element_set_state (p, GST_STATE_NULL);
    gst_object_unref (p);
  }
}

GST_END_TEST;

/* wait-for-connection=true: nothing enters the sink's queue before a
 * receiver has a connection; then every buffer comes, from the first. */
GST_START_TEST (test_wait_for_connection)
{
  Sender *s = sender_new ("wait-for-connection=true");
  GstCaps *caps = gst_caps_new_empty_simple ("application/x-test");
  GRand *rand = g_rand_new_with_seed (7);
  Receiver *r;
  guint i;

  gst_app_src_set_caps (GST_APP_SRC (s->appsrc), caps);
  for (i = 0; i < 30; i++) {
    GstBuffer *buf = make_payload (rand, i, 1000);
    if (i > 0)
      GST_BUFFER_FLAG_SET (buf, GST_BUFFER_FLAG_DELTA_UNIT);
    fail_unless_equals_int (gst_app_src_push_buffer (GST_APP_SRC
            (s->appsrc), buf), GST_FLOW_OK);
  }
  gst_app_src_end_of_stream (GST_APP_SRC (s->appsrc));
  g_usleep (500 * 1000);
  fail_unless_equals_uint64 (stats_uint64 (s->sink, "bytes-pushed"), 0);
  r = receiver_new (sender_port (s), 2, 5000);
  for (i = 0; i < 30; i++) {
    GstSample *sample = gst_app_sink_try_pull_sample (GST_APP_SINK
        (r->appsink), WAIT_TIMEOUT);
    GstMapInfo map;
    fail_unless (sample != NULL, "buffer %u missing", i);
    gst_buffer_map (gst_sample_get_buffer (sample), &map, GST_MAP_READ);
    fail_unless_equals_int (GST_READ_UINT32_BE (map.data), i);
    gst_buffer_unmap (gst_sample_get_buffer (sample), &map);
    gst_sample_unref (sample);
  }
  receiver_free (r);
  sender_free (s);
  gst_caps_unref (caps);
  g_rand_free (rand);
}

GST_END_TEST;

/* ---- URIs ---- */

static GstElement *
from_uri (GstURIType type, const gchar * uri, GError ** error)
{
  return gst_element_make_from_uri (type, uri, NULL, error);
}

/* A host dials, :port listens, mode= overrides, keys set properties, a
 * bad key or value is refused with a message, get_uri gives it back. */
GST_START_TEST (test_uri)
{
  GError *err = NULL;
  GstElement *e;
  GstMultiTcpMode mode;
  gchar *host, *uri;
  gint port;
  guint latency, conns, overhead;

  e = from_uri (GST_URI_SRC, "multitcp://:5601?latency=1500&connections=3",
      &err);
  fail_unless (e != NULL, "%s", err ? err->message : "");
  g_object_get (e, "mode", &mode, "host", &host, "port", &port, "latency",
      &latency, "connections", &conns, NULL);
  fail_unless_equals_int (mode, GST_MULTI_TCP_MODE_LISTENER);
  fail_unless_equals_string (host, "0.0.0.0");
  fail_unless_equals_int (port, 5601);
  fail_unless_equals_int (latency, 1500);
  fail_unless_equals_int (conns, 3);
  g_free (host);
  uri = gst_uri_handler_get_uri (GST_URI_HANDLER (e));
  fail_unless_equals_string (uri, "multitcp://:5601");
  g_free (uri);
  gst_object_unref (e);

  e = from_uri (GST_URI_SINK,
      "multitcp://ingest.example:7000?passphrase=s3cret&max_connections=8&"
      "copy-overhead=10",
      &err);
  fail_unless (e != NULL, "%s", err ? err->message : "");
  /* (passphrase is write-only) */
  g_object_get (e, "mode", &mode, "host", &host, "port", &port,
      "max-connections", &conns, "copy-overhead", &overhead, NULL);
  fail_unless_equals_int (mode, GST_MULTI_TCP_MODE_CALLER);
  fail_unless_equals_string (host, "ingest.example");
  fail_unless_equals_int (port, 7000);
  fail_unless_equals_int (conns, 8);
  fail_unless_equals_int (overhead, 10);
  g_free (host);
  uri = gst_uri_handler_get_uri (GST_URI_HANDLER (e));
  fail_unless_equals_string (uri, "multitcp://ingest.example:7000");
  g_free (uri);
  /* mode=listener on an address; IPv6 in brackets */
  fail_unless (gst_uri_handler_set_uri (GST_URI_HANDLER (e),
          "multitcp://[::1]:7001?mode=listener", &err));
  g_object_get (e, "mode", &mode, "host", &host, NULL);
  fail_unless_equals_int (mode, GST_MULTI_TCP_MODE_LISTENER);
  fail_unless_equals_string (host, "::1");
  g_free (host);
  uri = gst_uri_handler_get_uri (GST_URI_HANDLER (e));
  fail_unless_equals_string (uri, "multitcp://[::1]:7001?mode=listener");
  g_free (uri);
  /* refused, and nothing changed */
  fail_if (gst_uri_handler_set_uri (GST_URI_HANDLER (e),
          "multitcp://h:7002?no-such-property=1", &err));
  fail_unless (err && strstr (err->message, "no-such-property"));
  g_clear_error (&err);
  fail_if (gst_uri_handler_set_uri (GST_URI_HANDLER (e),
          "multitcp://h:7002?max-connections=many", &err));
  fail_unless (err && strstr (err->message, "max-connections=many"));
  g_clear_error (&err);
  fail_if (gst_uri_handler_set_uri (GST_URI_HANDLER (e), "multitcp://h",
          &err));
  fail_unless (err && strstr (err->message, "port"));
  g_clear_error (&err);
  fail_if (gst_uri_handler_set_uri (GST_URI_HANDLER (e),
          "multitcp://h:1?mode=sideways", &err));
  g_clear_error (&err);
  fail_if (gst_uri_handler_set_uri (GST_URI_HANDLER (e),
          "multitcp://:7003?mode=caller", &err));
  g_clear_error (&err);
  g_object_get (e, "port", &port, NULL);
  fail_unless_equals_int (port, 7001);
  gst_object_unref (e);
}

GST_END_TEST;

/* uri= in a pipeline: a listening source and a calling sink set by URI
 * alone stream everything. */
GST_START_TEST (test_uri_streams)
{
  Receiver *r;
  Sender *s;
  gint port;
  gchar *uri;

  r = receiver_new_with (0, 2, 5000, "uri=multitcp://127.0.0.1:0?mode="
      "listener&connections=2");
  g_object_get (r->src, "current-port", &port, NULL);
  fail_unless (port > 0);
  uri = g_strdup_printf ("uri=multitcp://127.0.0.1:%d", port);
  s = sender_new (uri);
  g_free (uri);
  wait_for_connections (s->sink, 2);
  stream_and_check (s, &r, 1, 50, TRUE);
  sender_free (s);
  receiver_free (r);
}

GST_END_TEST;

/* ---- x264 to avdec_h264, both ways round ---- */

#define H264_FRAMES 90

static gboolean
have_h264 (void)
{
  GstElementFactory *enc = gst_element_factory_find ("x264enc");
  GstElementFactory *dec = gst_element_factory_find ("avdec_h264");
  gboolean ok = enc != NULL && dec != NULL;

  g_clear_object (&enc);
  g_clear_object (&dec);
  return ok;
}

static GstElement *
h264_sender (const gchar * sink_props)
{
  gchar *desc = g_strdup_printf ("videotestsrc is-live=true num-buffers=%d ! "
      "video/x-raw,width=320,height=240,framerate=30/1 ! x264enc "
      "tune=zerolatency speed-preset=ultrafast key-int-max=15 ! h264parse "
      "config-interval=-1 ! multitcpsink name=sink wait-for-connection=true "
      "%s", H264_FRAMES,
      sink_props);
  GstElement *p = gst_parse_launch (desc, NULL);

  g_free (desc);
  fail_unless (p != NULL);
  return p;
}

static GstElement *
h264_receiver (const gchar * src_props)
{
  gchar *desc = g_strdup_printf ("multitcpsrc name=src latency=5000 %s ! "
      "h264parse ! avdec_h264 ! appsink name=out sync=false max-buffers=0",
      src_props);
  GstElement *p = gst_parse_launch (desc, NULL);

  g_free (desc);
  fail_unless (p != NULL);
  return p;
}

/* Until EOS (or an error): the frames decoded. */
static guint
count_decoded (GstElement * receiver)
{
  GstElement *out = gst_bin_get_by_name (GST_BIN (receiver), "out");
  guint n = 0;
  GstSample *sample;

  while ((sample = gst_app_sink_try_pull_sample (GST_APP_SINK (out),
              WAIT_TIMEOUT))) {
    n++;
    gst_sample_unref (sample);
  }
  fail_unless (gst_app_sink_is_eos (GST_APP_SINK (out)), "no EOS after %u "
      "frames", n);
  gst_object_unref (out);
  return n;
}

static gint
element_port (GstElement * pipeline, const gchar * name)
{
  GstElement *e = gst_bin_get_by_name (GST_BIN (pipeline), name);
  gint port = 0;

  g_object_get (e, "current-port", &port, NULL);
  gst_object_unref (e);
  fail_unless (port > 0);
  return port;
}

/* Every frame the receiver got decodes, none late or skipped, and it got
 * the stream from near its start (the sink waits for it: with a
 * passphrase under ASan the receiver's key derivation alone takes
 * seconds). */
static void
check_decoded (GstElement * receiver, guint decoded)
{
  GstElement *src = gst_bin_get_by_name (GST_BIN (receiver), "src");

  fail_unless (decoded >= H264_FRAMES * 2 / 3, "%u frames decoded", decoded);
  fail_unless_equals_uint64 (stats_uint64 (src, "buffers-pushed"), decoded);
  fail_unless_equals_uint64 (stats_uint64 (src, "buffers-late"), 0);
  fail_unless_equals_uint64 (stats_uint64 (src, "buffers-skipped"), 0);
  gst_object_unref (src);
}

/* @security: properties for both ends ("" plain) */
static void
h264_both_ways (const gchar * sink_security, const gchar * src_security)
{
  GstElement *tx, *rx;
  gchar *props;
  gint port;

  /* the sink listens (set by uri=), the source dials */
  props = g_strdup_printf ("uri=multitcp://127.0.0.1:0?mode=listener %s",
      sink_security);
  tx = h264_sender (props);
  g_free (props);
  fail_if (gst_element_set_state (tx, GST_STATE_PAUSED) ==
      GST_STATE_CHANGE_FAILURE);
  port = element_port (tx, "sink");
  props = g_strdup_printf ("uri=multitcp://127.0.0.1:%d?connections=3 %s",
      port, src_security);
  rx = h264_receiver (props);
  g_free (props);
  fail_if (gst_element_set_state (rx, GST_STATE_PLAYING) ==
      GST_STATE_CHANGE_FAILURE);
  fail_if (gst_element_set_state (tx, GST_STATE_PLAYING) ==
      GST_STATE_CHANGE_FAILURE);
  check_decoded (rx, count_decoded (rx));
  gst_element_set_state (tx, GST_STATE_NULL);
  gst_element_set_state (rx, GST_STATE_NULL);
  gst_object_unref (tx);
  gst_object_unref (rx);

  /* the source listens, the sink dials: by properties */
  props = g_strdup_printf ("mode=listener host=127.0.0.1 port=0 "
      "connections=3 %s", src_security);
  rx = h264_receiver (props);
  g_free (props);
  fail_if (gst_element_set_state (rx, GST_STATE_PLAYING) ==
      GST_STATE_CHANGE_FAILURE);
  port = element_port (rx, "src");
  props = g_strdup_printf ("mode=caller host=127.0.0.1 port=%d %s", port,
      sink_security);
  tx = h264_sender (props);
  g_free (props);
  fail_if (gst_element_set_state (tx, GST_STATE_PLAYING) ==
      GST_STATE_CHANGE_FAILURE);
  check_decoded (rx, count_decoded (rx));
  gst_element_set_state (tx, GST_STATE_NULL);
  gst_element_set_state (rx, GST_STATE_NULL);
  gst_object_unref (tx);
  gst_object_unref (rx);
}

GST_START_TEST (test_h264_both_ways)
{
  if (!have_h264 ()) {
    g_print ("SKIP test_h264_both_ways: no x264enc or avdec_h264\n");
    return;
  }
  h264_both_ways ("", "");
  h264_both_ways ("passphrase=\"camera one\"", "passphrase=\"camera one\"");
}

GST_END_TEST;

/* The same with TLS (a test of its own: under ASan, scripts/test.sh leaves
 * it out, see there). */
GST_START_TEST (test_h264_both_ways_tls)
{
  gchar *dir, *sink_tls, *src_tls;

  if (!have_h264 ()) {
    g_print ("SKIP test_h264_both_ways_tls: no x264enc or avdec_h264\n");
    return;
  }
  dir = make_tls_certificate ();
  if (dir == NULL) {
    g_print ("SKIP test_h264_both_ways_tls: no openssl\n");
    return;
  }
  sink_tls = g_strdup_printf ("tls=true tls-certificate-file=%s/cert.pem "
      "tls-key-file=%s/key.pem", dir, dir);
  src_tls = g_strdup_printf ("tls=true tls-ca-file=%s/cert.pem", dir);
  h264_both_ways (sink_tls, src_tls);
  g_free (sink_tls);
  g_free (src_tls);
  remove_tls_certificate (dir);
}

GST_END_TEST;

/* playbin plays a multitcp:// URI: it finds multitcpsrc by the scheme and
 * decodes to EOS with no error. */
GST_START_TEST (test_playbin_plays_uri)
{
  GstElement *tx, *playbin, *vsink;
  GstBus *bus;
  GstMessage *msg;
  gchar *uri;
  gint port;

  if (!have_h264 ()) {
    g_print ("SKIP test_playbin_plays_uri: no x264enc or avdec_h264\n");
    return;
  }
  tx = h264_sender ("host=127.0.0.1 port=0");
  fail_if (gst_element_set_state (tx, GST_STATE_PAUSED) ==
      GST_STATE_CHANGE_FAILURE);
  port = element_port (tx, "sink");
  playbin = gst_element_factory_make ("playbin", NULL);
  vsink = gst_element_factory_make ("fakesink", NULL);
  fail_unless (playbin && vsink);
  uri = g_strdup_printf ("multitcp://127.0.0.1:%d?latency=2000", port);
  g_object_set (playbin, "uri", uri, "video-sink", vsink, NULL);
  g_free (uri);
  fail_if (gst_element_set_state (playbin, GST_STATE_PLAYING) ==
      GST_STATE_CHANGE_FAILURE);
  fail_if (gst_element_set_state (tx, GST_STATE_PLAYING) ==
      GST_STATE_CHANGE_FAILURE);
  bus = gst_element_get_bus (playbin);
  msg = gst_bus_timed_pop_filtered (bus, 30 * GST_SECOND,
      GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
  fail_unless (msg != NULL, "playbin: no EOS within 30 s");
  if (GST_MESSAGE_TYPE (msg) == GST_MESSAGE_ERROR) {
    GError *err = NULL;
    gst_message_parse_error (msg, &err, NULL);
    fail ("playbin: %s", err->message);
  }
  gst_message_unref (msg);
  gst_object_unref (bus);
  gst_element_set_state (playbin, GST_STATE_NULL);
  gst_element_set_state (tx, GST_STATE_NULL);
  gst_object_unref (playbin);
  gst_object_unref (tx);
}

GST_END_TEST;

/* Listening without keep-listening: a sender that vanishes (no EOS, no
 * call back within `timeout`) ends the stream with EOS, after everything
 * it sent. */
GST_START_TEST (test_listener_ends_when_the_sender_leaves)
{
  gint port;
  Receiver *r = listener_new (2, "timeout=1", &port);
  Sender *s = caller_new (port, NULL);
  GstSample *sample;
  guint i;

  wait_for_connections (s->sink, 2);
  for (i = 0; i < 20; i++)
    push_tagged (s, i, 1000, 10);
  expect_tagged (r, 20);
  /* gone without a word */
  sender_free (s);
  sample = gst_app_sink_try_pull_sample (GST_APP_SINK (r->appsink),
      WAIT_TIMEOUT);
  fail_unless (sample == NULL);
  fail_unless (gst_app_sink_is_eos (GST_APP_SINK (r->appsink)));
  fail_unless_equals_uint64 (stats_uint64 (r->src, "senders-left"), 1);
  receiver_free (r);
}

GST_END_TEST;

/* keep-listening: one sender's stream ends (EOS), another calls; the
 * receiver goes on with the second stream (DISCONT, its caps), and never
 * ends its own. */
GST_START_TEST (test_keep_listening_takes_the_next_sender)
{
  gint port;
  Receiver *r = listener_new (2, "keep-listening=true", &port);
  Sender *s = caller_new (port, NULL);

  gint64 until;

  wait_for_connections (s->sink, 2);
  stream_and_check_full (s, &r, 1, 60, TRUE, FALSE);
  /* its EOS is taken for the sender leaving, not passed on */
  until = g_get_monotonic_time () + 10 * G_USEC_PER_SEC;
  while (stats_uint64 (r->src, "senders-left") < 1 &&
      g_get_monotonic_time () < until)
    g_usleep (20000);
  fail_unless_equals_uint64 (stats_uint64 (r->src, "senders-left"), 1);
  sender_free (s);
  s = caller_new (port, NULL);
  wait_for_connections (s->sink, 2);
  stream_and_check_full (s, &r, 1, 60, TRUE, FALSE);
  sender_free (s);
  fail_unless_equals_uint64 (stats_uint64 (r->src, "buffers-pushed"), 120);
  fail_if (gst_app_sink_is_eos (GST_APP_SINK (r->appsink)));
  fail_unless_equals_uint64 (stats_uint64 (r->src, "sessions"), 2);
  receiver_free (r);
}

GST_END_TEST;

static Suite *
modes_suite (void)
{
  Suite *s = suite_create ("modes_elements");
  TCase *tc = tcase_create ("general");

  tcase_set_timeout (tc, 120);
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_sink_calls_listening_source);
  tcase_add_test (tc, test_sink_calls_with_passphrase);
  tcase_add_test (tc, test_caller_wrong_passphrase_gives_up);
  tcase_add_test (tc, test_sink_calls_with_tls);
  tcase_add_test (tc, test_receiver_drives_the_count);
  tcase_add_test (tc, test_caller_redials_when_the_receiver_returns);
  tcase_add_test (tc, test_caller_gives_up_after_retry);
  tcase_add_test (tc, test_strangers_calling_the_listener);
  tcase_add_test (tc, test_stream_id);
  tcase_add_test (tc, test_caller_signals);
  tcase_add_test (tc, test_wait_for_connection);
  tcase_add_test (tc, test_uri);
  tcase_add_test (tc, test_uri_streams);
  tcase_add_test (tc, test_h264_both_ways);
  tcase_add_test (tc, test_h264_both_ways_tls);
  tcase_add_test (tc, test_playbin_plays_uri);
  tcase_add_test (tc, test_listener_ends_when_the_sender_leaves);
  tcase_add_test (tc, test_keep_listening_takes_the_next_sender);
  tcase_add_test (tc, test_sink_caller_connecting);
  tcase_add_test (tc, test_listening_source_signals);
  tcase_add_test (tc, test_calling_source_reconnect_warnings);
  tcase_add_test (tc, test_dual_stack_listeners);
  tcase_add_test (tc, test_sink_bonds_uplinks);
  tcase_add_test (tc, test_uplinks_need_caller_and_sense);
  return s;
}

GST_CHECK_MAIN (modes);

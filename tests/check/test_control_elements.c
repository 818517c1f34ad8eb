/* multitcp
 * Copyright (C) 2026 the multitcp authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
/* The receiver drives: the connection count changed while streaming
 * loses nothing, ParS's starting count then a controller (Alg. 2, MULTFRC),
 * congestion control at the sink (default, refused, bbr), and FEEDBACK
 * spread over the connections. Over loopback; the policy itself is
 * tested in test_control.c. */
#include <gst/check/gstcheck.h>
#include <gio/gio.h>
#include <glib/gstdio.h>
#include <sys/socket.h>
#include <unistd.h>
#include <gst/app/gstappsrc.h>
#include <gst/app/gstappsink.h>
#include <string.h>
#include <sys/resource.h>
#include <math.h>

#include "mtcpprotocol.h"
#include "mtcptestutil.h"
#include "mtcpserver.h"

/* Connections come and go while the stream runs: nothing is lost or late. */
GST_START_TEST (test_connection_count_change_loses_nothing)
{
  Sender *s = sender_new (NULL);
  Receiver *r = receiver_new (sender_port (s), 5, 5000);
  guint counts[] = { 5, 2, 6, 1, 3 };
  guint phase, i, next = 0;

  wait_for_connections (s->sink, 5);
  for (phase = 0; phase < G_N_ELEMENTS (counts); phase++) {
    if (phase > 0) {
      g_object_set (r->src, "connections", counts[phase], NULL);
      wait_for_connections (s->sink, counts[phase]);
    }
    /* 100 buffers of 20 kB per phase, some of them in flight during the change */
    for (i = 0; i < 100; i++) {
      push_tagged (s, next++, 20000, 50);
      if (i == 50 && phase + 1 < G_N_ELEMENTS (counts))
        g_object_set (r->src, "connections", counts[phase + 1], NULL);
    }
  }
  gst_app_src_end_of_stream (GST_APP_SRC (s->appsrc));
  expect_tagged (r, next);
  fail_unless (gst_app_sink_try_pull_sample (GST_APP_SINK (r->appsink),
          WAIT_TIMEOUT) == NULL);
  fail_unless_equals_uint64 (stats_uint64 (r->src, "connections-lost"), 0);

  /* the session's bytes on the wire count the connections that closed:
   * every payload byte once, plus heads, plus what went out twice */
  {
    guint64 payload = (guint64) next * 20000;
    guint64 written = sink_stats_sum (s->sink, FALSE, "bytes-written");
    guint64 open_sent = sink_stats_sum (s->sink, TRUE, "bytes-sent");
    guint64 again = sink_stats_sum (s->sink, FALSE, "frames-resent") +
        sink_stats_sum (s->sink, FALSE, "frames-hedged");

    GST_INFO ("written %" G_GUINT64_FORMAT " for %" G_GUINT64_FORMAT
        " of payload, open connections %" G_GUINT64_FORMAT, written,
        payload, open_sent);
    fail_unless (written >= payload);
    fail_unless (written <= payload + payload / 50 + again * 20100);
    fail_unless (open_sent < written);
    fail_unless (sink_stats_sum (s->sink, FALSE, "bytes-read") > 0);
  }
  receiver_free (r);
  sender_free (s);
}

GST_END_TEST;

/* Pushes one tagged buffer (80 Mbit/s in real time) and returns the
 * source's last connection decision, or NULL (g_free it). */
static gchar *
push_and_read_decision (Sender * s, Receiver * r, guint * next)
{
  GstStructure *st = NULL;
  gchar *reason;

  push_tagged (s, (*next)++, 100000, 50);
  g_usleep (10000);
  g_object_get (r->src, "stats", &st, NULL);
  reason = g_strdup (gst_structure_get_string (st, "connection-decision"));
  gst_structure_free (st);
  return reason;
}

/* connections=0 with a connection controller: ParS's model sets the
 * starting count (loopback has no loss: min-connections), then the
 * controller decides from there; nothing is lost on the way. The sink runs
 * reno, the TCP the model is of (bbr: test_pars_without_loss_for_bbr_sink). */
static void
pars_count_then_controller (const gchar * control, const gchar * later)
{
  Sender *s = sender_new ("congestion-control=reno");
  gchar *props = g_strdup_printf ("connection-control=%s window-control=%s "
      "min-connections=2 max-connections=8 sampling-interval=300", control,
      g_str_equal (control, "congestion") ? "adjust" : "none");
  Receiver *r = receiver_new_with (sender_port (s), 0, 5000, props);
  gboolean pars_seen = FALSE, later_seen = FALSE, later_before_pars = FALSE;
  guint next = 0, pars_count = 0;

  g_free (props);
  wait_for_connections (s->sink, 5);
  /* 80 Mbit/s of stream in real time until the controller has spoken:
   * ParS wants 500 segments first, and loopback's are 64 kB */
  while (!later_seen && next < 1500) {
    gchar *reason = push_and_read_decision (s, r, &next);

    if (reason && g_str_has_prefix (reason, "ParS Eq. 19") && !pars_seen) {
      pars_seen = TRUE;
      GST_INFO ("%s: %s", control, reason);
    } else if (reason && strstr (reason, later)) {
      later_before_pars |= !pars_seen;
      later_seen = pars_seen;
    }
    g_free (reason);
  }
  fail_unless (pars_seen, "%s: no ParS decision", control);
  fail_if (later_before_pars, "%s: the controller ran before ParS", control);
  fail_unless (later_seen, "%s: no decision after ParS's", control);
  /* ParS's count on a path without loss: min-connections */
  pars_count = stats_uint (r->src, "n-connections");
  fail_unless (pars_count < 5, "%s: still %u connections", control,
      pars_count);

  gst_app_src_end_of_stream (GST_APP_SRC (s->appsrc));
  expect_tagged (r, next);
  receiver_free (r);
  sender_free (s);
}

GST_START_TEST (test_pars_count_then_congestion_control)
{
  pars_count_then_controller ("congestion", "congestion ratio");
}

GST_END_TEST;

GST_START_TEST (test_pars_count_then_rtt_control)
{
  pars_count_then_controller ("rtt", "ave_rtt");
}

GST_END_TEST;

/* ParS's count comes as soon as the sink has reported enough segments, not
 * at the end of a sampling interval: with a minute-long interval it still
 * comes while the stream runs, and nothing is lost. */
GST_START_TEST (test_pars_count_does_not_wait_for_interval)
{
  Sender *s = sender_new ("congestion-control=reno");
  Receiver *r = receiver_new_with (sender_port (s), 0, 5000,
      "sampling-interval=60000");
  gboolean pars_seen = FALSE;
  guint next = 0;

  wait_for_connections (s->sink, 5);
  /* 80 Mbit/s: 500 of loopback's 64 kB segments in about 3 s */
  while (!pars_seen && next < 1500) {
    gchar *reason = push_and_read_decision (s, r, &next);

    pars_seen = reason && g_str_has_prefix (reason, "ParS Eq. 19");
    g_free (reason);
  }
  fail_unless (pars_seen, "no ParS decision after %u buffers", next);
  GST_INFO ("ParS decided after %u buffers", next);

  gst_app_src_end_of_stream (GST_APP_SRC (s->appsrc));
  expect_tagged (r, next);
  receiver_free (r);
  sender_free (s);
}

GST_END_TEST;

static gboolean
kernel_has_congestion_control (const gchar * name)
{
  gchar *list = NULL;
  gboolean has = FALSE;

  if (g_file_get_contents ("/proc/sys/net/ipv4/tcp_available_congestion_control",
          &list, NULL, NULL)) {
    gchar **names = g_strsplit_set (g_strstrip (list), " \t", -1);
    has = g_strv_contains ((const gchar * const *) names, name);
    g_strfreev (names);
  }
  g_free (list);
  return has;
}

/* A sink with @sink_props and one receiver: the congestion control the
 * stats show for its first connection, and whether it warned. */
static gchar *
connected_congestion_control (const gchar * sink_props, gboolean * warned)
{
  Sender *s = sender_new (sink_props);
  GstBus *bus = gst_element_get_bus (s->pipeline);
  Receiver *r = receiver_new (sender_port (s), 1, 2000);
  GstStructure *st = NULL;
  const GValue *sessions, *conns;
  GstMessage *m;
  gchar *cc;

  wait_for_connections (s->sink, 1);
  g_object_get (s->sink, "stats", &st, NULL);
  sessions = gst_structure_get_value (st, "sessions");
  conns = gst_structure_get_value (gst_value_get_structure
      (gst_value_array_get_value (sessions, 0)), "connections");
  cc = g_strdup (gst_structure_get_string (gst_value_get_structure
          (gst_value_array_get_value (conns, 0)), "congestion-control"));
  gst_structure_free (st);
  m = gst_bus_pop_filtered (bus, GST_MESSAGE_WARNING);
  *warned = m != NULL;
  if (m)
    gst_message_unref (m);
  gst_object_unref (bus);
  receiver_free (r);
  sender_free (s);
  return cc;
}

/* The sink's default congestion control is bbr where the kernel has it
 * (the system's otherwise, without a warning); an empty one is the
 * system's; one the application names that the kernel refuses is a
 * warning, and the stream goes on with the system's. */
GST_START_TEST (test_congestion_control_default_and_refused)
{
  Sender *s = sender_new (NULL);
  Receiver *r;
  GstBus *bus;
  GstMessage *m;
  GError *err = NULL;
  gchar *cc = NULL, *debug = NULL;
  gboolean warned;

  g_object_get (s->sink, "congestion-control", &cc, NULL);
  fail_unless_equals_string (cc, "bbr");
  g_free (cc);
  sender_free (s);

  cc = connected_congestion_control (NULL, &warned);
  if (kernel_has_congestion_control ("bbr"))
    fail_unless_equals_string (cc, "bbr");
  fail_if (warned, "a warning for the default");
  g_free (cc);
  /* empty: the system's, whatever it is */
  cc = connected_congestion_control ("congestion-control=\"\"", &warned);
  fail_unless (cc != NULL && *cc != '\0');
  g_free (cc);
  cc = connected_congestion_control ("congestion-control=reno", &warned);
  if (kernel_has_congestion_control ("reno"))
    fail_unless_equals_string (cc, "reno");
  g_free (cc);

  s = sender_new ("congestion-control=nosuchcc");
  bus = gst_element_get_bus (s->pipeline);
  r = receiver_new (sender_port (s), 1, 2000);
  wait_for_connections (s->sink, 1);
  m = gst_bus_timed_pop_filtered (bus, 5 * GST_SECOND, GST_MESSAGE_WARNING);
  fail_unless (m != NULL, "no warning for a congestion control refused");
  gst_message_parse_warning (m, &err, &debug);
  fail_unless (strstr (debug, "nosuchcc") != NULL, "%s", debug);
  g_error_free (err);
  g_free (debug);
  gst_message_unref (m);
  gst_object_unref (bus);
  stream_and_check (s, &r, 1, 60, TRUE);
  receiver_free (r);
  sender_free (s);
}

GST_END_TEST;

static void
count_warning (const gchar * message, gpointer data)
{
  g_atomic_int_inc ((gint *) data);
}

/* A congestion control the sink only prefers (the transport's
 * congestion_control_optional, for a default the element might choose)
 * falls back to the system's without a warning when refused. */
GST_START_TEST (test_preferred_congestion_control_falls_back_quietly)
{
  gboolean optional;

  for (optional = FALSE; optional <= TRUE; optional++) {
    MtcpServerConfig config = { 0, };
    MtcpServer *server;
    RawConn rc;
    guint8 sid[MTCP_SESSION_ID_SIZE];
    gint warnings = 0;

    config.host = (gchar *) "127.0.0.1";
    config.scheduler = MTCP_SCHEDULER_DYNAMIC;
    config.limits.max_lag_time = GST_CLOCK_TIME_NONE;
    config.max_frame = MTCP_MAX_FRAME_DEFAULT;
    config.max_sessions = 4;
    config.max_connections = 4;
    config.handshake_timeout_ms = 5000;
    config.max_pending_handshakes = 8;
    config.report_interval_ms = 200;
    config.session_timeout_ms = 1000;
    config.congestion_control = (gchar *) "nosuchcc";
    config.congestion_control_optional = optional;
    server = mtcp_server_new (&config, count_warning, &warnings);
    fail_unless (mtcp_server_start (server, NULL));
    raw_conn_open (&rc, mtcp_server_get_port (server), NULL, 0, sid);
    g_usleep (300000);
    fail_unless_equals_int (g_atomic_int_get (&warnings), optional ? 0 : 1);
    raw_conn_close (&rc);
    mtcp_server_stop (server);
    mtcp_server_unref (server);
  }
}

GST_END_TEST;

/* A sink on bbr reports that loss does not bound its connections' rate:
 * ParS's Eq. 19, loss-based TCP's rate, is taken as for a path without
 * loss (min-connections), from the first REPORT on, with no loss rate
 * to wait for. */
GST_START_TEST (test_pars_without_loss_for_bbr_sink)
{
  Sender *s = sender_new ("congestion-control=bbr");
  Receiver *r = receiver_new_with (sender_port (s), 0, 5000,
      "min-connections=2");
  gchar *reason = NULL;
  guint next = 0, i;

  wait_for_connections (s->sink, 5);
  /* empty until the source has decided */
  while ((reason == NULL || *reason == '\0') && next < 1500) {
    g_free (reason);
    reason = push_and_read_decision (s, r, &next);
  }
  fail_unless (reason && g_str_has_prefix (reason,
          "ParS Eq. 19 without loss") && strstr (reason, "-> 2 connections"),
      "decision: %s", GST_STR_NULL (reason));
  GST_INFO ("%s (after %u buffers)", reason, next);
  g_free (reason);
  for (i = 0; i < 100 && stats_uint (r->src, "n-connections") != 2; i++)
    g_free (push_and_read_decision (s, r, &next));
  fail_unless_equals_int (stats_uint (r->src, "n-connections"), 2);

  gst_app_src_end_of_stream (GST_APP_SRC (s->appsrc));
  expect_tagged (r, next);
  receiver_free (r);
  sender_free (s);
}

GST_END_TEST;

/* The acknowledgement is the session's: FEEDBACK goes out on one
 * connection a tick, and on each at least every 500 ms (keepalive). */
GST_START_TEST (test_feedback_rotates_over_connections)
{
  Sender *s = sender_new (NULL);
  Receiver *r = receiver_new (sender_port (s), 8, 5000);
  guint64 before, after;
  GstStructure *st = NULL;
  const GValue *sessions, *conns;
  guint j;

  wait_for_connections (s->sink, 8);
  g_usleep (G_USEC_PER_SEC);
  before = sink_stats_sum (s->sink, TRUE, "frames-received");
  g_usleep (3 * G_USEC_PER_SEC);
  after = sink_stats_sum (s->sink, TRUE, "frames-received");
  GST_INFO ("%" G_GUINT64_FORMAT " frames from the receiver in 3 s over 8 "
      "connections", after - before);
  /* every connection every 100 ms would be 240 */
  fail_unless (after - before < 120, "%" G_GUINT64_FORMAT " frames",
      after - before);
  /* and each connection is heard from: none is taken for dead */
  g_object_get (s->sink, "stats", &st, NULL);
  sessions = gst_structure_get_value (st, "sessions");
  conns = gst_structure_get_value (gst_value_get_structure
      (gst_value_array_get_value (sessions, 0)), "connections");
  fail_unless_equals_int (gst_value_array_get_size (conns), 8);
  for (j = 0; j < 8; j++) {
    guint64 frames = 0;
    gst_structure_get_uint64 (gst_value_get_structure
        (gst_value_array_get_value (conns, j)), "frames-received", &frames);
    /* HELLO and a FEEDBACK every 500 ms for 4 s */
    fail_unless (frames >= 5, "connection %u: %" G_GUINT64_FORMAT
        " frames", j, frames);
  }
  gst_structure_free (st);
  receiver_free (r);
  sender_free (s);
}

GST_END_TEST;

/* A TCP relay in front of a sink: forwards the first @forward calls and
 * holds the later ones unanswered (a dial still on its way, as over a
 * slow path), and tells which of those the dialer closed. */
typedef struct
{
  GSocket *listen;
  gint sink_port;
  guint forward;
  GMutex lock;
  GPtrArray *held;              /* GSocket* accepted, never forwarded */
  GPtrArray *threads;           /* GThread* acceptor and pipes */
  guint accepted;
  gint stop;                    /* atomic */
} Relay;

typedef struct
{
  GSocket *from, *to;
  Relay *relay;
} RelayPipe;

/* Copies one direction until EOF or the relay stops, then half-closes. */
static gpointer
relay_pipe_run (gpointer data)
{
  RelayPipe *p = data;
  gchar buf[16384];

  while (!g_atomic_int_get (&p->relay->stop)) {
    gssize n, off = 0;

    /* blocking otherwise: a busy machine must not cut a working pipe */
    if (!g_socket_condition_timed_wait (p->from, G_IO_IN, 200000, NULL,
            NULL))
      continue;
    n = g_socket_receive (p->from, buf, sizeof buf, NULL, NULL);
    if (n <= 0)
      break;
    while (off < n) {
      gssize w = g_socket_send (p->to, buf + off, n - off, NULL, NULL);
      if (w <= 0)
        goto done;
      off += w;
    }
  }
done:
  g_socket_shutdown (p->to, FALSE, TRUE, NULL);
  g_object_unref (p->from);
  g_object_unref (p->to);
  g_free (p);
  return NULL;
}

static void
relay_start_pipe (Relay * relay, GSocket * from, GSocket * to)
{
  RelayPipe *p = g_new0 (RelayPipe, 1);

  p->from = g_object_ref (from);
  p->to = g_object_ref (to);
  p->relay = relay;
  g_mutex_lock (&relay->lock);
  g_ptr_array_add (relay->threads, g_thread_new ("relay-pipe",
          relay_pipe_run, p));
  g_mutex_unlock (&relay->lock);
}

static gpointer
relay_accept_run (gpointer data)
{
  Relay *relay = data;

  while (!g_atomic_int_get (&relay->stop)) {
    GError *err = NULL;
    GSocket *in, *up;
    GInetAddress *lo;
    GSocketAddress *addr;
    gboolean connected;

    if (!g_socket_condition_timed_wait (relay->listen, G_IO_IN, 200000, NULL,
            NULL))
      continue;                 /* look at stop again */
    in = g_socket_accept (relay->listen, NULL, &err);
    if (in == NULL) {
      g_clear_error (&err);
      continue;
    }
    if (relay->accepted++ >= relay->forward) {
      g_mutex_lock (&relay->lock);
      g_ptr_array_add (relay->held, in);
      g_mutex_unlock (&relay->lock);
      continue;
    }
    up = g_socket_new (G_SOCKET_FAMILY_IPV4, G_SOCKET_TYPE_STREAM,
        G_SOCKET_PROTOCOL_TCP, NULL);
    lo = g_inet_address_new_loopback (G_SOCKET_FAMILY_IPV4);
    addr = g_inet_socket_address_new (lo, relay->sink_port);
    /* no check here (a thread): the test sees a call not forwarded */
    connected = up && g_socket_connect (up, addr, NULL, NULL);
    g_object_unref (addr);
    g_object_unref (lo);
    if (connected) {
      relay_start_pipe (relay, in, up);
      relay_start_pipe (relay, up, in);
    }
    g_clear_object (&up);
    g_object_unref (in);
  }
  return NULL;
}

static Relay *
relay_new (gint sink_port, guint forward)
{
  Relay *relay = g_new0 (Relay, 1);
  GInetAddress *lo = g_inet_address_new_loopback (G_SOCKET_FAMILY_IPV4);
  GSocketAddress *addr = g_inet_socket_address_new (lo, 0);

  relay->sink_port = sink_port;
  relay->forward = forward;
  g_mutex_init (&relay->lock);
  relay->held = g_ptr_array_new_with_free_func (g_object_unref);
  relay->threads = g_ptr_array_new ();
  relay->listen = g_socket_new (G_SOCKET_FAMILY_IPV4, G_SOCKET_TYPE_STREAM,
      G_SOCKET_PROTOCOL_TCP, NULL);
  fail_unless (g_socket_bind (relay->listen, addr, TRUE, NULL));
  fail_unless (g_socket_listen (relay->listen, NULL));
  g_object_unref (addr);
  g_object_unref (lo);
  g_ptr_array_add (relay->threads, g_thread_new ("relay-accept",
          relay_accept_run, relay));
  return relay;
}

static gint
relay_port (Relay * relay)
{
  GSocketAddress *addr = g_socket_get_local_address (relay->listen, NULL);
  gint port = g_inet_socket_address_get_port (G_INET_SOCKET_ADDRESS (addr));

  g_object_unref (addr);
  return port;
}

static guint
relay_held (Relay * relay)
{
  guint n;

  g_mutex_lock (&relay->lock);
  n = relay->held->len;
  g_mutex_unlock (&relay->lock);
  return n;
}

/* How many held calls the dialer closed (EOF), reading what they sent. */
static guint
relay_held_closed (Relay * relay)
{
  guint i, closed = 0;

  g_mutex_lock (&relay->lock);
  for (i = 0; i < relay->held->len; i++) {
    GSocket *sock = g_ptr_array_index (relay->held, i);
    gchar buf[4096];
    gssize n;

    while (g_socket_condition_check (sock, G_IO_IN | G_IO_HUP) &&
        (n = g_socket_receive (sock, buf, sizeof buf, NULL, NULL)) > 0);
    if (g_socket_condition_check (sock, G_IO_IN | G_IO_HUP) &&
        g_socket_receive (sock, buf, sizeof buf, NULL, NULL) == 0)
      closed++;
  }
  g_mutex_unlock (&relay->lock);
  return closed;
}

static void
relay_free (Relay * relay)
{
  guint i;

  g_atomic_int_set (&relay->stop, 1);
  /* the acceptor first: it adds pipes while it runs */
  g_thread_join (g_ptr_array_index (relay->threads, 0));
  for (i = 1; i < relay->threads->len; i++)
    g_thread_join (g_ptr_array_index (relay->threads, i));
  g_ptr_array_free (relay->threads, TRUE);
  g_ptr_array_free (relay->held, TRUE);
  g_socket_close (relay->listen, NULL);
  g_object_unref (relay->listen);
  g_mutex_clear (&relay->lock);
  g_free (relay);
}

/* The count falls while a dial is still on its way (a trial given back
 * before its connection came up): that dial goes, not a connection that
 * carries the stream. */
GST_START_TEST (test_count_falling_drops_the_pending_dial)
{
  Sender *s = sender_new (NULL);
  Relay *relay = relay_new (sender_port (s), 2);
  Receiver *r = receiver_new (relay_port (relay), 2, 2000);
  gint64 until;

  wait_for_connections (s->sink, 2);
  g_object_set (r->src, "connections", 3, NULL);
  until = g_get_monotonic_time () + 5 * G_USEC_PER_SEC;
  while (relay_held (relay) < 1 && g_get_monotonic_time () < until)
    g_usleep (10000);
  fail_unless_equals_int (relay_held (relay), 1);

  g_object_set (r->src, "connections", 2, NULL);
  until = g_get_monotonic_time () + 5 * G_USEC_PER_SEC;
  while (relay_held_closed (relay) < 1 && g_get_monotonic_time () < until)
    g_usleep (20000);
  fail_unless_equals_int (relay_held_closed (relay), 1);
  /* neither working connection was retired for it */
  g_usleep (500 * 1000);
  fail_unless_equals_int (stats_uint (r->src, "n-connections"), 2);
  fail_unless_equals_uint64 (stats_uint64 (r->src, "dials-dropped"), 1);
  fail_unless_equals_uint64 (stats_uint64 (r->src, "connections-lost"), 0);
  stream_and_check (s, &r, 1, 50, TRUE);
  receiver_free (r);
  sender_free (s);
  relay_free (relay);
}

GST_END_TEST;

/* The receiver asks for more connections than the sink lets a session
 * have: it keeps what the sink took and stops dialing the rest for a
 * while (each was refused again, a few a second, for as long as the
 * stream ran); the count it wants stays the control's. */
GST_START_TEST (test_count_over_the_sinks_limit_stops_dialing)
{
  Sender *s = sender_new ("max-connections=3");
  Receiver *r = receiver_new (sender_port (s), 6, 2000);

  /* the sink's WELCOME says it takes 3: no dial over that, none refused
   * (before the WELCOME said it, the first dials over it were refused and
   * the refusals held the rest back for 10 s at a time) */
  wait_for_connections (s->sink, 3);
  g_usleep (2 * G_USEC_PER_SEC);
  /* an outage probe (a sink stalled a second on a loaded machine) is
   * refused by a full sink: that one is not a dial over the limit */
  fail_unless (stats_uint64 (r->src, "connections-lost") <=
      stats_uint64 (r->src, "outage-probes"), "%" G_GUINT64_FORMAT
      " refused, %" G_GUINT64_FORMAT " probes",
      stats_uint64 (r->src, "connections-lost"),
      stats_uint64 (r->src, "outage-probes"));
  fail_unless_equals_int (stats_uint (r->src, "n-connections"), 3);
  fail_unless_equals_int (stats_uint (r->src, "wanted-connections"), 6);
  stream_and_check (s, &r, 1, 50, TRUE);
  receiver_free (r);
  sender_free (s);
}

GST_END_TEST;

static Suite *
control_elements_suite (void)
{
  Suite *s = suite_create ("control_elements");
  TCase *tc = tcase_create ("loopback");

  suite_add_tcase (s, tc);
  tcase_set_timeout (tc, 120);
  tcase_add_test (tc, test_connection_count_change_loses_nothing);
  tcase_add_test (tc, test_pars_count_then_congestion_control);
  tcase_add_test (tc, test_pars_count_then_rtt_control);
  tcase_add_test (tc, test_pars_count_does_not_wait_for_interval);
  tcase_add_test (tc, test_pars_without_loss_for_bbr_sink);
  tcase_add_test (tc, test_congestion_control_default_and_refused);
  tcase_add_test (tc, test_preferred_congestion_control_falls_back_quietly);
  tcase_add_test (tc, test_feedback_rotates_over_connections);
  tcase_add_test (tc, test_count_falling_drops_the_pending_dial);
  tcase_add_test (tc, test_count_over_the_sinks_limit_stops_dialing);
  return s;
}

GST_CHECK_MAIN (control_elements);

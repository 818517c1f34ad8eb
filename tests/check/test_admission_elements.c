/* multitcp
 * Copyright (C) 2026 the multitcp authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
/* Who gets in: TLS, the passphrase, unreachable hosts named in errors,
 * hostile peers refused without touching the session, and a flood of
 * connections kept within bounds while a real receiver streams. */
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

/* ---- TLS ---- */

/* The error a receiver with @props posts against the sink on @port. */
static gchar *
receiver_error (gint port, const gchar * props)
{
  gchar *desc = g_strdup_printf ("multitcpsrc host=127.0.0.1 port=%d "
      "connections=3 %s ! fakesink", port, props);
  GstElement *p = gst_parse_launch (desc, NULL);
  gchar *text;

  g_free (desc);
  gst_element_set_state (p, GST_STATE_PLAYING);
  text = wait_for_error (p, 20 * GST_SECOND);
  gst_element_set_state (p, GST_STATE_NULL);
  gst_object_unref (p);
  return text;
}

/* Everything arrives over 3 connections that all use TLS; a receiver that
 * does not trust the certificate, or does not speak TLS, gets a clear
 * error and does not retry in a loop. */
GST_START_TEST (test_tls)
{
  gchar *dir = make_tls_certificate ();
  gchar *props, *src_props, *text;
  Sender *s;
  Receiver *r;
  guint64 accepted;

  if (dir == NULL) {
    g_print ("SKIP test_tls: openssl is not installed\n");
    return;
  }
  props = g_strdup_printf ("tls=true tls-certificate-file=%s/cert.pem "
      "tls-key-file=%s/key.pem", dir, dir);
  s = sender_new (props);

  /* trusted: byte-exact over 3 TLS connections */
  src_props = g_strdup_printf ("tls=true tls-ca-file=%s/cert.pem", dir);
  r = receiver_new_with (sender_port (s), 3, 5000, src_props);
  wait_for_connections (s->sink, 3);
  stream_and_check (s, &r, 1, 200, TRUE);
  receiver_free (r);
  g_free (src_props);

  /* not trusted (the system's CAs do not know it): refused, named, and
   * with one connection only: no retry storm */
  accepted = stats_uint64 (s->sink, "connections-accepted");
  text = receiver_error (sender_port (s), "tls=true");
  fail_unless (text && strstr (text, "certificate"), "error: %s", text);
  g_free (text);
  g_usleep (G_USEC_PER_SEC / 2);
  fail_unless_equals_uint64 (stats_uint64 (s->sink, "connections-accepted"),
      accepted + 1);

  /* no TLS on the receiver: an error, not a hang, and one connection */
  text = receiver_error (sender_port (s), "timeout=5");
  fail_unless (text != NULL);
  GST_INFO ("plain receiver, TLS sink: %s", text);
  g_free (text);
  g_usleep (G_USEC_PER_SEC / 2);
  fail_unless_equals_uint64 (stats_uint64 (s->sink, "connections-accepted"),
      accepted + 2);
  sender_free (s);
  g_free (props);

  /* TLS receiver, plain sink: an error too */
  s = sender_new (NULL);
  text = receiver_error (sender_port (s), "tls=true timeout=5");
  fail_unless (text != NULL);
  GST_INFO ("TLS receiver, plain sink: %s", text);
  g_free (text);
  sender_free (s);

  /* TLS without a certificate: the sink says what is missing */
  {
    GstElement *p = gst_parse_launch ("fakesrc ! multitcpsink tls=true "
        "port=0", NULL);
    fail_unless_equals_int (gst_element_set_state (p, GST_STATE_PLAYING),
        GST_STATE_CHANGE_FAILURE);
    text = wait_for_error (p, GST_SECOND);
    fail_unless (text && strstr (text, "tls-certificate"), "error: %s", text);
    g_free (text);
    gst_element_set_state (p, GST_STATE_NULL);
    gst_object_unref (p);
  }
  remove_tls_certificate (dir);
}

GST_END_TEST;

GST_START_TEST (test_unreachable_host_names_host_and_port)
{
  GstElement *pipeline;
  GstBus *bus;
  GstMessage *msg;
  GError *err = NULL;
  gchar *dbg = NULL;
  GSocket *sock;
  GSocketAddress *addr;
  GInetAddress *lo = g_inet_address_new_loopback (G_SOCKET_FAMILY_IPV4);
  guint port;
  gchar *desc;

  /* a port nobody listens on: bind one, read it, close it */
  sock = g_socket_new (G_SOCKET_FAMILY_IPV4, G_SOCKET_TYPE_STREAM,
      G_SOCKET_PROTOCOL_TCP, NULL);
  addr = g_inet_socket_address_new (lo, 0);
  fail_unless (g_socket_bind (sock, addr, TRUE, NULL));
  g_object_unref (addr);
  addr = g_socket_get_local_address (sock, NULL);
  port = g_inet_socket_address_get_port (G_INET_SOCKET_ADDRESS (addr));
  g_object_unref (addr);
  g_socket_close (sock, NULL);
  g_object_unref (sock);
  g_object_unref (lo);

  desc = g_strdup_printf ("multitcpsrc host=127.0.0.1 port=%u timeout=2 ! "
      "fakesink", port);
  pipeline = gst_parse_launch (desc, NULL);
  g_free (desc);
  fail_unless_equals_int (gst_element_set_state (pipeline, GST_STATE_PLAYING),
      GST_STATE_CHANGE_FAILURE);
  bus = gst_element_get_bus (pipeline);
  msg = gst_bus_timed_pop_filtered (bus, GST_SECOND, GST_MESSAGE_ERROR);
  fail_unless (msg != NULL);
  gst_message_parse_error (msg, &err, &dbg);
  desc = g_strdup_printf ("127.0.0.1:%u", port);
  fail_unless (strstr (err->message, desc) != NULL, "'%s' lacks '%s'",
      err->message, desc);
  g_free (desc);
  g_error_free (err);
  g_free (dbg);
  gst_message_unref (msg);
  gst_object_unref (bus);
  gst_element_set_state (pipeline, GST_STATE_NULL);
  gst_object_unref (pipeline);
}

GST_END_TEST;

/* ---- a hand-driven peer, speaking the protocol byte by byte ---- */

GST_START_TEST (test_hostile_peers_are_refused_and_session_untouched)
{
  Sender *s = sender_new (NULL);
  gint port = sender_port (s);
  Receiver *r = receiver_new (port, 3, 5000);
  guint8 frame[64];
  GSocket *sock;
  gchar *reason;
  gboolean closed;

  wait_for_connections (s->sink, 3);

  /* wrong magic */
  sock = raw_connect (port);
  write_hello (frame, 0xdeadbeef, MTCP_VERSION);
  raw_send (sock, frame, MTCP_HELLO_FRAME_SIZE);
  reason = raw_read_refusal (sock, &closed);
  fail_unless (closed);
  fail_unless (reason && strstr (reason, "magic"), "reason: %s", reason);
  g_free (reason);
  g_object_unref (sock);

  /* wrong version */
  sock = raw_connect (port);
  write_hello (frame, MTCP_MAGIC, 99);
  raw_send (sock, frame, MTCP_HELLO_FRAME_SIZE);
  reason = raw_read_refusal (sock, &closed);
  fail_unless (closed);
  fail_unless (reason && strstr (reason, "version"), "reason: %s", reason);
  g_free (reason);
  g_object_unref (sock);

  /* a join with a session id nobody has */
  sock = raw_connect (port);
  {
    MtcpHello hello = { 0, };
    hello.magic = MTCP_MAGIC;
    hello.version = MTCP_VERSION;
    hello.flags = MTCP_HELLO_FLAG_JOIN;
    memset (hello.session_id, 0x42, MTCP_SESSION_ID_SIZE);
    mtcp_write_hello (frame, sizeof (frame), &hello);
  }
  raw_send (sock, frame, MTCP_HELLO_FRAME_SIZE);
  reason = raw_read_refusal (sock, &closed);
  fail_unless (closed);
  fail_unless (reason && strstr (reason, "session"), "reason: %s", reason);
  g_free (reason);
  g_object_unref (sock);

  /* a huge length field */
  sock = raw_connect (port);
  mtcp_write_header (frame, MTCP_FRAME_BUFFER, 0, 0xfffffff0u);
  raw_send (sock, frame, MTCP_HEADER_SIZE);
  g_free (raw_read_refusal (sock, &closed));
  fail_unless (closed);
  g_object_unref (sock);

  /* garbage */
  sock = raw_connect (port);
  {
    guint8 junk[256];
    guint i;
    for (i = 0; i < sizeof (junk); i++)
      junk[i] = (guint8) (i * 37 + 11);
    raw_send (sock, junk, sizeof (junk));
  }
  g_free (raw_read_refusal (sock, &closed));
  fail_unless (closed);
  g_object_unref (sock);

  /* a HELLO cut off mid-way, then gone */
  sock = raw_connect (port);
  write_hello (frame, MTCP_MAGIC, MTCP_VERSION);
  raw_send (sock, frame, MTCP_HELLO_FRAME_SIZE / 2);
  g_socket_close (sock, NULL);
  g_object_unref (sock);

  /* the legitimate session is untouched */
  fail_unless (stats_uint64 (s->sink, "refused") >= 3);
  fail_unless (stats_uint64 (s->sink, "protocol-errors") >= 1);
  stream_and_check (s, &r, 1, 200, TRUE);
  receiver_free (r);
  sender_free (s);
}

GST_END_TEST;

/* ---- a flood of connections that never finish their handshake ---- */

#define FLOOD_IDLE 300          /* connect, send nothing */

#define FLOOD_PARTIAL 100       /* half a HELLO, then nothing */

#define FLOOD_GARBAGE 50        /* 4 kB of noise */

#define FLOOD_BIG_CLAIM 50      /* a BUFFER header claiming 8 MB, then 512 kB */

#define FLOOD_BIG_CLAIM_BYTES (512 * 1024)

#define FLOOD_TOTAL (FLOOD_IDLE + FLOOD_PARTIAL + FLOOD_GARBAGE + \
    FLOOD_BIG_CLAIM)
#define FLOOD_MAX_PENDING 64

#define FLOOD_STREAM_BUFFERS 1000

typedef struct {
  gint port;
  GstElement *sink;
  GPtrArray *socks;             /* GSocket*, kept open by us */
  guint pending_seen;           /* most pending handshakes the sink reported */
  guint64 rss_peak_kb;
} Flood;

/* Writes what the peer takes; it may close on us at any time. */
static void
flood_send (GSocket * sock, const guint8 * data, gsize size)
{
  gsize done = 0;
  guint stalls = 0;

  g_socket_set_blocking (sock, FALSE);
  while (done < size && stalls < 2000) {
    GError *err = NULL;
    gssize n = g_socket_send (sock, (const gchar *) data + done, size - done,
        NULL, &err);
    if (n > 0) {
      done += n;
      continue;
    }
    if (!g_error_matches (err, G_IO_ERROR, G_IO_ERROR_WOULD_BLOCK)) {
      g_clear_error (&err);
      break;
    }
    g_clear_error (&err);
    stalls++;
    g_usleep (1000);
  }
}

static gpointer
flood_thread (gpointer data)
{
  Flood *flood = data;
  guint8 *big = g_malloc (FLOOD_BIG_CLAIM_BYTES);
  guint8 hello[MTCP_HELLO_FRAME_SIZE];
  guint i;

  for (i = 0; i < FLOOD_BIG_CLAIM_BYTES; i++)
    big[i] = (guint8) (i * 131 + 7);
  write_hello (hello, MTCP_MAGIC, MTCP_VERSION);
  for (i = 0; i < FLOOD_TOTAL; i++) {
    GSocket *sock = raw_connect (flood->port);
    guint kind = i % 10;        /* mixed, so every kind meets the others */

    if (kind < 6) {
      /* idle */
    } else if (kind < 8) {
      flood_send (sock, hello, MTCP_HELLO_FRAME_SIZE / 2);
    } else if (kind < 9) {
      flood_send (sock, big + 1000, 4096);
    } else {
      mtcp_write_header (big, MTCP_FRAME_BUFFER, 0, 8 * 1024 * 1024);
      flood_send (sock, big, FLOOD_BIG_CLAIM_BYTES);
    }
    g_ptr_array_add (flood->socks, sock);
    if (i % 10 == 9) {
      flood->pending_seen = MAX (flood->pending_seen,
          stats_uint (flood->sink, "pending-handshakes"));
      flood->rss_peak_kb = MAX (flood->rss_peak_kb, rss_kb ());
    }
  }
  g_free (big);
  return NULL;
}

/* TRUE once the sink closed @sock (EOF or reset), FALSE while open. */
static gboolean
peer_closed (GSocket * sock)
{
  guint8 buf[4096];

  g_socket_set_blocking (sock, FALSE);
  for (;;) {
    GError *err = NULL;
    gssize n = g_socket_receive (sock, (gchar *) buf, sizeof (buf), NULL,
        &err);
    if (n > 0)
      continue;                 /* a REFUSE frame before the close */
    if (n == 0)
      return TRUE;
    if (g_error_matches (err, G_IO_ERROR, G_IO_ERROR_WOULD_BLOCK)) {
      g_error_free (err);
      return FALSE;
    }
    g_error_free (err);
    return TRUE;
  }
}

typedef struct {
  GstElement *appsink;
  GstElement *src;              /* the receiver's, for its counters */
  guint n;
  guint received;               /* byte-exact and in order */
  gchar *failure;
} Checker;

static GstBuffer *
flood_stream_buffer (GRand * rand, guint i)
{
  GstBuffer *buf = make_payload (rand, i, 2000 + g_rand_int_range (rand, 0,
          4000));
  GST_BUFFER_PTS (buf) = GST_BUFFER_DTS (buf) = i * 5 * GST_MSECOND;
  GST_BUFFER_DURATION (buf) = 5 * GST_MSECOND;
  if (i % 50 != 0)
    GST_BUFFER_FLAG_SET (buf, GST_BUFFER_FLAG_DELTA_UNIT);
  return buf;
}

static gpointer
checker_thread (gpointer data)
{
  Checker *c = data;
  GRand *rand = g_rand_new_with_seed (99);
  guint i;

  for (i = 0; i < c->n; i++) {
    GstSample *sample = gst_app_sink_try_pull_sample (GST_APP_SINK
        (c->appsink), WAIT_TIMEOUT);
    GstBuffer *want = flood_stream_buffer (rand, i);

    if (sample == NULL) {
      c->failure = g_strdup_printf ("buffer %u missing", i);
      gst_buffer_unref (want);
      break;
    }
    if (!buffers_equal (gst_sample_get_buffer (sample), want)) {
      GstBuffer *got = gst_sample_get_buffer (sample);
      guint8 head[4] = { 0, };

      /* a skip (a later index) or a wrong buffer: the message tells which */
      gst_buffer_extract (got, 0, head, sizeof (head));
      c->failure = g_strdup_printf ("buffer %u differs: got index %u, "
          "%" G_GSIZE_FORMAT " bytes (want %" G_GSIZE_FORMAT "), PTS %"
          GST_TIME_FORMAT "; receiver late %" G_GUINT64_FORMAT ", skipped %"
          G_GUINT64_FORMAT ", dropped by the sender %" G_GUINT64_FORMAT, i,
          GST_READ_UINT32_BE (head), gst_buffer_get_size (got),
          gst_buffer_get_size (want), GST_TIME_ARGS (GST_BUFFER_PTS (got)),
          stats_uint64 (c->src, "buffers-late"), stats_uint64 (c->src,
              "buffers-skipped"), stats_uint64 (c->src,
              "buffers-sender-dropped"));
      gst_sample_unref (sample);
      gst_buffer_unref (want);
      break;
    }
    c->received++;
    gst_sample_unref (sample);
    gst_buffer_unref (want);
  }
  g_rand_free (rand);
  return NULL;
}

/* While a session streams, 500 connections arrive that never finish a
 * handshake: idle ones, cut-off HELLOs, noise, and headers that claim
 * 8 MB and send 512 kB of it. The session loses nothing, the sink never
 * holds more than max-pending-handshakes of them, its memory stays flat,
 * and the last of them are closed by the handshake timeout. */
GST_START_TEST (test_connection_flood_bounded)
{
  Sender *s = sender_new ("max-pending-handshakes=64 handshake-timeout=2000");
  gint port = sender_port (s);
  Receiver *r = receiver_new (port, 3, 2000);
  Flood flood = { 0, };
  Checker checker = { 0, };
  GThread *flooder, *check;
  GRand *rand = g_rand_new_with_seed (99);
  GstCaps *caps = gst_caps_new_empty_simple ("application/x-test");
  struct rlimit nofile;
  guint64 rss_before, open;
  gint64 until, start;
  guint i;

  /* 500 of ours, up to 64 + 3 of the sink's, and the rest of the process */
  fail_unless (getrlimit (RLIMIT_NOFILE, &nofile) == 0);
  if (nofile.rlim_cur < 4096) {
    nofile.rlim_cur = MIN (nofile.rlim_max, 4096);
    fail_unless (setrlimit (RLIMIT_NOFILE, &nofile) == 0);
  }
  fail_unless (nofile.rlim_cur >= FLOOD_TOTAL + 200,
      "need %d file descriptors, may have %lu", FLOOD_TOTAL + 200,
      (gulong) nofile.rlim_cur);

  wait_for_connections (s->sink, 3);
  checker.appsink = r->appsink;
  checker.src = r->src;
  checker.n = FLOOD_STREAM_BUFFERS;
  check = g_thread_new ("checker", checker_thread, &checker);
  gst_app_src_set_caps (GST_APP_SRC (s->appsrc), caps);

  flood.port = port;
  flood.sink = s->sink;
  flood.socks = g_ptr_array_new_with_free_func (g_object_unref);
  flooder = NULL;
  rss_before = 0;
  /* 5 s of stream, live; the flood starts once it runs */
  start = g_get_monotonic_time ();
  for (i = 0; i < FLOOD_STREAM_BUFFERS; i++) {
    pace_live (start, i, 5000);
    fail_unless_equals_int (gst_app_src_push_buffer (GST_APP_SRC (s->appsrc),
            flood_stream_buffer (rand, i)), GST_FLOW_OK);
    if (i == 100) {
      rss_before = rss_kb ();
      flood.rss_peak_kb = rss_before;
      flooder = g_thread_new ("flood", flood_thread, &flood);
    }
  }
  gst_app_src_end_of_stream (GST_APP_SRC (s->appsrc));
  g_thread_join (flooder);
  g_thread_join (check);

  fail_unless (checker.failure == NULL, "%s", checker.failure);
  fail_unless_equals_int (checker.received, FLOOD_STREAM_BUFFERS);
  fail_unless (gst_app_sink_try_pull_sample (GST_APP_SINK (r->appsink),
          WAIT_TIMEOUT) == NULL);
  fail_unless (gst_app_sink_is_eos (GST_APP_SINK (r->appsink)));
  fail_unless_equals_uint64 (stats_uint64 (r->src, "buffers-late"), 0);
  fail_unless_equals_uint64 (stats_uint64 (r->src, "buffers-skipped"), 0);
  fail_unless_equals_uint64 (stats_uint64 (r->src, "buffers-pushed"),
      FLOOD_STREAM_BUFFERS);
  fail_unless_equals_int (stats_uint (r->src, "n-connections"), 3);

  /* 50 peers sent 512 kB each into frames they claimed: 25 MB a sink that
   * buffered them would hold. The whole process (sender, receiver, stream)
   * grows by less than 20 MB; measured a few MB. */
  GST_INFO ("RSS %" G_GUINT64_FORMAT " kB before the flood, peak %"
      G_GUINT64_FORMAT " kB, pending peak %u", rss_before, flood.rss_peak_kb,
      stats_uint (s->sink, "pending-handshakes-peak"));
  if (!RSS_IS_MEANINGFUL)
    GST_INFO ("under AddressSanitizer: freed memory sits in its quarantine, "
        "RSS bound not checked");
  else
    fail_unless (flood.rss_peak_kb < rss_before + 20 * 1024,
        "RSS grew from %" G_GUINT64_FORMAT " to %" G_GUINT64_FORMAT " kB",
        rss_before, flood.rss_peak_kb);

  /* never more than the limit waited for a handshake */
  fail_unless (flood.pending_seen <= FLOOD_MAX_PENDING);
  fail_unless (stats_uint (s->sink, "pending-handshakes-peak") <=
      FLOOD_MAX_PENDING, "peak %u", stats_uint (s->sink,
          "pending-handshakes-peak"));
  fail_unless (stats_uint64 (s->sink, "connections-rejected") >=
      FLOOD_IDLE + FLOOD_PARTIAL - FLOOD_MAX_PENDING - FLOOD_GARBAGE -
      FLOOD_BIG_CLAIM);

  /* the handshake timeout closes what is left: every socket sees its end */
  until = g_get_monotonic_time () + 30 * G_USEC_PER_SEC;
  do {
    open = 0;
    for (i = 0; i < flood.socks->len; i++)
      if (!peer_closed (g_ptr_array_index (flood.socks, i)))
        open++;
    if (open == 0 && stats_uint (s->sink, "pending-handshakes") == 0)
      break;
    g_usleep (100000);
  } while (g_get_monotonic_time () < until);
  fail_unless_equals_uint64 (open, 0);
  fail_unless_equals_int (stats_uint (s->sink, "pending-handshakes"), 0);
  fail_unless (stats_uint64 (s->sink, "handshakes-timed-out") >= 1);
  /* each went one of these ways (whether noise is read before the
   * connection is pushed out depends on scheduling) */
  fail_unless (stats_uint64 (s->sink, "connections-rejected") +
      stats_uint64 (s->sink, "handshakes-timed-out") +
      stats_uint64 (s->sink, "protocol-errors") +
      stats_uint64 (s->sink, "refused") >= FLOOD_TOTAL);
  /* and the session is still there, with its three connections */
  fail_unless_equals_int (sink_connections (s->sink), 3);

  g_ptr_array_unref (flood.socks);
  gst_caps_unref (caps);
  g_rand_free (rand);
  receiver_free (r);
  sender_free (s);
}

GST_END_TEST;

/* ---- passphrase ---- */

static GstElement *
start_receiver_expecting_error (gint port, const gchar * props, gchar ** msg)
{
  gchar *desc = g_strdup_printf ("multitcpsrc host=127.0.0.1 port=%d "
      "connections=2 %s ! fakesink", port, props);
  GstElement *pipeline = gst_parse_launch (desc, NULL);
  GstBus *bus = gst_element_get_bus (pipeline);
  GstMessage *m;
  GError *err = NULL;

  g_free (desc);
  fail_unless_equals_int (gst_element_set_state (pipeline, GST_STATE_PLAYING),
      GST_STATE_CHANGE_FAILURE);
  m = gst_bus_timed_pop_filtered (bus, 5 * GST_SECOND, GST_MESSAGE_ERROR);
  fail_unless (m != NULL);
  gst_message_parse_error (m, &err, msg);
  gst_message_unref (m);
  g_error_free (err);
  gst_object_unref (bus);
  return pipeline;
}

GST_START_TEST (test_passphrase)
{
  Sender *s = sender_new ("passphrase=\"open sesame\"");
  gint port = sender_port (s);
  Receiver *r;
  GstElement *bad;
  gchar *msg = NULL;
  gint64 start;
  guint refused;

  /* the right one: a session of 3 connections that streams */
  {
    gchar *desc = g_strdup_printf ("multitcpsrc name=src host=127.0.0.1 "
        "port=%d connections=3 latency=5000 passphrase=\"open sesame\" ! "
        "appsink name=out sync=false", port);
    r = g_new0 (Receiver, 1);
    r->pipeline = gst_parse_launch (desc, NULL);
    g_free (desc);
    r->src = gst_bin_get_by_name (GST_BIN (r->pipeline), "src");
    r->appsink = gst_bin_get_by_name (GST_BIN (r->pipeline), "out");
    gst_element_set_state (r->pipeline, GST_STATE_PLAYING);
  }
  wait_for_connections (s->sink, 3);

  /* a wrong one: refused with a reason, and not retried */
  bad = start_receiver_expecting_error (port, "passphrase=guess", &msg);
  fail_unless (strstr (msg, "passphrase") != NULL, "%s", msg);
  g_free (msg);
  gst_element_set_state (bad, GST_STATE_NULL);
  gst_object_unref (bad);
  /* none at all */
  bad = start_receiver_expecting_error (port, "", &msg);
  fail_unless (strstr (msg, "requires a passphrase") != NULL, "%s", msg);
  g_free (msg);
  gst_element_set_state (bad, GST_STATE_NULL);
  gst_object_unref (bad);

  /* no retry storm: the refusals stay where they were */
  refused = stats_uint64 (s->sink, "refused");
  start = g_get_monotonic_time ();
  while (g_get_monotonic_time () - start < G_USEC_PER_SEC)
    g_usleep (50000);
  fail_unless_equals_int (stats_uint64 (s->sink, "refused"), refused);
  fail_unless_equals_int (sink_connections (s->sink), 3);

  stream_and_check (s, &r, 1, 100, TRUE);
  receiver_free (r);
  sender_free (s);
}

GST_END_TEST;

static Suite *
admission_elements_suite (void)
{
  Suite *s = suite_create ("admission_elements");
  TCase *tc = tcase_create ("loopback");

  suite_add_tcase (s, tc);
  tcase_set_timeout (tc, 120);
  tcase_add_test (tc, test_unreachable_host_names_host_and_port);
  tcase_add_test (tc, test_hostile_peers_are_refused_and_session_untouched);
  tcase_add_test (tc, test_connection_flood_bounded);
  tcase_add_test (tc, test_passphrase);
  tcase_add_test (tc, test_tls);
  return s;
}

GST_CHECK_MAIN (admission_elements);

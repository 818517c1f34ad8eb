/* multitcp
 * Copyright (C) 2026 the multitcp authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "mtcptestutil.h"

#include <gst/app/gstappsrc.h>
#include <gst/app/gstappsink.h>
#include <glib/gstdio.h>
#include <sys/socket.h>
#include <string.h>

Sender *
sender_new (const gchar * sink_props)
{
  Sender *s = g_new0 (Sender, 1);
  gchar *desc = g_strdup_printf ("appsrc name=in is-live=true format=time "
      "max-bytes=0 block=false ! multitcpsink name=sink host=127.0.0.1 port=0 "
      /* the tests push seconds of stream at once: no lag bound by default */
      "sync=false max-session-lag=600000000000 %s",
      sink_props ? sink_props : "");
  s->pipeline = gst_parse_launch (desc, NULL);
  g_free (desc);
  fail_unless (s->pipeline != NULL);
  s->appsrc = gst_bin_get_by_name (GST_BIN (s->pipeline), "in");
  s->sink = gst_bin_get_by_name (GST_BIN (s->pipeline), "sink");
  /* ASYNC: the sink prerolls on the first buffer; it listens already */
  fail_if (gst_element_set_state (s->pipeline, GST_STATE_PLAYING) ==
      GST_STATE_CHANGE_FAILURE);
  return s;
}

gint
sender_port (Sender * s)
{
  gint port = 0;
  g_object_get (s->sink, "current-port", &port, NULL);
  fail_unless (port > 0);
  return port;
}

void
sender_free (Sender * s)
{
  gst_element_set_state (s->pipeline, GST_STATE_NULL);
  gst_object_unref (s->appsrc);
  gst_object_unref (s->sink);
  gst_object_unref (s->pipeline);
  g_free (s);
}

Receiver *
receiver_new_with (gint port, guint connections, guint latency_ms,
    const gchar * src_props)
{
  Receiver *r = g_new0 (Receiver, 1);
  gchar *desc = g_strdup_printf ("multitcpsrc name=src host=127.0.0.1 "
      "port=%d connections=%u latency=%u %s ! appsink name=out sync=false "
      "max-buffers=0 emit-signals=false", port, connections, latency_ms,
      src_props);
  r->pipeline = gst_parse_launch (desc, NULL);
  g_free (desc);
  fail_unless (r->pipeline != NULL);
  r->src = gst_bin_get_by_name (GST_BIN (r->pipeline), "src");
  r->appsink = gst_bin_get_by_name (GST_BIN (r->pipeline), "out");
  fail_if (gst_element_set_state (r->pipeline, GST_STATE_PLAYING) ==
      GST_STATE_CHANGE_FAILURE);
  return r;
}

Receiver *
receiver_new (gint port, guint connections, guint latency_ms)
{
  return receiver_new_with (port, connections, latency_ms, "");
}

void
receiver_free (Receiver * r)
{
  gst_element_set_state (r->pipeline, GST_STATE_NULL);
  gst_object_unref (r->src);
  gst_object_unref (r->appsink);
  gst_object_unref (r->pipeline);
  g_free (r);
}

guint64
stats_uint64 (GstElement * e, const gchar * field)
{
  GstStructure *s = NULL;
  guint64 v = 0;
  g_object_get (e, "stats", &s, NULL);
  fail_unless (s != NULL);
  gst_structure_get_uint64 (s, field, &v);
  gst_structure_free (s);
  return v;
}

guint
stats_uint (GstElement * e, const gchar * field)
{
  GstStructure *s = NULL;
  guint v = 0;
  g_object_get (e, "stats", &s, NULL);
  gst_structure_get_uint (s, field, &v);
  gst_structure_free (s);
  return v;
}

/* An unsigned field (guint or guint64) of a stats structure, 0 if absent. */
guint64
structure_unsigned (const GstStructure * st, const gchar * field)
{
  const GValue *v = gst_structure_get_value (st, field);

  if (v && G_VALUE_HOLDS_UINT (v))
    return g_value_get_uint (v);
  return v && G_VALUE_HOLDS_UINT64 (v) ? g_value_get_uint64 (v) : 0;
}

/* A field of the sink's sessions, or with @per_connection of their
 * connections, summed. */
guint64
sink_stats_sum (GstElement * sink, gboolean per_connection,
    const gchar * field)
{
  GstStructure *s = NULL;
  const GValue *sessions;
  guint i, j;
  guint64 sum = 0;

  g_object_get (sink, "stats", &s, NULL);
  sessions = gst_structure_get_value (s, "sessions");
  for (i = 0; sessions && i < gst_value_array_get_size (sessions); i++) {
    const GstStructure *ss =
        gst_value_get_structure (gst_value_array_get_value (sessions, i));
    const GValue *conns = gst_structure_get_value (ss, "connections");

    if (!per_connection)
      sum += structure_unsigned (ss, field);
    for (j = 0; per_connection && conns &&
        j < gst_value_array_get_size (conns); j++)
      sum += structure_unsigned (gst_value_get_structure
          (gst_value_array_get_value (conns, j)), field);
  }
  gst_structure_free (s);
  return sum;
}

/* Connections the sink has in its sessions, summed. */
guint
sink_connections (GstElement * sink)
{
  return (guint) sink_stats_sum (sink, FALSE, "n-connections");
}

/* Generous: with a passphrase, each end derives its key first (0.1 s
 * optimised, 4 s and more under ASan + UBSan on a busy machine). */
#define CONNECT_WAIT_US (40 * G_USEC_PER_SEC)

void
wait_for_connections (GstElement * sink, guint n)
{
  gint64 until = g_get_monotonic_time () + CONNECT_WAIT_US;
  while (sink_connections (sink) != n && g_get_monotonic_time () < until)
    g_usleep (10000);
  if (sink_connections (sink) != n) {
    GstStructure *st = NULL;
    g_object_get (sink, "stats", &st, NULL);
    GST_ERROR ("sink stats: %" GST_PTR_FORMAT, st);
    gst_structure_free (st);
  }
  fail_unless_equals_int (sink_connections (sink), n);
}

GstBuffer *
make_payload (GRand * rand, guint index, gsize size)
{
  GstBuffer *buf = gst_buffer_new_allocate (NULL, size, NULL);
  GstMapInfo map;
  gsize i;

  gst_buffer_map (buf, &map, GST_MAP_WRITE);
  for (i = 0; i < size; i++)
    map.data[i] = (guint8) g_rand_int (rand);
  if (size >= 4)
    GST_WRITE_UINT32_BE (map.data, index);
  gst_buffer_unmap (buf, &map);
  return buf;
}

gboolean
buffers_equal (GstBuffer * a, GstBuffer * b)
{
  GstMapInfo ma, mb;
  gboolean eq;

  if (gst_buffer_get_size (a) != gst_buffer_get_size (b))
    return FALSE;
  gst_buffer_map (a, &ma, GST_MAP_READ);
  gst_buffer_map (b, &mb, GST_MAP_READ);
  eq = memcmp (ma.data, mb.data, ma.size) == 0;
  gst_buffer_unmap (a, &ma);
  gst_buffer_unmap (b, &mb);
  return eq;
}

/* Sends @n buffers with caps, a header, keyframes every 30, random sizes
 * and timestamps 33 ms apart; checks that @receivers get all of it. */
void
stream_and_check (Sender * s, Receiver ** receivers, guint n_receivers,
    guint n, gboolean timestamps)
{
  stream_and_check_full (s, receivers, n_receivers, n, timestamps, TRUE);
}

void
stream_and_check_full (Sender * s, Receiver ** receivers, guint n_receivers,
    guint n, gboolean timestamps, gboolean receiver_ends)
{
  GRand *rand = g_rand_new_with_seed (1234 + n_receivers);
  GPtrArray *sent = g_ptr_array_new_with_free_func ((GDestroyNotify)
      gst_buffer_unref);
  GstCaps *caps = gst_caps_new_simple ("video/x-test", "width", G_TYPE_INT,
      320, "name", G_TYPE_STRING, "a \"quoted\" name", NULL);
  guint i, r;

  gst_app_src_set_caps (GST_APP_SRC (s->appsrc), caps);
  for (i = 0; i < n; i++) {
    gsize size = i == 0 ? 64 : g_rand_int_range (rand, 1, 60000);
    GstBuffer *buf = make_payload (rand, i, size);

    if (i == 0)
      GST_BUFFER_FLAG_SET (buf, GST_BUFFER_FLAG_HEADER);
    else if ((i - 1) % 30 != 0)
      GST_BUFFER_FLAG_SET (buf, GST_BUFFER_FLAG_DELTA_UNIT);
    if (i % 7 == 3)
      GST_BUFFER_FLAG_SET (buf, GST_BUFFER_FLAG_MARKER);
    if (timestamps && i > 0) {
      GST_BUFFER_PTS (buf) = (i + 2) * 33 * GST_MSECOND;
      GST_BUFFER_DTS (buf) = i * 33 * GST_MSECOND;
      GST_BUFFER_DURATION (buf) = 33 * GST_MSECOND;
    }
    g_ptr_array_add (sent, gst_buffer_ref (buf));
    fail_unless_equals_int (gst_app_src_push_buffer (GST_APP_SRC (s->appsrc),
            buf), GST_FLOW_OK);
  }
  gst_app_src_end_of_stream (GST_APP_SRC (s->appsrc));

  for (r = 0; r < n_receivers; r++) {
    GstClockTime first_pts = GST_CLOCK_TIME_NONE;
    GstClockTime first_dts = GST_CLOCK_TIME_NONE;

    for (i = 0; i < n; i++) {
      GstSample *sample = gst_app_sink_try_pull_sample (GST_APP_SINK
          (receivers[r]->appsink), WAIT_TIMEOUT);
      GstBuffer *got, *want = g_ptr_array_index (sent, i);

      fail_unless (sample != NULL, "receiver %u: buffer %u missing", r, i);
      got = gst_sample_get_buffer (sample);
      if (i == 0)
        fail_unless (gst_caps_is_equal (gst_sample_get_caps (sample), caps),
            "caps differ: %" GST_PTR_FORMAT, gst_sample_get_caps (sample));
      fail_unless (buffers_equal (got, want), "receiver %u: buffer %u differs "
          "(%" G_GSIZE_FORMAT " vs %" G_GSIZE_FORMAT " bytes)", r, i,
          gst_buffer_get_size (got), gst_buffer_get_size (want));
      fail_unless_equals_int (GST_BUFFER_FLAGS (got) & CHECKED_FLAGS,
          GST_BUFFER_FLAGS (want) & CHECKED_FLAGS);
      /* only the very first buffer starts a discontinuity */
      fail_unless_equals_int (GST_BUFFER_FLAG_IS_SET (got,
              GST_BUFFER_FLAG_DISCONT), i == 0);
      if (timestamps && i > 0) {
        fail_unless (GST_BUFFER_PTS_IS_VALID (got));
        fail_unless (GST_BUFFER_DTS_IS_VALID (got));
        fail_unless_equals_uint64 (GST_BUFFER_DURATION (got),
            GST_BUFFER_DURATION (want));
        if (i == 1) {
          first_pts = GST_BUFFER_PTS (got);
          first_dts = GST_BUFFER_DTS (got);
        }
        /* the mapping onto local time is one offset: intervals survive */
        fail_unless_equals_uint64 (GST_BUFFER_PTS (got) - first_pts,
            GST_BUFFER_PTS (want) - 3 * 33 * GST_MSECOND);
        fail_unless_equals_uint64 (GST_BUFFER_DTS (got) - first_dts,
            GST_BUFFER_DTS (want) - 33 * GST_MSECOND);
        fail_unless (GST_BUFFER_PTS (got) - GST_BUFFER_DTS (got) ==
            2 * 33 * GST_MSECOND);
      } else if (!timestamps && i > 0) {
        /* (the first one gets the segment start from appsrc's basesrc) */
        fail_if (GST_BUFFER_PTS_IS_VALID (got));
      }
      gst_sample_unref (sample);
    }
    if (receiver_ends) {
      fail_unless (gst_app_sink_try_pull_sample (GST_APP_SINK
              (receivers[r]->appsink), WAIT_TIMEOUT) == NULL);
      fail_unless (gst_app_sink_is_eos (GST_APP_SINK
              (receivers[r]->appsink)));
    }
    fail_unless_equals_uint64 (stats_uint64 (receivers[r]->src,
            "buffers-late"), 0);
    fail_unless_equals_uint64 (stats_uint64 (receivers[r]->src,
            "buffers-skipped"), 0);
    if (receiver_ends)
      fail_unless_equals_uint64 (stats_uint64 (receivers[r]->src,
              "buffers-pushed"), n);
  }
  gst_caps_unref (caps);
  g_ptr_array_unref (sent);
  g_rand_free (rand);
}

/* @rcvbuf: SO_RCVBUF before connecting, 0 = the kernel's own */
GSocket *
raw_connect_rcvbuf (gint port, gint rcvbuf)
{
  GSocket *sock = g_socket_new (G_SOCKET_FAMILY_IPV4, G_SOCKET_TYPE_STREAM,
      G_SOCKET_PROTOCOL_TCP, NULL);
  GInetAddress *lo = g_inet_address_new_loopback (G_SOCKET_FAMILY_IPV4);
  GSocketAddress *addr = g_inet_socket_address_new (lo, port);

  if (rcvbuf > 0)
    fail_unless (g_socket_set_option (sock, SOL_SOCKET, SO_RCVBUF, rcvbuf,
            NULL));
  fail_unless (g_socket_connect (sock, addr, NULL, NULL));
  g_socket_set_timeout (sock, 5);
  g_object_unref (addr);
  g_object_unref (lo);
  return sock;
}

GSocket *
loopback_listen (guint * port)
{
  GInetAddress *lo = g_inet_address_new_loopback (G_SOCKET_FAMILY_IPV4);
  GSocketAddress *addr = g_inet_socket_address_new (lo, 0), *bound;
  GSocket *listener = g_socket_new (G_SOCKET_FAMILY_IPV4,
      G_SOCKET_TYPE_STREAM, G_SOCKET_PROTOCOL_TCP, NULL);

  fail_unless (g_socket_bind (listener, addr, TRUE, NULL));
  fail_unless (g_socket_listen (listener, NULL));
  bound = g_socket_get_local_address (listener, NULL);
  *port = g_inet_socket_address_get_port (G_INET_SOCKET_ADDRESS (bound));
  g_object_unref (bound);
  g_object_unref (addr);
  g_object_unref (lo);
  return listener;
}

GSocket *
raw_connect (gint port)
{
  return raw_connect_rcvbuf (port, 0);
}

void
raw_send (GSocket * sock, const guint8 * data, gsize size)
{
  gsize done = 0;
  while (done < size) {
    gssize n = g_socket_send (sock, (const gchar *) data + done, size - done,
        NULL, NULL);
    if (n <= 0)
      return;                   /* the peer may have closed on us already */
    done += n;
  }
}

/* Reads until the peer closes; returns what came (and a REFUSE reason). */
gchar *
raw_read_refusal (GSocket * sock, gboolean * closed)
{
  guint8 buf[4096];
  gsize have = 0;
  gchar *reason = NULL;

  *closed = FALSE;
  for (;;) {
    gssize n = g_socket_receive (sock, (gchar *) buf + have,
        sizeof (buf) - have, NULL, NULL);
    if (n <= 0) {
      *closed = (n == 0) || TRUE;
      break;
    }
    have += n;
    if (have == sizeof (buf))
      break;
  }
  if (have >= MTCP_HEADER_SIZE && buf[0] == MTCP_FRAME_REFUSE) {
    MtcpFrameHeader hdr;
    MtcpRefuse refuse;
    gchar *err = NULL;
    if (mtcp_parse_header (buf, have, MTCP_MAX_FRAME_DEFAULT, &hdr,
            &err) == MTCP_PARSE_OK && have >= MTCP_HEADER_SIZE + hdr.length &&
        mtcp_parse_refuse (buf + MTCP_HEADER_SIZE, hdr.length, &refuse, &err))
      reason = g_strdup (refuse.reason);
    g_free (err);
  }
  return reason;
}

void
write_hello (guint8 * out, guint32 magic, guint16 version)
{
  MtcpHello hello = { 0, };
  hello.magic = magic;
  hello.version = version;
  mtcp_write_hello (out, MTCP_HELLO_FRAME_SIZE, &hello);
}

/* Sleeps until buffer @index of a stream started at @start_us (monotonic)
 * with @period_us between buffers is due: paced on the clock as a live
 * source's timestamps are, where a sleep per buffer would fall behind them
 * on a busy machine (and the sink rightly drops what is later than the
 * receiver's latency). */
void
pace_live (gint64 start_us, guint index, guint period_us)
{
  gint64 ahead = start_us + (gint64) index * period_us -
      g_get_monotonic_time ();

  if (ahead > 0)
    g_usleep (ahead);
}

guint64
rss_kb (void)
{
  gchar *status = NULL, *line;
  guint64 kb = 0;

  if (!g_file_get_contents ("/proc/self/status", &status, NULL, NULL))
    return 0;
  line = strstr (status, "VmRSS:");
  if (line)
    kb = g_ascii_strtoull (line + 6, NULL, 10);
  g_free (status);
  return kb;
}

/* Joins (or opens, @sid NULL) a session the way multitcpsrc does, with
 * HELLO flags @flags (0: plain BUFFER frames); the session id lands in
 * @sid_out. */
gboolean
raw_conn_try_open (RawConn * rc, gint port, const guint8 * sid, guint8 flags,
    guint32 latency_ms, gint rcvbuf, guint8 * sid_out)
{
  MtcpHello hello = { 0, };
  guint8 frame[MTCP_HELLO_FRAME_SIZE];
  MtcpFrameHeader hdr;
  const guint8 *body;
  MtcpWelcome welcome = { {0}, };
  gint64 until = g_get_monotonic_time () + 5 * G_USEC_PER_SEC;

  rc->sock = raw_connect_rcvbuf (port, rcvbuf);
  rc->reader = mtcp_frame_reader_new (1 << 24);
  hello.magic = MTCP_MAGIC;
  hello.version = MTCP_VERSION;
  hello.flags = flags;
  hello.latency_ms = latency_ms;
  if (sid) {
    hello.flags |= MTCP_HELLO_FLAG_JOIN;
    memcpy (hello.session_id, sid, MTCP_SESSION_ID_SIZE);
  }
  mtcp_write_hello (frame, sizeof (frame), &hello);
  raw_send (rc->sock, frame, sizeof (frame));
  while (mtcp_frame_reader_next (rc->reader, &hdr, &body, NULL) !=
      MTCP_PARSE_OK) {
    gsize space;
    guint8 *dst = mtcp_frame_reader_space (rc->reader, &space);
    gssize n = g_socket_receive (rc->sock, (gchar *) dst, space, NULL, NULL);
    if (n <= 0 || g_get_monotonic_time () >= until)
      return FALSE;
    mtcp_frame_reader_commit (rc->reader, n);
  }
  if (hdr.type == MTCP_FRAME_REFUSE) {
    MtcpRefuse refuse;
    if (mtcp_parse_refuse (body, hdr.length, &refuse, NULL))
      GST_INFO ("refused: %s", refuse.reason);
  }
  if (hdr.type != MTCP_FRAME_WELCOME ||
      !mtcp_parse_welcome (body, hdr.length, &welcome, NULL))
    return FALSE;
  memcpy (sid_out, welcome.session_id, MTCP_SESSION_ID_SIZE);
  return TRUE;
}

void
raw_conn_open_full (RawConn * rc, gint port, const guint8 * sid, guint8 flags,
    guint32 latency_ms, gint rcvbuf, guint8 * sid_out)
{
  fail_unless (raw_conn_try_open (rc, port, sid, flags, latency_ms, rcvbuf,
          sid_out), "the sink did not welcome us");
}

void
raw_conn_open (RawConn * rc, gint port, const guint8 * sid, guint8 flags,
    guint8 * sid_out)
{
  raw_conn_open_full (rc, port, sid, flags, 0, 0, sid_out);
}

void
raw_conn_close (RawConn * rc)
{
  g_object_unref (rc->sock);
  mtcp_frame_reader_free (rc->reader);
}

/* Reads what arrives on @rc for up to @timeout_us; BUFFER sequence numbers
 * go into @arrivals (seq -> bit mask of the connections that brought it). */
void
raw_conn_read (RawConn * rc, guint index, GHashTable * arrivals,
    gint64 timeout_us)
{
  MtcpFrameHeader hdr;
  const guint8 *body;
  gsize space;
  guint8 *dst;
  gssize n;

  if (g_socket_condition_timed_wait (rc->sock, G_IO_IN, timeout_us, NULL,
          NULL)) {
    dst = mtcp_frame_reader_space (rc->reader, &space);
    n = g_socket_receive (rc->sock, (gchar *) dst, space, NULL, NULL);
    fail_unless (n > 0);
    mtcp_frame_reader_commit (rc->reader, n);
  }
  while (mtcp_frame_reader_next (rc->reader, &hdr, &body, NULL) ==
      MTCP_PARSE_OK) {
    MtcpBufferInfo info;
    const guint8 *payload;
    gpointer key, mask;

    if (hdr.type != MTCP_FRAME_BUFFER)
      continue;
    fail_unless (mtcp_parse_buffer (body, hdr.length, &info, &payload, NULL));
    key = GUINT_TO_POINTER ((guint) info.seq + 1);
    mask = g_hash_table_lookup (arrivals, key);
    g_hash_table_insert (arrivals, key,
        GUINT_TO_POINTER (GPOINTER_TO_UINT (mask) | (1u << index)));
  }
}

void
raw_conn_feedback (RawConn * rc, guint64 highest, guint64 buffered)
{
  MtcpFeedback fb = { 0, };
  guint8 frame[MTCP_FEEDBACK_FRAME_SIZE];

  fb.highest_in_order = highest;
  fb.buffered_bytes = buffered;
  mtcp_write_feedback (frame, sizeof (frame), &fb);
  raw_send (rc->sock, frame, sizeof (frame));
}

/* Reads @rc until @until (monotonic us). */
void
raw_conn_read_until (RawConn * rc, guint index, GHashTable * arrivals,
    gint64 until)
{
  gint64 left;

  while ((left = until - g_get_monotonic_time ()) > 0)
    raw_conn_read (rc, index, arrivals, left);
}

/* A self-signed certificate for localhost and 127.0.0.1 in a new temporary
 * directory (cert.pem, key.pem), or NULL when openssl is not installed. */
gchar *
make_tls_certificate (void)
{
  gchar *openssl = g_find_program_in_path ("openssl");
  gchar *dir, *cmd;
  gint status = -1;

  if (openssl == NULL)
    return NULL;
  dir = g_dir_make_tmp ("multitcp-tls-XXXXXX", NULL);
  fail_unless (dir != NULL);
  cmd = g_strdup_printf ("%s req -x509 -newkey rsa:2048 -nodes -days 1 "
      "-subj /CN=localhost -addext subjectAltName=DNS:localhost,IP:127.0.0.1 "
      "-keyout %s/key.pem -out %s/cert.pem", openssl, dir, dir);
  fail_unless (g_spawn_command_line_sync (cmd, NULL, NULL, &status, NULL));
  fail_unless (g_spawn_check_wait_status (status, NULL), "%s failed", cmd);
  g_free (cmd);
  g_free (openssl);
  return dir;
}

void
remove_tls_certificate (gchar * dir)
{
  gchar *cert = g_build_filename (dir, "cert.pem", NULL);
  gchar *key = g_build_filename (dir, "key.pem", NULL);
  g_unlink (cert);
  g_unlink (key);
  g_rmdir (dir);
  g_free (cert);
  g_free (key);
  g_free (dir);
}

/* The first error the pipeline posts within @timeout, as "message | debug". */
gchar *
wait_for_error (GstElement * pipeline, GstClockTime timeout)
{
  GstBus *bus = gst_element_get_bus (pipeline);
  GstMessage *msg = gst_bus_timed_pop_filtered (bus, timeout,
      GST_MESSAGE_ERROR);
  GError *err = NULL;
  gchar *dbg = NULL, *text;

  gst_object_unref (bus);
  if (msg == NULL)
    return NULL;
  gst_message_parse_error (msg, &err, &dbg);
  text = g_strdup_printf ("%s | %s", err->message, dbg ? dbg : "");
  g_error_free (err);
  g_free (dbg);
  gst_message_unref (msg);
  return text;
}

/* Pushes buffer @index: @size bytes of the index's low 8 bits, 10 ms of
 * PTS apart, a keyframe every @key buffers (0: no flags). */
void
push_tagged (Sender * s, guint index, gsize size, guint key)
{
  GstBuffer *buf = gst_buffer_new_allocate (NULL, size, NULL);

  gst_buffer_memset (buf, 0, (guint8) (index & 0xff), size);
  GST_BUFFER_PTS (buf) = index * 10 * GST_MSECOND;
  if (key && index % key != 0)
    GST_BUFFER_FLAG_SET (buf, GST_BUFFER_FLAG_DELTA_UNIT);
  fail_unless_equals_int (gst_app_src_push_buffer (GST_APP_SRC (s->appsrc),
          buf), GST_FLOW_OK);
}

/* Pulls the @n buffers push_tagged sent, in order, and checks that none
 * was late or skipped. */
void
expect_tagged (Receiver * r, guint n)
{
  guint i;

  for (i = 0; i < n; i++) {
    GstSample *sample = gst_app_sink_try_pull_sample (GST_APP_SINK
        (r->appsink), WAIT_TIMEOUT);
    guint8 tag;
    fail_unless (sample != NULL, "buffer %u missing", i);
    gst_buffer_extract (gst_sample_get_buffer (sample), 0, &tag, 1);
    fail_unless_equals_int (tag, (guint8) (i & 0xff));
    gst_sample_unref (sample);
  }
  fail_unless_equals_uint64 (stats_uint64 (r->src, "buffers-late"), 0);
  fail_unless_equals_uint64 (stats_uint64 (r->src, "buffers-skipped"), 0);
}

GstStructure *
wait_for_warning_details (GstElement * pipeline, GstClockTime timeout)
{
  GstBus *bus = gst_element_get_bus (pipeline);
  GstStructure *details = NULL;
  gint64 until = g_get_monotonic_time () + timeout / GST_USECOND;

  while (details == NULL && g_get_monotonic_time () < until) {
    GstMessage *msg = gst_bus_timed_pop_filtered (bus, 100 * GST_MSECOND,
        GST_MESSAGE_WARNING);
    const GstStructure *d = NULL;

    if (msg == NULL)
      continue;
    gst_message_parse_warning_details (msg, &d);
    if (d && gst_structure_has_field (d, "kind"))
      details = gst_structure_copy (d);
    gst_message_unref (msg);
  }
  gst_object_unref (bus);
  return details;
}

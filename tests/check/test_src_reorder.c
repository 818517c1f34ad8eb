/* multitcp
 * Copyright (C) 2026 the multitcp authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
/* multitcpsrc against a hand-driven sink: frames out of order across
 * connections, a gap past its deadline, a late frame, a sender skip, a
 * connection that closes mid-session, EOS. */
#include <gst/check/gstcheck.h>
#include <gio/gio.h>
#include <gst/app/gstappsink.h>
#include <string.h>

#include "mtcpprotocol.h"
#include "mtcpreorder.h"
#include "mtcptcpinfo.h"
#include "mtcptestutil.h"

#define LATENCY_MS 300

typedef struct {
  GSocket *listener;
  guint port;
  guint8 session_id[MTCP_SESSION_ID_SIZE];
} FakeSink;

static void
send_bytes (GSocket * sock, const guint8 * data, gsize size)
{
  gsize done = 0;
  while (done < size) {
    gssize n = g_socket_send (sock, (const gchar *) data + done, size - done,
        NULL, NULL);
    fail_unless (n > 0);
    done += n;
  }
}

static void
read_exact (GSocket * sock, guint8 * data, gsize size)
{
  gsize done = 0;
  while (done < size) {
    gssize n = g_socket_receive (sock, (gchar *) data + done, size - done,
        NULL, NULL);
    fail_unless (n > 0);
    done += n;
  }
}

/* Listens on an ephemeral loopback port for a sink of session @sid. */
static void
fake_listen (FakeSink * fs, guint8 sid)
{
  memset (fs->session_id, sid, sizeof (fs->session_id));
  fs->listener = loopback_listen (&fs->port);
}

/* Accepts one connection, checks its HELLO (a JOIN when @expect_join is
 * 1, a new session when 0, either when -1), answers WELCOME. */
static GSocket *
fake_accept (FakeSink * fs, gint expect_join)
{
  GSocket *sock = g_socket_accept (fs->listener, NULL, NULL);
  guint8 buf[MTCP_HELLO_FRAME_SIZE];
  MtcpFrameHeader hdr;
  MtcpHello hello = { 0, };
  MtcpWelcome welcome = { {0}, };
  guint8 out[64];
  gchar *err = NULL;
  gsize n;

  fail_unless (sock != NULL);
  /* like multitcpsink: small frames must not wait for the receiver's
   * delayed ACK (Nagle) */
  mtcp_tcp_set_nodelay (sock, TRUE);
  g_socket_set_timeout (sock, 10);
  read_exact (sock, buf, MTCP_HEADER_SIZE);
  fail_unless_equals_int (mtcp_parse_header (buf, MTCP_HEADER_SIZE,
          MTCP_MAX_FRAME_DEFAULT, &hdr, &err), MTCP_PARSE_OK);
  fail_unless_equals_int (hdr.type, MTCP_FRAME_HELLO);
  fail_unless (hdr.length <= sizeof (buf) - MTCP_HEADER_SIZE);
  read_exact (sock, buf + MTCP_HEADER_SIZE, hdr.length);
  fail_unless (mtcp_parse_hello (buf + MTCP_HEADER_SIZE, hdr.length, &hello,
          &err));
  if (expect_join >= 0)
    fail_unless_equals_int (! !(hello.flags & MTCP_HELLO_FLAG_JOIN),
        expect_join);
  if (expect_join == 1)
    fail_unless (memcmp (hello.session_id, fs->session_id,
            MTCP_SESSION_ID_SIZE) == 0);

  memcpy (welcome.session_id, fs->session_id, MTCP_SESSION_ID_SIZE);
  welcome.connection_id = expect_join == 1 ? 1 : 0;
  welcome.max_frame = MTCP_MAX_FRAME_DEFAULT;
  n = mtcp_write_welcome (out, sizeof (out), &welcome);
  fail_unless (n > 0);
  send_bytes (sock, out, n);
  return sock;
}

static gpointer
accept_first (gpointer data)
{
  return fake_accept (data, FALSE);
}

static void
send_caps (GSocket * sock, guint64 seq, const gchar * caps)
{
  guint8 out[512];
  gsize n = mtcp_write_caps (out, sizeof (out), seq, caps);
  fail_unless (n > 0);
  send_bytes (sock, out, n);
}

static void
send_buffer (GSocket * sock, guint64 seq, guint64 pts_ms)
{
  guint8 out[MTCP_BUFFER_HEAD_SIZE + 100];
  MtcpBufferInfo info;
  gsize n;

  info.seq = seq;
  info.pts = info.dts = pts_ms * GST_MSECOND;
  info.duration = 33 * GST_MSECOND;
  info.flags = MTCP_BUF_DELTA;
  info.payload_size = 100;
  n = mtcp_write_buffer_head (out, sizeof (out), &info);
  fail_unless_equals_int (n, MTCP_BUFFER_HEAD_SIZE);
  memset (out + n, (guint8) seq, 100);
  send_bytes (sock, out, n + 100);
}

/* A BUFFER with the given wire times, payload tagged @tag. */
static void
send_buffer_times (GSocket * sock, guint64 seq, guint64 pts, guint64 dts,
    guint64 duration, guint8 tag)
{
  guint8 out[MTCP_BUFFER_HEAD_SIZE + 100];
  MtcpBufferInfo info;
  gsize n;

  info.seq = seq;
  info.pts = pts;
  info.dts = dts;
  info.duration = duration;
  info.flags = MTCP_BUF_DELTA;
  info.payload_size = 100;
  n = mtcp_write_buffer_head (out, sizeof (out), &info);
  fail_unless_equals_int (n, MTCP_BUFFER_HEAD_SIZE);
  memset (out + n, tag, 100);
  send_bytes (sock, out, n + 100);
}

/* Sends what it can: the receiver may close the connection midway. */
static void
send_bytes_until_closed (GSocket * sock, const guint8 * data, gsize size)
{
  gsize done = 0;
  while (done < size) {
    gssize n = g_socket_send (sock, (const gchar *) data + done, size - done,
        NULL, NULL);
    if (n <= 0)
      return;
    done += n;
  }
}

static void
send_skip (GSocket * sock, guint64 first, guint64 end)
{
  guint8 out[MTCP_SKIP_FRAME_SIZE];
  MtcpSkip skip = { first, end };
  send_bytes (sock, out, mtcp_write_skip (out, sizeof (out), &skip));
}

static void
send_eos (GSocket * sock, guint64 seq)
{
  guint8 out[MTCP_EOS_FRAME_SIZE];
  send_bytes (sock, out, mtcp_write_eos (out, sizeof (out), seq));
}

static void
send_unknown_frame (GSocket * sock)
{
  guint8 out[MTCP_HEADER_SIZE + 5] = { 0, };
  mtcp_write_header (out, 0x7e, 0, 5);
  send_bytes (sock, out, sizeof (out));
}

static GstBuffer *
pull (GstElement * appsink, guint8 * tag)
{
  GstSample *sample = gst_app_sink_try_pull_sample (GST_APP_SINK (appsink),
      10 * GST_SECOND);
  GstBuffer *buf;

  fail_unless (sample != NULL);
  buf = gst_buffer_ref (gst_sample_get_buffer (sample));
  gst_sample_unref (sample);
  gst_buffer_extract (buf, 0, tag, 1);
  return buf;
}

static guint
stat_uint (GstElement * src, const gchar * name)
{
  GstStructure *s;
  guint v = 0;
  g_object_get (src, "stats", &s, NULL);
  fail_unless (gst_structure_get_uint (s, name, &v), "no %s", name);
  gst_structure_free (s);
  return v;
}

static guint64
stat (GstElement * src, const gchar * name)
{
  GstStructure *s;
  guint64 v = 0;
  g_object_get (src, "stats", &s, NULL);
  fail_unless (gst_structure_get_uint64 (s, name, &v), "no %s", name);
  gst_structure_free (s);
  return v;
}

GST_START_TEST (test_reorder_gap_late_skip_close_eos)
{
  FakeSink fs;
  GThread *thread;
  GSocket *a, *b;
  GstElement *pipeline, *src, *appsink;
  gchar *desc;
  GstBuffer *buf;
  guint8 tag;
  GstClockTime pts1, pts5;
  gint64 t_before;

  fake_listen (&fs, 0x5a);

  desc = g_strdup_printf ("multitcpsrc name=src host=127.0.0.1 port=%u "
      "connections=2 latency=%u ! appsink name=out sync=false", fs.port,
      LATENCY_MS);
  pipeline = gst_parse_launch (desc, NULL);
  g_free (desc);
  src = gst_bin_get_by_name (GST_BIN (pipeline), "src");
  appsink = gst_bin_get_by_name (GST_BIN (pipeline), "out");

  /* start () blocks until the first WELCOME, so answer from a thread */
  thread = g_thread_new ("fake-sink", accept_first, &fs);
  fail_if (gst_element_set_state (pipeline, GST_STATE_PLAYING) ==
      GST_STATE_CHANGE_FAILURE);
  a = g_thread_join (thread);
  b = fake_accept (&fs, TRUE);

  /* out of order across the two connections */
  send_caps (a, 0, "video/x-test, width=(int)8");
  send_buffer (b, 2, 66);
  send_unknown_frame (b);       /* skipped by its length */
  send_buffer (a, 1, 33);
  send_buffer (a, 3, 99);
  buf = pull (appsink, &tag);
  fail_unless_equals_int (tag, 1);
  fail_unless (GST_BUFFER_FLAG_IS_SET (buf, GST_BUFFER_FLAG_DISCONT));
  pts1 = GST_BUFFER_PTS (buf);
  gst_buffer_unref (buf);
  buf = pull (appsink, &tag);
  fail_unless_equals_int (tag, 2);
  fail_if (GST_BUFFER_FLAG_IS_SET (buf, GST_BUFFER_FLAG_DISCONT));
  gst_buffer_unref (buf);
  buf = pull (appsink, &tag);
  fail_unless_equals_int (tag, 3);
  gst_buffer_unref (buf);

  /* seq 4 is missing: 5 waits for its deadline, then comes with DISCONT */
  t_before = g_get_monotonic_time ();
  send_buffer (b, 5, 165);
  buf = pull (appsink, &tag);
  fail_unless_equals_int (tag, 5);
  fail_unless (GST_BUFFER_FLAG_IS_SET (buf, GST_BUFFER_FLAG_DISCONT));
  pts5 = GST_BUFFER_PTS (buf);
  fail_unless_equals_uint64 (pts5 - pts1, 132 * GST_MSECOND);
  /* it was held for most of the latency, not released at once */
  fail_unless (g_get_monotonic_time () - t_before > 100 * 1000);
  gst_buffer_unref (buf);
  fail_unless_equals_uint64 (stat (src, "buffers-skipped"), 1);

  /* 4 arrives after its slot was released: late, dropped, counted */
  send_buffer (a, 4, 132);
  /* one connection closes: the session goes on over the other */
  g_socket_close (b, NULL);
  send_buffer (a, 6, 198);
  buf = pull (appsink, &tag);
  fail_unless_equals_int (tag, 6);
  fail_if (GST_BUFFER_FLAG_IS_SET (buf, GST_BUFFER_FLAG_DISCONT));
  gst_buffer_unref (buf);
  fail_unless_equals_uint64 (stat (src, "buffers-late"), 1);

  /* the sender says 7 and 8 never come: 9 goes out at once, DISCONT */
  send_skip (a, 7, 9);
  send_buffer (a, 9, 297);
  buf = pull (appsink, &tag);
  fail_unless_equals_int (tag, 9);
  fail_unless (GST_BUFFER_FLAG_IS_SET (buf, GST_BUFFER_FLAG_DISCONT));
  gst_buffer_unref (buf);
  fail_unless_equals_uint64 (stat (src, "buffers-sender-dropped"), 2);

  send_eos (a, 10);
  fail_unless (gst_app_sink_try_pull_sample (GST_APP_SINK (appsink),
          10 * GST_SECOND) == NULL);
  fail_unless (gst_app_sink_is_eos (GST_APP_SINK (appsink)));
  fail_unless_equals_uint64 (stat (src, "buffers-pushed"), 6);

  gst_element_set_state (pipeline, GST_STATE_NULL);
  g_object_unref (a);
  g_object_unref (b);
  gst_object_unref (src);
  gst_object_unref (appsink);
  gst_object_unref (pipeline);
  g_object_unref (fs.listener);
}

GST_END_TEST;

/* A sink that breaks the protocol on one connection: that connection is
 * closed with a warning, the stream goes on over the other. */
GST_START_TEST (test_garbage_from_sink_closes_one_connection)
{
  FakeSink fs;
  GThread *thread;
  GSocket *a, *b;
  GstElement *pipeline, *src, *appsink;
  gchar *desc;
  GstBuffer *buf;
  guint8 tag, junk[64];

  fake_listen (&fs, 0x11);

  desc = g_strdup_printf ("multitcpsrc name=src host=127.0.0.1 port=%u "
      "connections=2 latency=%u ! appsink name=out sync=false", fs.port,
      LATENCY_MS);
  pipeline = gst_parse_launch (desc, NULL);
  g_free (desc);
  src = gst_bin_get_by_name (GST_BIN (pipeline), "src");
  appsink = gst_bin_get_by_name (GST_BIN (pipeline), "out");
  thread = g_thread_new ("fake-sink", accept_first, &fs);
  gst_element_set_state (pipeline, GST_STATE_PLAYING);
  a = g_thread_join (thread);
  b = fake_accept (&fs, TRUE);

  send_caps (a, 0, "video/x-test");
  send_buffer (a, 1, 0);
  /* a BUFFER header claiming 4 GB */
  mtcp_write_header (junk, MTCP_FRAME_BUFFER, 0, 0xfffffff0u);
  send_bytes (b, junk, MTCP_HEADER_SIZE);
  send_buffer (a, 2, 33);
  buf = pull (appsink, &tag);
  fail_unless_equals_int (tag, 1);
  gst_buffer_unref (buf);
  buf = pull (appsink, &tag);
  fail_unless_equals_int (tag, 2);
  gst_buffer_unref (buf);
  fail_unless (stat (src, "protocol-errors") >= 1);

  gst_element_set_state (pipeline, GST_STATE_NULL);
  g_object_unref (a);
  g_object_unref (b);
  gst_object_unref (src);
  gst_object_unref (appsink);
  gst_object_unref (pipeline);
  g_object_unref (fs.listener);
}

GST_END_TEST;

/* sender time in ns since @t0 (a g_get_monotonic_time ()) */
#define ELAPSED(t0) ((guint64) (g_get_monotonic_time () - (t0)) * GST_USECOND)

/* Starts "multitcpsrc ! appsink" with two connections to a fake sink. */
static GstElement *
start_two (FakeSink * fs, guint8 sid, GSocket ** a, GSocket ** b,
    GstElement ** src, GstElement ** appsink)
{
  GstElement *pipeline;
  GThread *thread;
  gchar *desc;

  fake_listen (fs, sid);

  desc = g_strdup_printf ("multitcpsrc name=src host=127.0.0.1 port=%u "
      "connections=2 latency=%u ! appsink name=out sync=false", fs->port,
      LATENCY_MS);
  pipeline = gst_parse_launch (desc, NULL);
  g_free (desc);
  *src = gst_bin_get_by_name (GST_BIN (pipeline), "src");
  *appsink = gst_bin_get_by_name (GST_BIN (pipeline), "out");
  thread = g_thread_new ("fake-sink", accept_first, fs);
  fail_if (gst_element_set_state (pipeline, GST_STATE_PLAYING) ==
      GST_STATE_CHANGE_FAILURE);
  *a = g_thread_join (thread);
  *b = fake_accept (fs, TRUE);
  return pipeline;
}

static void
stop_two (FakeSink * fs, GstElement * pipeline, GSocket * a, GSocket * b,
    GstElement * src, GstElement * appsink)
{
  gst_element_set_state (pipeline, GST_STATE_NULL);
  g_object_unref (a);
  g_object_unref (b);
  gst_object_unref (src);
  gst_object_unref (appsink);
  gst_object_unref (pipeline);
  g_object_unref (fs->listener);
}

/* Timestamps at the ends of the range a sink can send: no signed overflow
 * in the time mapping or the skew estimate (UBSan in CI), times past
 * G_MAXINT64 / 2 close that connection as a protocol error, and the stream
 * goes on. */
GST_START_TEST (test_extreme_timestamps)
{
  FakeSink fs;
  GSocket *a, *b;
  GstElement *pipeline, *src, *appsink;
  GstBuffer *buf;
  guint8 tag, out[MTCP_REPORT_FRAME_SIZE];
  MtcpReport report;
  guint64 errors;
  gint64 t0 = g_get_monotonic_time ();
  gint i;

  pipeline = start_two (&fs, 0x22, &a, &b, &src, &appsink);
  send_caps (a, 0, "video/x-test");
  /* sender times run with ours from 0 (ELAPSED), the duration is huge */
  send_buffer_times (a, 1, ELAPSED (t0), MTCP_TIME_NONE, G_MAXINT64 / 2, 1);
  buf = pull (appsink, &tag);
  fail_unless_equals_int (tag, 1);
  gst_buffer_unref (buf);
  /* the far end of the range: the mapping saturates, the deadline is
   * pulled in to the horizon, the buffer goes out in order */
  send_buffer_times (a, 2, G_MAXINT64 / 2, MTCP_TIME_NONE, 0, 2);
  buf = pull (appsink, &tag);
  fail_unless_equals_int (tag, 2);
  fail_unless (GST_BUFFER_PTS_IS_VALID (buf));
  gst_buffer_unref (buf);
  /* and back, DTS without PTS */
  send_buffer_times (a, 3, MTCP_TIME_NONE, ELAPSED (t0), 1, 3);
  buf = pull (appsink, &tag);
  fail_unless_equals_int (tag, 3);
  gst_buffer_unref (buf);
  /* zero, once more than the latency has passed: late, dropped, counted */
  g_usleep ((LATENCY_MS + 100) * 1000);
  send_buffer_times (a, 4, 0, 0, 0, 4);
  send_buffer_times (a, 5, ELAPSED (t0), ELAPSED (t0), 33, 5);
  buf = pull (appsink, &tag);
  fail_unless_equals_int (tag, 5);
  gst_buffer_unref (buf);
  fail_unless_equals_uint64 (stat (src, "buffers-late"), 1);

  /* a REPORT of all ones feeds the controllers and the FEEDBACK echo */
  memset (&report, 0xff, sizeof (report));
  report.flags = 0;
  send_bytes (a, out, mtcp_write_report (out, sizeof (out), &report));

  /* beyond G_MAXINT64 / 2: a protocol error that closes b, not a */
  errors = stat (src, "protocol-errors");
  send_buffer_times (b, 6, G_MAXINT64, G_MAXUINT64 - 1, G_MAXUINT64 - 1, 6);
  for (i = 0; i < 500 && stat (src, "protocol-errors") == errors; i++)
    g_usleep (10 * 1000);
  fail_unless_equals_uint64 (stat (src, "protocol-errors"), errors + 1);
  send_buffer_times (a, 6, ELAPSED (t0), ELAPSED (t0), 33, 6);
  buf = pull (appsink, &tag);
  fail_unless_equals_int (tag, 6);
  gst_buffer_unref (buf);

  stop_two (&fs, pipeline, a, b, src, appsink);
}

GST_END_TEST;

/* A flood of 40 000 disjoint SKIPs (~1 MB) on one connection: the ranges
 * held stay at the cap, that connection is closed as a protocol error once
 * the cap is exceeded, and the stream goes on over the other. */
GST_START_TEST (test_skip_flood)
{
  FakeSink fs;
  GSocket *a, *b;
  GstElement *pipeline, *src, *appsink;
  GstBuffer *buf;
  guint8 tag, *flood;
  gsize n = 0;
  guint i;

  pipeline = start_two (&fs, 0x33, &a, &b, &src, &appsink);
  send_caps (a, 0, "video/x-test");
  send_buffer (a, 1, 0);
  buf = pull (appsink, &tag);
  fail_unless_equals_int (tag, 1);
  gst_buffer_unref (buf);

  flood = g_malloc (40000 * MTCP_SKIP_FRAME_SIZE);
  for (i = 0; i < 40000; i++) {
    /* every other seq from 1000 on: nothing merges */
    MtcpSkip skip = { 1000 + 2 * (guint64) i, 1001 + 2 * (guint64) i };
    n += mtcp_write_skip (flood + n, MTCP_SKIP_FRAME_SIZE, &skip);
  }
  send_bytes_until_closed (b, flood, n);
  g_free (flood);

  /* the other connection still carries the stream, in time */
  for (i = 2; i < 6; i++) {
    send_buffer (a, i, 33 * i);
    buf = pull (appsink, &tag);
    fail_unless_equals_int (tag, i);
    gst_buffer_unref (buf);
  }
  fail_unless (stat (src, "protocol-errors") >= 1);
  fail_unless (stat_uint (src, "skip-ranges") <= MTCP_REORDER_MAX_RANGES);
  fail_unless (stat_uint (src, "skip-ranges") > 0);

  stop_two (&fs, pipeline, a, b, src, appsink);
}

GST_END_TEST;

typedef struct {
  FakeSink fs;
  gint served;                  /* connections welcomed, then refused caps */
  gint stop;
} RefusingSink;

/* A sink that welcomes every connection, then sends caps the source
 * refuses (a list: not fixed), and waits for the close. */
static gpointer
serve_refused_caps (gpointer data)
{
  RefusingSink *rs = data;
  guint8 junk[256];

  while (!g_atomic_int_get (&rs->stop) && g_atomic_int_get (&rs->served) < 50) {
    GSocket *sock;
    if (!g_socket_condition_timed_wait (rs->fs.listener, G_IO_IN,
            100 * G_TIME_SPAN_MILLISECOND, NULL, NULL))
      continue;
    sock = fake_accept (&rs->fs, -1);
    send_caps (sock, 0, "video/x-test, width=(int){ 1, 2 }");
    g_atomic_int_inc (&rs->served);
    while (g_socket_receive (sock, (gchar *) junk, sizeof (junk), NULL,
            NULL) > 0);
    g_object_unref (sock);
  }
  return NULL;
}

/* A sink whose caps are refused every time: the source backs off, gives
 * up after `retry` tries and says why in its error (it redialled every
 * 100 ms forever before: each WELCOME cleared its count of failures). */
GST_START_TEST (test_refused_caps_end_in_an_error)
{
  RefusingSink rs = { {0}, };
  GstElement *pipeline;
  GstBus *bus;
  GstMessage *msg;
  GThread *thread;
  GError *err = NULL;
  gchar *desc, *debug = NULL;

  fake_listen (&rs.fs, 0x22);
  thread = g_thread_new ("refusing-sink", serve_refused_caps, &rs);

  desc = g_strdup_printf ("multitcpsrc host=127.0.0.1 port=%u connections=1 "
      "retry=3 latency=%u ! fakesink", rs.fs.port, LATENCY_MS);
  pipeline = gst_parse_launch (desc, NULL);
  g_free (desc);
  bus = gst_element_get_bus (pipeline);
  gst_element_set_state (pipeline, GST_STATE_PLAYING);
  msg = gst_bus_timed_pop_filtered (bus, 30 * GST_SECOND,
      GST_MESSAGE_ERROR | GST_MESSAGE_EOS);
  fail_unless (msg != NULL && GST_MESSAGE_TYPE (msg) == GST_MESSAGE_ERROR,
      "no error after %d refused connections", g_atomic_int_get (&rs.served));
  gst_message_parse_error (msg, &err, &debug);
  GST_INFO ("%d connections; error: %s (%s)", g_atomic_int_get (&rs.served),
      err->message, debug);
  /* the reason is the last refusal's */
  fail_unless (debug && strstr (debug, "CAPS text is not fixed caps"), "%s",
      debug);
  /* the first and three more, give or take one in flight */
  fail_unless (g_atomic_int_get (&rs.served) >= 2 &&
      g_atomic_int_get (&rs.served) <= 6, "%d connections",
      g_atomic_int_get (&rs.served));

  g_atomic_int_set (&rs.stop, 1);
  gst_element_set_state (pipeline, GST_STATE_NULL);
  g_thread_join (thread);
  g_error_free (err);
  g_free (debug);
  gst_message_unref (msg);
  gst_object_unref (bus);
  gst_object_unref (pipeline);
  g_object_unref (rs.fs.listener);
}

GST_END_TEST;

static Suite *
src_reorder_suite (void)
{
  Suite *s = suite_create ("src_reorder");
  TCase *tc = tcase_create ("fake sink");

  suite_add_tcase (s, tc);
  tcase_set_timeout (tc, 60);
  tcase_add_test (tc, test_reorder_gap_late_skip_close_eos);
  tcase_add_test (tc, test_garbage_from_sink_closes_one_connection);
  tcase_add_test (tc, test_extreme_timestamps);
  tcase_add_test (tc, test_skip_flood);
  tcase_add_test (tc, test_refused_caps_end_in_an_error);
  return s;
}

GST_CHECK_MAIN (src_reorder);

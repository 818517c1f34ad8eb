/* multitcp
 * Copyright (C) 2026 the multitcp authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
/* multitcpsink -> multitcpsrc over loopback: a stream arrives whole and
 * in order (any connection count, scheduler, receivers), with its caps,
 * timestamps, headers and keyframes (h264, MPEG-TS, Matroska decoded), the
 * latency query, stats and bus messages, local addresses, late joiners,
 * state changes, frame heads, and a drifting sender clock followed. */
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

static void
roundtrip (guint connections, gboolean timestamps, const gchar * props)
{
  Sender *s = sender_new (props);
  Receiver *r = receiver_new (sender_port (s), connections, 5000);
  gint64 until = g_get_monotonic_time () + 10 * G_USEC_PER_SEC;

  wait_for_connections (s->sink, connections);
  /* the sink admits a connection before the source reads its WELCOME */
  while (stats_uint (r->src, "n-connections") != connections &&
      g_get_monotonic_time () < until)
    g_usleep (10000);
  fail_unless_equals_int (stats_uint (r->src, "n-connections"), connections);
  stream_and_check (s, &r, 1, 400, timestamps);
  receiver_free (r);
  sender_free (s);
}

/* ---- tests ---- */

GST_START_TEST (test_roundtrip_1)
{
  roundtrip (1, TRUE, NULL);
}

GST_END_TEST;

GST_START_TEST (test_roundtrip_2)
{
  roundtrip (2, TRUE, NULL);
}

GST_END_TEST;

GST_START_TEST (test_roundtrip_5)
{
  roundtrip (5, TRUE, NULL);
}

GST_END_TEST;

GST_START_TEST (test_roundtrip_8)
{
  roundtrip (8, TRUE, NULL);
}

GST_END_TEST;

GST_START_TEST (test_roundtrip_schedulers)
{
  roundtrip (4, TRUE, "scheduler=round-robin");
  roundtrip (4, TRUE, "scheduler=static");
}

GST_END_TEST;

GST_START_TEST (test_roundtrip_raw_bytes_without_timestamps)
{
  roundtrip (3, FALSE, NULL);
}

GST_END_TEST;

GST_START_TEST (test_two_receivers_each_get_everything)
{
  Sender *s = sender_new (NULL);
  Receiver *r[2];

  r[0] = receiver_new (sender_port (s), 3, 5000);
  r[1] = receiver_new (sender_port (s), 5, 5000);
  wait_for_connections (s->sink, 8);
  stream_and_check (s, r, 2, 300, TRUE);
  receiver_free (r[0]);
  receiver_free (r[1]);
  sender_free (s);
}

GST_END_TEST;

GST_START_TEST (test_latency_query_and_stats)
{
  Sender *s = sender_new (NULL);
  Receiver *r = receiver_new (sender_port (s), 2, 750);
  GstQuery *q = gst_query_new_latency ();
  gboolean live;
  GstClockTime min, max;
  GstStructure *st = NULL;

  fail_unless (gst_element_query (r->src, q));
  gst_query_parse_latency (q, &live, &min, &max);
  fail_unless (live);
  fail_unless_equals_uint64 (min, 750 * GST_MSECOND);
  gst_query_unref (q);

  g_object_get (r->src, "stats", &st, NULL);
  fail_unless (gst_structure_has_field (st, "late-fraction"));
  fail_unless (gst_structure_has_field (st, "reorder-depth"));
  fail_unless (gst_structure_has_field (st, "connections"));
  gst_structure_free (st);
  receiver_free (r);
  sender_free (s);
}

GST_END_TEST;

/* The stats-interval posts the same structure on the bus. */
GST_START_TEST (test_stats_messages_on_bus)
{
  Sender *s = sender_new (NULL);
  Receiver *r;
  GstBus *bus;
  GstMessage *msg;
  gint port = sender_port (s);
  gchar *desc = g_strdup_printf ("multitcpsrc name=src host=127.0.0.1 port=%d "
      "stats-interval=100 ! fakesink", port);

  r = g_new0 (Receiver, 1);
  r->pipeline = gst_parse_launch (desc, NULL);
  g_free (desc);
  r->src = gst_bin_get_by_name (GST_BIN (r->pipeline), "src");
  r->appsink = gst_object_ref (r->src);
  gst_element_set_state (r->pipeline, GST_STATE_PLAYING);
  bus = gst_element_get_bus (r->pipeline);
  msg = gst_bus_timed_pop_filtered (bus, 5 * GST_SECOND, GST_MESSAGE_ELEMENT);
  fail_unless (msg != NULL);
  fail_unless (gst_structure_has_name (gst_message_get_structure (msg),
          "multitcpsrc-stats"));
  fail_unless (gst_structure_has_field (gst_message_get_structure (msg),
          "bitrate"));
  gst_message_unref (msg);
  gst_object_unref (bus);
  receiver_free (r);
  sender_free (s);
}

GST_END_TEST;

/* The sink's bandwidth estimate: a 2.4 Mbit/s live stream on loopback
 * (nothing waits: the windows say more) is estimated at least at what
 * arrives, in stats (per session and overall) and in element messages on
 * the sink's bus, at least once a second. */
GST_START_TEST (test_bandwidth_estimate_in_stats_and_on_bus)
{
  Sender *s = sender_new (NULL);
  Receiver *r = receiver_new (sender_port (s), 2, 1000);
  GstBus *bus = gst_element_get_bus (s->pipeline);
  GstCaps *caps = gst_caps_new_empty_simple ("application/x-test");
  GstMessage *msg;
  GRand *rand = g_rand_new_with_seed (7);
  gint64 start;
  guint i, estimates = 0;
  guint64 bps = 0;

  wait_for_connections (s->sink, 2);
  gst_app_src_set_caps (GST_APP_SRC (s->appsrc), caps);
  gst_caps_unref (caps);
  start = g_get_monotonic_time ();
  /* 3 s of 10 kB every 33 ms */
  for (i = 0; i < 90; i++) {
    GstBuffer *buf = make_payload (rand, i, 10000);
    GST_BUFFER_PTS (buf) = i * 33 * GST_MSECOND;
    GST_BUFFER_DURATION (buf) = 33 * GST_MSECOND;
    if (i % 30)
      GST_BUFFER_FLAG_SET (buf, GST_BUFFER_FLAG_DELTA_UNIT);
    pace_live (start, i, 33000);
    fail_unless_equals_int (gst_app_src_push_buffer (GST_APP_SRC (s->appsrc),
            buf), GST_FLOW_OK);
  }
  while ((msg = gst_bus_pop_filtered (bus, GST_MESSAGE_ELEMENT)) != NULL) {
    const GstStructure *st = gst_message_get_structure (msg);
    if (gst_structure_has_name (st, "multitcpsink-estimate")) {
      fail_unless (gst_structure_get_uint64 (st, "estimated-bitrate", &bps));
      fail_unless (gst_structure_has_field (st, "session"));
      fail_unless (gst_structure_has_field (st, "path-limited"));
      fail_unless (gst_structure_has_field_typed (st, "backlog-time",
              G_TYPE_UINT64));
      estimates++;
    }
    gst_message_unref (msg);
  }
  /* measured after the first half second, then once a second at least */
  fail_unless (estimates >= 2, "%u estimates", estimates);
  fail_unless (bps >= 2000000, "%" G_GUINT64_FORMAT, bps);
  fail_unless (stats_uint64 (s->sink, "estimated-bitrate") >= 2000000);
  fail_unless (sink_stats_sum (s->sink, FALSE, "estimated-bitrate") >=
      2000000);
  g_rand_free (rand);
  gst_object_unref (bus);
  receiver_free (r);
  sender_free (s);
}

GST_END_TEST;

/* Connections spread over the local addresses: the sink sees each as a
 * peer address, the source reports each connection's path. */
GST_START_TEST (test_local_addresses_spread_connections)
{
  Sender *s = sender_new (NULL);
  Receiver *r = receiver_new_with (sender_port (s), 4, 5000,
      "local-addresses=127.0.0.1,127.0.0.2");
  GstStructure *st = NULL;
  const GValue *sessions, *conns;
  guint i, from[2] = { 0, 0 }, path[2] = { 0, 0 };

  wait_for_connections (s->sink, 4);
  g_object_get (s->sink, "stats", &st, NULL);
  sessions = gst_structure_get_value (st, "sessions");
  fail_unless_equals_int (gst_value_array_get_size (sessions), 1);
  conns = gst_structure_get_value (gst_value_get_structure
      (gst_value_array_get_value (sessions, 0)), "connections");
  for (i = 0; i < gst_value_array_get_size (conns); i++) {
    const gchar *peer = gst_structure_get_string (gst_value_get_structure
        (gst_value_array_get_value (conns, i)), "peer");
    fail_unless (peer != NULL);
    from[0] += g_str_has_prefix (peer, "127.0.0.1:");
    from[1] += g_str_has_prefix (peer, "127.0.0.2:");
  }
  gst_structure_free (st);
  fail_unless_equals_int (from[0], 2);
  fail_unless_equals_int (from[1], 2);

  g_object_get (r->src, "stats", &st, NULL);
  conns = gst_structure_get_value (st, "connections");
  for (i = 0; i < gst_value_array_get_size (conns); i++) {
    gint p = -1;
    fail_unless (gst_structure_get_int (gst_value_get_structure
            (gst_value_array_get_value (conns, i)), "path", &p));
    fail_unless (p == 0 || p == 1);
    path[p]++;
  }
  gst_structure_free (st);
  fail_unless_equals_int (path[0], 2);
  fail_unless_equals_int (path[1], 2);

  stream_and_check (s, &r, 1, 200, TRUE);
  receiver_free (r);
  sender_free (s);
}

GST_END_TEST;

/* A local address that is not an address, or not this host's: an error
 * that names it. */
GST_START_TEST (test_bad_local_address_is_an_error)
{
  const gchar *bad[] = { "not-an-ip", "192.0.2.77" };
  guint i;

  for (i = 0; i < G_N_ELEMENTS (bad); i++) {
    gchar *desc = g_strdup_printf ("multitcpsrc host=127.0.0.1 port=9 "
        "timeout=2 local-addresses=%s ! fakesink", bad[i]);
    GstElement *pipeline = gst_parse_launch (desc, NULL);
    GstBus *bus = gst_element_get_bus (pipeline);
    GstMessage *msg;
    GError *err = NULL;
    gchar *dbg = NULL;

    g_free (desc);
    fail_unless_equals_int (gst_element_set_state (pipeline,
            GST_STATE_PLAYING), GST_STATE_CHANGE_FAILURE);
    msg = gst_bus_timed_pop_filtered (bus, GST_SECOND, GST_MESSAGE_ERROR);
    fail_unless (msg != NULL);
    gst_message_parse_error (msg, &err, &dbg);
    fail_unless (dbg && strstr (dbg, bad[i]) != NULL, "'%s' lacks '%s'", dbg,
        bad[i]);
    g_error_free (err);
    g_free (dbg);
    gst_message_unref (msg);
    gst_object_unref (bus);
    gst_element_set_state (pipeline, GST_STATE_NULL);
    gst_object_unref (pipeline);
  }
}

GST_END_TEST;

/* A receiver that joins while the stream runs starts at a keyframe, after
 * the caps and the stream headers. */
GST_START_TEST (test_late_joiner_starts_at_keyframe_with_headers)
{
  Sender *s = sender_new (NULL);
  gint port = sender_port (s);
  Receiver *r;
  GstCaps *caps = gst_caps_new_empty_simple ("video/x-test");
  GstBuffer *header = gst_buffer_new_wrapped (g_strdup ("HEADER"), 6);
  GstSample *sample;
  GstBuffer *got;
  guint i;

  GST_BUFFER_FLAG_SET (header, GST_BUFFER_FLAG_HEADER);
  {
    /* headers in the caps, as matroskamux and oggmux announce them */
    GValue array = G_VALUE_INIT, v = G_VALUE_INIT;
    g_value_init (&array, GST_TYPE_ARRAY);
    g_value_init (&v, GST_TYPE_BUFFER);
    gst_value_set_buffer (&v, header);
    gst_value_array_append_value (&array, &v);
    g_value_unset (&v);
    gst_structure_take_value (gst_caps_get_structure (caps, 0),
        "streamheader", &array);
  }
  gst_app_src_set_caps (GST_APP_SRC (s->appsrc), caps);
  gst_app_src_push_buffer (GST_APP_SRC (s->appsrc), gst_buffer_ref (header));
  for (i = 0; i < 100; i++) {
    GstBuffer *buf = gst_buffer_new_allocate (NULL, 1000, NULL);
    gst_buffer_memset (buf, 0, (guint8) i, 1000);
    GST_BUFFER_PTS (buf) = GST_BUFFER_DTS (buf) = i * 33 * GST_MSECOND;
    if (i % 30 != 0)
      GST_BUFFER_FLAG_SET (buf, GST_BUFFER_FLAG_DELTA_UNIT);
    gst_app_src_push_buffer (GST_APP_SRC (s->appsrc), buf);
  }
  while (stats_uint64 (s->sink, "bytes-pushed") < 100 * 1000 + 6)
    g_usleep (1000);

  r = receiver_new (port, 2, 2000);
  wait_for_connections (s->sink, 2);
  for (i = 100; i < 130; i++) {
    GstBuffer *buf = gst_buffer_new_allocate (NULL, 1000, NULL);
    gst_buffer_memset (buf, 0, (guint8) i, 1000);
    GST_BUFFER_PTS (buf) = GST_BUFFER_DTS (buf) = i * 33 * GST_MSECOND;
    GST_BUFFER_FLAG_SET (buf, GST_BUFFER_FLAG_DELTA_UNIT);
    gst_app_src_push_buffer (GST_APP_SRC (s->appsrc), buf);
  }
  gst_app_src_end_of_stream (GST_APP_SRC (s->appsrc));

  sample = gst_app_sink_try_pull_sample (GST_APP_SINK (r->appsink),
      WAIT_TIMEOUT);
  fail_unless (sample != NULL);
  fail_unless (gst_caps_is_equal (gst_sample_get_caps (sample), caps));
  got = gst_sample_get_buffer (sample);
  fail_unless (GST_BUFFER_FLAG_IS_SET (got, GST_BUFFER_FLAG_HEADER));
  fail_unless (buffers_equal (got, header));
  gst_sample_unref (sample);

  /* then the latest keyframe, 90, and everything after it */
  for (i = 90; i < 130; i++) {
    guint8 tag;
    sample = gst_app_sink_try_pull_sample (GST_APP_SINK (r->appsink),
        WAIT_TIMEOUT);
    fail_unless (sample != NULL, "buffer %u missing", i);
    got = gst_sample_get_buffer (sample);
    gst_buffer_extract (got, 0, &tag, 1);
    fail_unless_equals_int (tag, (guint8) i);
    fail_unless_equals_int (GST_BUFFER_FLAG_IS_SET (got,
            GST_BUFFER_FLAG_DELTA_UNIT), i != 90);
    gst_sample_unref (sample);
  }
  gst_caps_unref (caps);
  gst_buffer_unref (header);
  receiver_free (r);
  sender_free (s);
}

GST_END_TEST;

GST_START_TEST (test_state_cycles)
{
  guint i;

  for (i = 0; i < 15; i++) {
    Sender *s = sender_new (NULL);
    Receiver *r = receiver_new (sender_port (s), 1 + i % 5, 500);
    GstBuffer *buf = gst_buffer_new_allocate (NULL, 100, NULL);

    wait_for_connections (s->sink, 1 + i % 5);
    gst_app_src_push_buffer (GST_APP_SRC (s->appsrc), buf);
    if (i % 2)
      gst_element_set_state (r->pipeline, GST_STATE_PAUSED);
    receiver_free (r);
    sender_free (s);
  }
}

GST_END_TEST;

/* ---- what the protocol costs on the wire ---- */

#define TS_BUFFERS 3000

#define TS_SIZE 1316            /* 7 MPEG-TS packets, what muxers send */

#define TS_PER_FRAME 25

/* MPEG-TS in 1316-byte units, 25 to a video frame with one timestamp: the
 * sink sends each as BUFFER_DELTA with a short header, 5 bytes of head
 * instead of 48 (BUFFER) or 14 (BUFFER_DELTA with the 8-byte header). */
GST_START_TEST (test_small_buffers_cost_a_small_head)
{
  Sender *s = sender_new (NULL);
  Receiver *r = receiver_new (sender_port (s), 4, 5000);
  GstCaps *caps = gst_caps_new_empty_simple ("video/mpegts");
  guint64 sent, overhead;
  guint i;

  wait_for_connections (s->sink, 4);
  gst_app_src_set_caps (GST_APP_SRC (s->appsrc), caps);
  gst_caps_unref (caps);
  for (i = 0; i < TS_BUFFERS; i++) {
    GstBuffer *buf = gst_buffer_new_allocate (NULL, TS_SIZE, NULL);
    gst_buffer_memset (buf, 0, (guint8) i, TS_SIZE);
    GST_BUFFER_PTS (buf) = GST_BUFFER_DTS (buf) =
        (i / TS_PER_FRAME) * 33 * GST_MSECOND;
    fail_unless_equals_int (gst_app_src_push_buffer (GST_APP_SRC (s->appsrc),
            buf), GST_FLOW_OK);
  }
  gst_app_src_end_of_stream (GST_APP_SRC (s->appsrc));
  for (i = 0; i < TS_BUFFERS; i++) {
    GstSample *sample = gst_app_sink_try_pull_sample (GST_APP_SINK
        (r->appsink), WAIT_TIMEOUT);
    GstBuffer *got;
    guint8 first;

    fail_unless (sample != NULL, "buffer %u missing", i);
    got = gst_sample_get_buffer (sample);
    fail_unless_equals_int (gst_buffer_get_size (got), TS_SIZE);
    gst_buffer_extract (got, TS_SIZE - 1, &first, 1);
    fail_unless (first == (guint8) i, "buffer %u holds %u (pts %"
        GST_TIME_FORMAT ", flags 0x%x)", i, first,
        GST_TIME_ARGS (GST_BUFFER_PTS (got)), GST_BUFFER_FLAGS (got));
    gst_sample_unref (sample);
  }
  sent = sink_stats_sum (s->sink, TRUE, "bytes-sent");
  overhead = sent - (guint64) TS_BUFFERS * TS_SIZE;
  GST_INFO ("%" G_GUINT64_FORMAT " bytes sent for %u x %u: %.1f a buffer",
      sent, TS_BUFFERS, TS_SIZE, (gdouble) overhead / TS_BUFFERS);
  /* heads of 5 bytes, plus REPORTs (72 bytes per connection every 200 ms),
   * WELCOME and CAPS spread over them; 8-byte headers alone would be 14 */
  fail_unless (overhead < 10 * TS_BUFFERS, "%" G_GUINT64_FORMAT " bytes of "
      "overhead for %u buffers", overhead, TS_BUFFERS);
  receiver_free (r);
  sender_free (s);
}

GST_END_TEST;

/* ---- a frame stuck on one connection goes out on another ---- */

/* A receiver that reads BUFFER_DELTA but not the short header (one built
 * before COMPACT) gets 8-byte headers; one that set COMPACT gets 3-byte
 * ones; both decode the same buffers. */
GST_START_TEST (test_compact_heads_only_to_receivers_that_ask)
{
  static const guint8 flags[] = { MTCP_HELLO_FLAG_BUFFER_DELTA,
    MTCP_HELLO_FLAG_BUFFER_DELTA | MTCP_HELLO_FLAG_COMPACT
  };
  guint k;

  for (k = 0; k < G_N_ELEMENTS (flags); k++) {
    Sender *s = sender_new (NULL);
    GstCaps *caps = gst_caps_new_empty_simple ("video/mpegts");
    MtcpBufferDeltaState delta = { 0, };
    guint8 sid[MTCP_SESSION_ID_SIZE];
    RawConn rc;
    guint i, got = 0;
    gint64 until;

    raw_conn_open (&rc, sender_port (s), NULL, flags[k], sid);
    wait_for_connections (s->sink, 1);
    gst_app_src_set_caps (GST_APP_SRC (s->appsrc), caps);
    gst_caps_unref (caps);
    for (i = 0; i < 10; i++) {
      GstBuffer *buf = gst_buffer_new_allocate (NULL, TS_SIZE, NULL);
      gst_buffer_memset (buf, 0, (guint8) i, TS_SIZE);
      GST_BUFFER_PTS (buf) = (i / 5) * 33 * GST_MSECOND;
      fail_unless_equals_int (gst_app_src_push_buffer (GST_APP_SRC
              (s->appsrc), buf), GST_FLOW_OK);
    }
    until = g_get_monotonic_time () + 5 * G_USEC_PER_SEC;
    while (got < 10) {
      MtcpFrameHeader hdr;
      const guint8 *body, *payload;
      MtcpBufferInfo info;
      gsize space;
      guint8 *dst;
      gssize n;

      if (mtcp_frame_reader_next (rc.reader, &hdr, &body, NULL) !=
          MTCP_PARSE_OK) {
        fail_unless (g_get_monotonic_time () < until, "%u buffers", got);
        if (!g_socket_condition_timed_wait (rc.sock, G_IO_IN, 50000, NULL,
                NULL))
          continue;
        dst = mtcp_frame_reader_space (rc.reader, &space);
        n = g_socket_receive (rc.sock, (gchar *) dst, space, NULL, NULL);
        fail_unless (n > 0);
        mtcp_frame_reader_commit (rc.reader, n);
        continue;
      }
      if (hdr.type != MTCP_FRAME_BUFFER_DELTA)
        continue;
      fail_unless_equals_int (hdr.head_size, k ? MTCP_SHORT_HEADER_SIZE :
          MTCP_HEADER_SIZE);
      fail_unless (mtcp_parse_buffer_delta (body, hdr.length, &delta, &info,
              &payload, NULL));
      /* CAPS took seq 0 */
      fail_unless_equals_uint64 (info.seq, got + 1);
      fail_unless_equals_uint64 (info.pts, (got / 5) * 33 * GST_MSECOND);
      fail_unless_equals_int (info.payload_size, TS_SIZE);
      fail_unless_equals_int (payload[0], got);
      got++;
    }
    raw_conn_close (&rc);
    sender_free (s);
  }
}

GST_END_TEST;

/* ---- clock drift ---- */

#define DRIFT_PPM 8000          /* 240 ms in 30 s: 200 ppm for 20 min */

#define DRIFT_SECONDS 30

#define DRIFT_LATENCY_MS 200

#define DRIFT_FRAME_MS 10

typedef struct {
  gint ppm;
  gboolean correction;
  GstElement *sender;
  GstElement *receiver;
  GstElement *src;
  guint64 max_depth;
  guint64 last_depth;
  GArray *late_depths;          /* guint64 samples of the run's last third */
} DriftPair;

/* The sender's clock runs @ppm fast: its timestamps grow that much faster
 * than the pipeline clock that paces it. */
static GstPadProbeReturn
scale_timestamps (GstPad * pad, GstPadProbeInfo * info, gpointer user_data)
{
  DriftPair *pair = user_data;
  GstBuffer *buf = gst_buffer_make_writable (GST_PAD_PROBE_INFO_BUFFER (info));

  if (GST_BUFFER_PTS_IS_VALID (buf))
    GST_BUFFER_PTS (buf) = gst_util_uint64_scale_int (GST_BUFFER_PTS (buf),
        1000000 + pair->ppm, 1000000);
  if (GST_BUFFER_DTS_IS_VALID (buf))
    GST_BUFFER_DTS (buf) = gst_util_uint64_scale_int (GST_BUFFER_DTS (buf),
        1000000 + pair->ppm, 1000000);
  GST_PAD_PROBE_INFO_DATA (info) = buf;
  return GST_PAD_PROBE_OK;
}

static void
drift_pair_start (DriftPair * pair)
{
  GstElement *sink;
  GstPad *pad;
  gchar *desc;
  gint port = 0;

  pair->sender = gst_parse_launch ("videotestsrc is-live=true pattern=black "
      "! video/x-raw,format=GRAY8,width=16,height=16,framerate=100/1 "
      "! multitcpsink name=sink host=127.0.0.1 port=0 sync=false", NULL);
  fail_unless (pair->sender != NULL);
  sink = gst_bin_get_by_name (GST_BIN (pair->sender), "sink");
  pad = gst_element_get_static_pad (sink, "sink");
  gst_pad_add_probe (pad, GST_PAD_PROBE_TYPE_BUFFER, scale_timestamps, pair,
      NULL);
  gst_object_unref (pad);
  fail_if (gst_element_set_state (pair->sender, GST_STATE_PLAYING) ==
      GST_STATE_CHANGE_FAILURE);
  g_object_get (sink, "current-port", &port, NULL);
  gst_object_unref (sink);
  fail_unless (port > 0);

  /* a sink that renders on the clock: what it has not rendered yet waits
   * in the source */
  desc = g_strdup_printf ("multitcpsrc name=src host=127.0.0.1 port=%d "
      "connections=3 latency=%d drift-correction=%s ! fakesink sync=true",
      port, DRIFT_LATENCY_MS, pair->correction ? "true" : "false");
  pair->receiver = gst_parse_launch (desc, NULL);
  g_free (desc);
  fail_unless (pair->receiver != NULL);
  pair->src = gst_bin_get_by_name (GST_BIN (pair->receiver), "src");
  pair->late_depths = g_array_new (FALSE, FALSE, sizeof (guint64));
  fail_if (gst_element_set_state (pair->receiver, GST_STATE_PLAYING) ==
      GST_STATE_CHANGE_FAILURE);
}

static void
drift_pair_stop (DriftPair * pair)
{
  gst_element_set_state (pair->receiver, GST_STATE_NULL);
  gst_element_set_state (pair->sender, GST_STATE_NULL);
  gst_object_unref (pair->src);
  gst_object_unref (pair->receiver);
  gst_object_unref (pair->sender);
  g_array_unref (pair->late_depths);
}

static gint
compare_uint64 (gconstpointer a, gconstpointer b)
{
  guint64 x = *(const guint64 *) a, y = *(const guint64 *) b;
  return x < y ? -1 : x > y;
}

/* The depth the receiver settled at: a single snapshot can be a frame or two
 * over after a scheduling stall (seen under ASan on 2 busy cores), drift is a
 * steady growth that the median of the last third shows as well. */
static guint64
drift_pair_settled_depth (DriftPair * pair)
{
  g_array_sort (pair->late_depths, compare_uint64);
  fail_unless (pair->late_depths->len > 0);
  return g_array_index (pair->late_depths, guint64,
      pair->late_depths->len / 2);
}

static gint64
stats_int64 (GstElement * e, const gchar * field)
{
  GstStructure *s = NULL;
  gint64 v = 0;
  g_object_get (e, "stats", &s, NULL);
  gst_structure_get_int64 (s, field, &v);
  gst_structure_free (s);
  return v;
}

static gdouble
stats_double (GstElement * e, const gchar * field)
{
  GstStructure *s = NULL;
  gdouble v = 0;
  g_object_get (e, "stats", &s, NULL);
  gst_structure_get_double (s, field, &v);
  gst_structure_free (s);
  return v;
}

/* Four sender/receiver pairs at once: sender clocks 8000 ppm fast and slow,
 * with and without drift correction, 30 s. With it, nothing is late and
 * what waits in the source stays at the latency; without it, the fast
 * sender's buffers pile up and the slow sender's arrive late. */
GST_START_TEST (test_clock_drift_followed)
{
  DriftPair pairs[] = {
    {+DRIFT_PPM, TRUE}, {-DRIFT_PPM, TRUE},
    {+DRIFT_PPM, FALSE}, {-DRIFT_PPM, FALSE},
  };
  /* the latency's worth of frames, plus what accumulates before the first
   * estimate (5 s at 8 ms/s) and some slack */
  guint64 depth_bound = (DRIFT_LATENCY_MS + 80) / DRIFT_FRAME_MS;
  gint64 end, last_third;
  guint k;

  for (k = 0; k < G_N_ELEMENTS (pairs); k++)
    drift_pair_start (&pairs[k]);
  end = g_get_monotonic_time () + DRIFT_SECONDS * G_USEC_PER_SEC;
  last_third = end - DRIFT_SECONDS * G_USEC_PER_SEC / 3;
  while (g_get_monotonic_time () < end) {
    g_usleep (250000);
    for (k = 0; k < G_N_ELEMENTS (pairs); k++) {
      pairs[k].last_depth = stats_uint64 (pairs[k].src, "reorder-depth");
      pairs[k].max_depth = MAX (pairs[k].max_depth, pairs[k].last_depth);
      if (g_get_monotonic_time () >= last_third)
        g_array_append_val (pairs[k].late_depths, pairs[k].last_depth);
    }
  }
  for (k = 0; k < G_N_ELEMENTS (pairs); k++) {
    DriftPair *p = &pairs[k];
    GST_INFO ("%+d ppm, correction %d: skew %.0f ppm, correction %"
        G_GINT64_FORMAT " us, depth max %" G_GUINT64_FORMAT " settled %"
        G_GUINT64_FORMAT ", late %" G_GUINT64_FORMAT ", skipped %"
        G_GUINT64_FORMAT ", pushed %" G_GUINT64_FORMAT, p->ppm, p->correction,
        stats_double (p->src, "skew"),
        stats_int64 (p->src, "drift-correction") / 1000, p->max_depth,
        drift_pair_settled_depth (p), stats_uint64 (p->src, "buffers-late"),
        stats_uint64 (p->src, "buffers-skipped"), stats_uint64 (p->src,
            "buffers-pushed"));
    /* the estimate is there either way */
    fail_unless (fabs (stats_double (p->src, "skew") - p->ppm) < 500,
        "skew %.0f ppm for %d", stats_double (p->src, "skew"), p->ppm);
    fail_unless (stats_uint64 (p->src, "buffers-pushed") >
        DRIFT_SECONDS * 1000 / DRIFT_FRAME_MS / 2);
  }
  for (k = 0; k < 2; k++) {
    fail_unless_equals_uint64 (stats_uint64 (pairs[k].src, "buffers-late"),
        0);
    fail_unless_equals_uint64 (stats_uint64 (pairs[k].src,
            "buffers-skipped"), 0);
    fail_unless (drift_pair_settled_depth (&pairs[k]) <= depth_bound, "%+d "
        "ppm: %" G_GUINT64_FORMAT " buffers waited, bound %" G_GUINT64_FORMAT,
        pairs[k].ppm, drift_pair_settled_depth (&pairs[k]), depth_bound);
  }
  /* without: 240 ms of drift, more than the latency allows for */
  fail_unless (drift_pair_settled_depth (&pairs[2]) > depth_bound + 3,
      "fast sender, no correction: only %" G_GUINT64_FORMAT
      " buffers waiting", drift_pair_settled_depth (&pairs[2]));
  fail_unless (stats_uint64 (pairs[3].src, "buffers-late") > 0);

  for (k = 0; k < G_N_ELEMENTS (pairs); k++)
    drift_pair_stop (&pairs[k]);
}

GST_END_TEST;

/* ---- real encoded video ---- */

static guint
count_decoded_frames (const gchar * sender_desc, const gchar * receiver_tail,
    guint frames)
{
  GstElement *tx, *rx, *sink, *appsink;
  GstBus *bus;
  GstMessage *msg;
  gint port = 0;
  gchar *desc;
  guint n = 0;

  tx = gst_parse_launch (sender_desc, NULL);
  fail_unless (tx != NULL);
  sink = gst_bin_get_by_name (GST_BIN (tx), "sink");
  /* PAUSED: listening, but the live source produces nothing yet */
  gst_element_set_state (tx, GST_STATE_PAUSED);
  g_object_get (sink, "current-port", &port, NULL);
  fail_unless (port > 0);

  desc = g_strdup_printf ("multitcpsrc host=127.0.0.1 port=%d connections=4 "
      "latency=3000 ! %s ! appsink name=out sync=false max-buffers=0", port,
      receiver_tail);
  rx = gst_parse_launch (desc, NULL);
  g_free (desc);
  fail_unless (rx != NULL);
  appsink = gst_bin_get_by_name (GST_BIN (rx), "out");
  gst_element_set_state (rx, GST_STATE_PLAYING);
  wait_for_connections (sink, 4);
  gst_element_set_state (tx, GST_STATE_PLAYING);

  for (;;) {
    GstSample *sample = gst_app_sink_try_pull_sample (GST_APP_SINK (appsink),
        WAIT_TIMEOUT);
    if (sample == NULL)
      break;
    n++;
    gst_sample_unref (sample);
  }
  fail_unless (gst_app_sink_is_eos (GST_APP_SINK (appsink)),
      "no EOS after %u frames", n);
  bus = gst_element_get_bus (rx);
  msg = gst_bus_pop_filtered (bus, GST_MESSAGE_ERROR);
  fail_unless (msg == NULL, "receiver error");
  gst_object_unref (bus);

  gst_element_set_state (rx, GST_STATE_NULL);
  gst_element_set_state (tx, GST_STATE_NULL);
  gst_object_unref (appsink);
  gst_object_unref (sink);
  gst_object_unref (rx);
  gst_object_unref (tx);
  (void) frames;
  return n;
}

static gboolean
have_elements (const gchar * names)
{
  gchar **v = g_strsplit (names, " ", -1), **p;
  gboolean ok = TRUE;
  for (p = v; *p; p++) {
    GstElementFactory *f = gst_element_factory_find (*p);
    if (!f) {
      g_printerr ("SKIP: element %s not installed\n", *p);
      ok = FALSE;
    } else {
      gst_object_unref (f);
    }
  }
  g_strfreev (v);
  return ok;
}

#define H264_SENDER(mux) "videotestsrc is-live=true num-buffers=90 ! " \
  "video/x-raw,width=320,height=240,framerate=30/1 ! " \
  "x264enc tune=zerolatency key-int-max=30 speed-preset=ultrafast ! " \
  "h264parse ! " mux "multitcpsink name=sink host=127.0.0.1 port=0"

GST_START_TEST (test_h264_every_frame_decoded)
{
  if (!have_elements ("x264enc avdec_h264 h264parse"))
    return;
  fail_unless_equals_int (count_decoded_frames (H264_SENDER (""),
          "h264parse ! avdec_h264", 90), 90);
}

GST_END_TEST;

GST_START_TEST (test_mpegts_every_frame_decoded)
{
  if (!have_elements ("x264enc avdec_h264 mpegtsmux tsdemux"))
    return;
  fail_unless_equals_int (count_decoded_frames (H264_SENDER ("mpegtsmux ! "),
          "tsdemux ! h264parse ! avdec_h264", 90), 90);
}

GST_END_TEST;

/* A receiver joining a running MPEG-TS stream starts at a keyframe:
 * mpegtsmux marks nothing DELTA_UNIT, the sink finds keyframes by the
 * random access indicator, so the first buffer the receiver pushes is a
 * keyframe's and later ones are marked delta (without it every TS buffer
 * was a keyframe and a joiner started wherever the stream was) */
GST_START_TEST (test_mpegts_joiner_starts_at_keyframe)
{
  GstElement *tx, *rx, *sink, *appsink;
  gchar *desc;
  gint port = 0;
  guint n = 0, deltas = 0;
  gboolean first_delta = TRUE;

  if (!have_elements ("x264enc mpegtsmux"))
    return;
  tx = gst_parse_launch ("videotestsrc is-live=true pattern=ball ! "
      "video/x-raw,width=320,height=240,framerate=30/1 ! x264enc "
      "tune=zerolatency key-int-max=15 speed-preset=ultrafast ! h264parse ! "
      "mpegtsmux alignment=7 ! multitcpsink name=sink host=127.0.0.1 port=0",
      NULL);
  fail_unless (tx != NULL);
  sink = gst_bin_get_by_name (GST_BIN (tx), "sink");
  gst_element_set_state (tx, GST_STATE_PLAYING);
  g_object_get (sink, "current-port", &port, NULL);
  fail_unless (port > 0);
  /* join a third of a second in, mid-GOP */
  g_usleep (330 * 1000);
  desc = g_strdup_printf ("multitcpsrc host=127.0.0.1 port=%d latency=1000 ! "
      "appsink name=out sync=false max-buffers=0", port);
  rx = gst_parse_launch (desc, NULL);
  g_free (desc);
  appsink = gst_bin_get_by_name (GST_BIN (rx), "out");
  gst_element_set_state (rx, GST_STATE_PLAYING);
  while (n < 60) {
    GstSample *sample = gst_app_sink_try_pull_sample (GST_APP_SINK (appsink),
        5 * GST_SECOND);
    GstBuffer *b;
    if (sample == NULL)
      break;
    b = gst_sample_get_buffer (sample);
    /* the stream headers (PAT, PMT) come first, flagged HEADER */
    if (GST_BUFFER_FLAG_IS_SET (b, GST_BUFFER_FLAG_HEADER)) {
      gst_sample_unref (sample);
      continue;
    }
    if (n == 0)
      first_delta = GST_BUFFER_FLAG_IS_SET (b, GST_BUFFER_FLAG_DELTA_UNIT);
    if (GST_BUFFER_FLAG_IS_SET (b, GST_BUFFER_FLAG_DELTA_UNIT))
      deltas++;
    n++;
    gst_sample_unref (sample);
  }
  fail_unless_equals_int (n, 60);
  fail_if (first_delta, "the joiner's first media buffer is a delta unit");
  fail_unless (deltas > 0, "no buffer was marked a delta unit");
  gst_element_set_state (rx, GST_STATE_NULL);
  gst_element_set_state (tx, GST_STATE_NULL);
  gst_object_unref (appsink);
  gst_object_unref (sink);
  gst_object_unref (rx);
  gst_object_unref (tx);
}

GST_END_TEST;

GST_START_TEST (test_matroska_every_frame_decoded)
{
  if (!have_elements ("x264enc avdec_h264 matroskamux matroskademux"))
    return;
  fail_unless_equals_int (count_decoded_frames (H264_SENDER
          ("matroskamux streamable=true ! "),
          "matroskademux ! h264parse ! avdec_h264", 90), 90);
}

GST_END_TEST;

static Suite *
streaming_suite (void)
{
  Suite *s = suite_create ("streaming");
  TCase *tc = tcase_create ("loopback");

  suite_add_tcase (s, tc);
  tcase_set_timeout (tc, 120);
  tcase_add_test (tc, test_roundtrip_1);
  tcase_add_test (tc, test_roundtrip_2);
  tcase_add_test (tc, test_roundtrip_5);
  tcase_add_test (tc, test_roundtrip_8);
  tcase_add_test (tc, test_roundtrip_schedulers);
  tcase_add_test (tc, test_roundtrip_raw_bytes_without_timestamps);
  tcase_add_test (tc, test_two_receivers_each_get_everything);
  tcase_add_test (tc, test_latency_query_and_stats);
  tcase_add_test (tc, test_stats_messages_on_bus);
  tcase_add_test (tc, test_bandwidth_estimate_in_stats_and_on_bus);
  tcase_add_test (tc, test_late_joiner_starts_at_keyframe_with_headers);
  tcase_add_test (tc, test_state_cycles);
  tcase_add_test (tc, test_small_buffers_cost_a_small_head);
  tcase_add_test (tc, test_compact_heads_only_to_receivers_that_ask);
  tcase_add_test (tc, test_clock_drift_followed);
  tcase_add_test (tc, test_local_addresses_spread_connections);
  tcase_add_test (tc, test_bad_local_address_is_an_error);
  tcase_add_test (tc, test_h264_every_frame_decoded);
  tcase_add_test (tc, test_mpegts_every_frame_decoded);
  tcase_add_test (tc, test_mpegts_joiner_starts_at_keyframe);
  tcase_add_test (tc, test_matroska_every_frame_decoded);
  return s;
}

GST_CHECK_MAIN (streaming);

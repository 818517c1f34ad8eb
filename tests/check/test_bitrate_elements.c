/* multitcp
 * Copyright (C) 2026 the multitcp authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
/* bitrate-control=encoder end to end on loopback: a stand-in video encoder
 * upstream of multitcpsink, a receiver that reads slowly (the path the
 * sink estimates), the encoder's bitrate set down to what arrives and a
 * keyframe asked for when the receiver had to skip. */
#include <gst/check/gstcheck.h>
#include <gst/base/gstbasetransform.h>
#include <gst/app/gstappsrc.h>
#include <gst/app/gstappsink.h>
#include <gio/gio.h>

#include "mtcpprotocol.h"
#include "mtcptestutil.h"

/* ---- a stand-in encoder: passes buffers on, bitrate in kbit/s ---- */

typedef struct {
  GstBaseTransform parent;
  guint bitrate;                /* kbit/s */
  gboolean follow;              /* trims each buffer to the bitrate's
                                 * bytes a frame, as an encoder would */
  gint keyframes_asked;         /* atomic */
} TestEnc;

typedef struct {
  GstBaseTransformClass parent_class;
} TestEncClass;

GType test_enc_get_type (void);
G_DEFINE_TYPE (TestEnc, test_enc, GST_TYPE_BASE_TRANSFORM);

enum {
  PROP_0,
  PROP_BITRATE,
  PROP_FOLLOW_BITRATE,
};

static GstStaticPadTemplate any_sink = GST_STATIC_PAD_TEMPLATE ("sink",
    GST_PAD_SINK, GST_PAD_ALWAYS, GST_STATIC_CAPS_ANY);
static GstStaticPadTemplate any_src = GST_STATIC_PAD_TEMPLATE ("src",
    GST_PAD_SRC, GST_PAD_ALWAYS, GST_STATIC_CAPS_ANY);

static void
test_enc_set_property (GObject * object, guint id, const GValue * value,
    GParamSpec * pspec)
{
  TestEnc *self = (TestEnc *) object;
  GST_OBJECT_LOCK (self);
  if (id == PROP_FOLLOW_BITRATE)
    self->follow = g_value_get_boolean (value);
  else
    self->bitrate = g_value_get_uint (value);
  GST_OBJECT_UNLOCK (self);
  if (id == PROP_FOLLOW_BITRATE)
    gst_base_transform_set_passthrough (GST_BASE_TRANSFORM (self),
        !g_value_get_boolean (value));
}

static void
test_enc_get_property (GObject * object, guint id, GValue * value,
    GParamSpec * pspec)
{
  TestEnc *self = (TestEnc *) object;
  GST_OBJECT_LOCK (self);
  if (id == PROP_FOLLOW_BITRATE)
    g_value_set_boolean (value, self->follow);
  else
    g_value_set_uint (value, self->bitrate);
  GST_OBJECT_UNLOCK (self);
}

/* follow-bitrate: a frame of the bitrate's bytes (a keyframe three) */
static GstFlowReturn
test_enc_transform_ip (GstBaseTransform * trans, GstBuffer * buf)
{
  TestEnc *self = (TestEnc *) trans;
  gsize want = 0;

  /* called in passthrough too: without follow-bitrate, as it came */
  GST_OBJECT_LOCK (self);
  if (self->follow)
    want = (gsize) gst_util_uint64_scale (self->bitrate * 1000 / 8,
        GST_BUFFER_DURATION (buf), GST_SECOND);
  GST_OBJECT_UNLOCK (self);
  if (!GST_BUFFER_FLAG_IS_SET (buf, GST_BUFFER_FLAG_DELTA_UNIT))
    want *= 3;
  if (want > 0 && want < gst_buffer_get_size (buf))
    gst_buffer_resize (buf, 0, want);
  return GST_FLOW_OK;
}

static gboolean
test_enc_src_event (GstBaseTransform * trans, GstEvent * event)
{
  TestEnc *self = (TestEnc *) trans;

  if (GST_EVENT_TYPE (event) == GST_EVENT_CUSTOM_UPSTREAM &&
      gst_structure_has_name (gst_event_get_structure (event),
          "GstForceKeyUnit"))
    g_atomic_int_inc (&self->keyframes_asked);
  return GST_BASE_TRANSFORM_CLASS (test_enc_parent_class)->src_event (trans,
      event);
}

static void
test_enc_class_init (TestEncClass * klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);

  gobject_class->set_property = test_enc_set_property;
  gobject_class->get_property = test_enc_get_property;
  g_object_class_install_property (gobject_class, PROP_BITRATE,
      g_param_spec_uint ("bitrate", "Bitrate", "Bitrate in kbit/sec", 1,
          100000, 2000, G_PARAM_READWRITE | GST_PARAM_MUTABLE_PLAYING));
  g_object_class_install_property (gobject_class, PROP_FOLLOW_BITRATE,
      g_param_spec_boolean ("follow-bitrate", "Follow bitrate",
          "Trim each buffer to the bitrate", FALSE, G_PARAM_READWRITE));
  gst_element_class_set_static_metadata (element_class, "Test encoder",
      "Codec/Encoder/Video", "Passes buffers on", "multitcp");
  gst_element_class_add_static_pad_template (element_class, &any_sink);
  gst_element_class_add_static_pad_template (element_class, &any_src);
  GST_BASE_TRANSFORM_CLASS (klass)->src_event = test_enc_src_event;
  GST_BASE_TRANSFORM_CLASS (klass)->transform_ip = test_enc_transform_ip;
}

static void
test_enc_init (TestEnc * self)
{
  self->bitrate = 2000;
  gst_base_transform_set_passthrough (GST_BASE_TRANSFORM (self), TRUE);
}

/* ---- a receiver that reads slowly ---- */

typedef struct {
  gint port;
  gint64 until_us;
  guint bytes_per_50ms;
  guint64 got;
} SlowReader;

static gpointer
slow_reader_run (gpointer data)
{
  SlowReader *sr = data;
  RawConn rc;
  guint8 sid[MTCP_SESSION_ID_SIZE], buf[4096];
  gint64 fed = 0;

  /* a small receive buffer: TCP's window follows what we read */
  raw_conn_open_full (&rc, sr->port, NULL, 0, 1000, 4096, sid);
  while (g_get_monotonic_time () < sr->until_us) {
    gssize n;
    if (g_socket_condition_timed_wait (rc.sock, G_IO_IN, 50000, NULL, NULL)) {
      n = g_socket_receive (rc.sock, (gchar *) buf, MIN (sizeof (buf),
              sr->bytes_per_50ms), NULL, NULL);
      if (n <= 0)
        break;
      sr->got += n;
    }
    /* alive: FEEDBACK keeps the sink from presuming the connection dead */
    if (g_get_monotonic_time () - fed > 200000) {
      raw_conn_feedback (&rc, MTCP_TIME_NONE, 0);
      fed = g_get_monotonic_time ();
    }
    g_usleep (50000);
  }
  raw_conn_close (&rc);
  return NULL;
}

/* The estimate of the session that wrote least (the slow reader's), bit/s:
 * the session's own measure of its path, apart from the encoder policy. */
static guint64
slowest_session_estimate (GstElement * sink)
{
  GstStructure *st = NULL;
  const GValue *sessions;
  guint64 least_written = G_MAXUINT64, estimate = 0;
  guint i;

  g_object_get (sink, "stats", &st, NULL);
  sessions = gst_structure_get_value (st, "sessions");
  for (i = 0; sessions && i < gst_value_array_get_size (sessions); i++) {
    const GstStructure *ss =
        gst_value_get_structure (gst_value_array_get_value (sessions, i));
    guint64 written = structure_unsigned (ss, "bytes-written");
    if (written < least_written) {
      least_written = written;
      estimate = structure_unsigned (ss, "estimated-bitrate");
    }
  }
  gst_structure_free (st);
  return estimate;
}

/* what the last stream_to_slow_receiver's sink padded (every session) and
 * its fast receiver skipped as padding */
static guint64 last_sink_padding, last_fast_padding, last_probes;
/* and the stream's rate its sink reported to the fast receiver (bit/s) */
static guint64 last_fast_stream_bitrate;

/* Streams @seconds of 2 Mbit/s through a stand-in encoder (in a bin) into
 * multitcpsink (in a bin) with @sink_props, to a receiver that reads about
 * 160-320 kbit/s and, with @fast_too, a multitcpsrc that takes it all;
 * returns the encoder's bitrate at the end (kbit/s), its stats in
 * @encoder_bitrate and @changes, keyframe requests in @keyframes, the
 * slow session's largest estimate from 2 to 6 s in @slow_estimate. */
static guint
stream_to_slow_receiver (const gchar * enc_props, const gchar * sink_props,
    guint seconds,
    gboolean fast_too, guint64 * encoder_bitrate, guint64 * changes,
    gint * keyframes, guint64 * slow_estimate)
{
  GstElement *pipeline, *appsrc, *sink, *enc;
  GstCaps *caps = gst_caps_new_empty_simple ("video/x-test");
  GRand *rand = g_rand_new_with_seed (11);
  SlowReader sr = { 0, };
  Receiver *fast = NULL;
  GThread *reader;
  GstStructure *st = NULL;
  gchar *desc;
  guint kbps, i;
  gint port;
  gint64 start;

  gst_element_register (NULL, "mtcptestenc", GST_RANK_NONE,
      test_enc_get_type ());
  /* each in a bin of its own: the search goes through ghost pads */
  desc = g_strdup_printf ("appsrc name=in is-live=true format=time "
      "max-bytes=0 block=false ! ( mtcptestenc name=enc bitrate=2000 %s ) ! "
      "( multitcpsink name=sink host=127.0.0.1 port=0 sync=false "
      "bitrate-control=encoder min-bitrate=100000 %s )", enc_props,
      sink_props);
  pipeline = gst_parse_launch (desc, NULL);
  g_free (desc);
  fail_unless (pipeline != NULL);
  appsrc = gst_bin_get_by_name (GST_BIN (pipeline), "in");
  sink = gst_bin_get_by_name (GST_BIN (pipeline), "sink");
  enc = gst_bin_get_by_name (GST_BIN (pipeline), "enc");
  fail_if (gst_element_set_state (pipeline, GST_STATE_PLAYING) ==
      GST_STATE_CHANGE_FAILURE);
  g_object_get (sink, "current-port", &port, NULL);
  gst_app_src_set_caps (GST_APP_SRC (appsrc), caps);
  gst_caps_unref (caps);

  sr.port = port;
  sr.bytes_per_50ms = 2000;
  sr.until_us = g_get_monotonic_time () + (seconds + 1) * G_USEC_PER_SEC;
  reader = g_thread_new ("slow-reader", slow_reader_run, &sr);
  wait_for_connections (sink, 1);
  if (fast_too) {
    fast = receiver_new (port, 1, 5000);
    wait_for_connections (sink, 2);
  }

  /* 8 kB every 33 ms, a keyframe a second */
  start = g_get_monotonic_time ();
  for (i = 0; i < seconds * 30; i++) {
    GstBuffer *buf = make_payload (rand, i, 8000);
    GST_BUFFER_PTS (buf) = i * 33 * GST_MSECOND;
    GST_BUFFER_DURATION (buf) = 33 * GST_MSECOND;
    if (i % 30)
      GST_BUFFER_FLAG_SET (buf, GST_BUFFER_FLAG_DELTA_UNIT);
    pace_live (start, i, 33000);
    fail_unless_equals_int (gst_app_src_push_buffer (GST_APP_SRC (appsrc),
            buf), GST_FLOW_OK);
    if (i >= 60 && i < 180 && i % 5 == 0)
      *slow_estimate = MAX (*slow_estimate,
          slowest_session_estimate (sink));
    if (fast) {                 /* the fast receiver's application reads */
      GstSample *sample;
      while ((sample = gst_app_sink_try_pull_sample (GST_APP_SINK
                  (fast->appsink), 0)) != NULL)
        gst_sample_unref (sample);
    }
  }
  g_object_get (enc, "bitrate", &kbps, NULL);
  g_object_get (sink, "stats", &st, NULL);
  last_sink_padding = last_probes = last_fast_padding = 0;
  {
    const GValue *sessions = gst_structure_get_value (st, "sessions");
    for (i = 0; sessions && i < gst_value_array_get_size (sessions); i++) {
      const GstStructure *ss =
          gst_value_get_structure (gst_value_array_get_value (sessions, i));
      last_sink_padding += structure_unsigned (ss, "bytes-padding");
      last_probes += structure_unsigned (ss, "probes");
    }
  }
  if (fast) {
    GstStructure *fst;
    g_object_get (fast->src, "stats", &fst, NULL);
    last_fast_padding = structure_unsigned (fst, "bytes-padding");
    last_fast_stream_bitrate = structure_unsigned (fst, "stream-bitrate");
    gst_structure_free (fst);
  }
  fail_unless (gst_structure_get_uint64 (st, "encoder-bitrate",
          encoder_bitrate));
  fail_unless (gst_structure_get_uint64 (st, "bitrate-changes", changes));
  GST_INFO ("encoder at %u kbit/s after %" G_GUINT64_FORMAT " changes; "
      "stats %" GST_PTR_FORMAT, kbps, *changes, st);
  gst_structure_free (st);
  *keyframes = g_atomic_int_get (&((TestEnc *) enc)->keyframes_asked);
  g_thread_join (reader);

  if (fast)
    receiver_free (fast);
  gst_element_set_state (pipeline, GST_STATE_NULL);
  gst_object_unref (enc);
  gst_object_unref (sink);
  gst_object_unref (appsrc);
  gst_object_unref (pipeline);
  g_rand_free (rand);
  return kbps;
}

/* The slow reader takes at most 320 kbit/s: its session's estimate must
 * not read it as limited by the stream (on loopback one flight's delivery
 * rate or a window over a microsecond RTT is tens of Mbit/s). */
#define SLOW_ESTIMATE_MAX 1000000

/* The receiver takes about 160-320 kbit/s. An encoder that follows its
 * bitrate starts at min-bitrate, climbs towards what the reader takes and
 * stays below 1000 kbit/s and not under min-bitrate, stats say so. One
 * that does not (2 Mbit/s whatever it is told) leaves a backlog that
 * never drains: the session skips and a keyframe is asked for, and the
 * encoder stays at min-bitrate (no step up into a backlog). Encoder and
 * sink each sit in a bin. */
GST_START_TEST (test_encoder_follows_slow_receiver)
{
  guint64 encoder_bitrate = 0, changes = 0, slow_estimate = 0;
  gint keyframes = 0;
  guint kbps = stream_to_slow_receiver ("follow-bitrate=true", "", 7, FALSE,
      &encoder_bitrate, &changes, &keyframes, &slow_estimate);

  fail_unless (kbps < 1000, "encoder still at %u kbit/s", kbps);
  fail_unless (kbps >= 100, "below min-bitrate: %u kbit/s", kbps);
  fail_unless_equals_uint64 (encoder_bitrate, (guint64) kbps * 1000);
  fail_unless (changes >= 1, "the encoder never moved from %u kbit/s",
      kbps);
  fail_unless (slow_estimate < SLOW_ESTIMATE_MAX,
      "the slow session estimated at %" G_GUINT64_FORMAT " bit/s",
      slow_estimate);

  kbps = stream_to_slow_receiver ("", "", 7, FALSE, &encoder_bitrate,
      &changes, &keyframes, &slow_estimate);
  fail_unless (kbps < 1000, "encoder still at %u kbit/s", kbps);
  fail_unless (kbps >= 100, "below min-bitrate: %u kbit/s", kbps);
  fail_unless_equals_uint64 (encoder_bitrate, (guint64) kbps * 1000);
  fail_unless (keyframes >= 1);
  fail_unless (slow_estimate < SLOW_ESTIMATE_MAX,
      "the slow session estimated at %" G_GUINT64_FORMAT " bit/s",
      slow_estimate);
}

GST_END_TEST;

/* bitrate-follows=strongest: a fast receiver next to the slow one keeps
 * the encoder up (the slow one's session skips), and the slow one's skips
 * ask for no keyframe; the default (weakest) goes down to the slow one. */
GST_START_TEST (test_encoder_follows_strongest_receiver)
{
  guint64 encoder_bitrate = 0, changes = 0, slow_estimate = 0;
  gint keyframes = 0;
  guint kbps;

  kbps = stream_to_slow_receiver ("", "bitrate-follows=strongest", 7, TRUE,
      &encoder_bitrate, &changes, &keyframes, &slow_estimate);
  fail_unless (kbps >= 1500, "the strongest receiver's pace: %u kbit/s",
      kbps);
  fail_unless_equals_int (keyframes, 0);
  kbps = stream_to_slow_receiver ("", "", 7, TRUE, &encoder_bitrate, &changes,
      &keyframes, &slow_estimate);
  fail_unless (kbps < 1000, "the weakest receiver's pace: %u kbit/s", kbps);
  /* next to a fast receiver, the slow one's session is still its own */
  fail_unless (slow_estimate < SLOW_ESTIMATE_MAX,
      "the slow session estimated at %" G_GUINT64_FORMAT " bit/s",
      slow_estimate);
}

GST_END_TEST;

/* bitrate-probe=padding next to a fast receiver: once the encoder nears
 * what the stream carries, the sink probes with PADDING, which the fast
 * receiver skips and counts; the encoder still follows the strongest.
 * The default (after-outage) sends none on a path that was never dark. */
GST_START_TEST (test_padding_probes_reach_the_receiver)
{
  guint64 encoder_bitrate = 0, changes = 0, slow_estimate = 0;
  gint keyframes = 0;
  guint kbps;

  /* starting at 1 Mbit/s, the first probe comes about 2 s in, not 5; on
   * a busy machine it once sent no padding in its 0.7 s (padding waits
   * while frames do, and is withheld from a connection whose path queued
   * since the probe began) and the next came 4 s later: 10 s leave room
   * for it */
  kbps = stream_to_slow_receiver ("", "bitrate-follows=strongest "
      "bitrate-probe=padding min-bitrate=1000000", 10, TRUE,
      &encoder_bitrate, &changes, &keyframes, &slow_estimate);
  fail_unless (kbps >= 1500, "the strongest receiver's pace: %u kbit/s",
      kbps);
  fail_unless (last_probes >= 1, "no probe");
  fail_unless (last_sink_padding > 0, "no padding sent");
  fail_unless (last_fast_padding > 0, "no padding received");
  fail_unless (last_fast_padding <= last_sink_padding,
      "%" G_GUINT64_FORMAT " received of %" G_GUINT64_FORMAT,
      last_fast_padding, last_sink_padding);
  stream_to_slow_receiver ("", "bitrate-follows=strongest", 7, TRUE,
      &encoder_bitrate, &changes, &keyframes, &slow_estimate);
  fail_unless_equals_uint64 (last_probes, 0);
  fail_unless_equals_uint64 (last_sink_padding, 0);
}

GST_END_TEST;

/* With bitrate-control=encoder the sink tells its receivers the most the
 * encoder may be given as the stream's rate, so that they size their
 * connections for the stream it would send (ParS's count for a stream
 * starting at min-bitrate held a cubic sink at 3% loss at 1.6 Mbit/s of
 * 8); without it, what the encoder makes (about 2 Mbit/s here). */
GST_START_TEST (test_receivers_size_for_the_encoders_most)
{
  guint64 encoder_bitrate = 0, changes = 0, slow_estimate = 0;
  gint keyframes = 0;

  stream_to_slow_receiver ("", "bitrate-follows=strongest "
      "max-bitrate=20000000", 4, TRUE, &encoder_bitrate, &changes,
      &keyframes, &slow_estimate);
  fail_unless (last_fast_stream_bitrate >= 20000000, "reported %"
      G_GUINT64_FORMAT " bit/s", last_fast_stream_bitrate);
  stream_to_slow_receiver ("", "bitrate-control=none max-bitrate=20000000",
      4, TRUE, &encoder_bitrate, &changes, &keyframes, &slow_estimate);
  fail_unless (last_fast_stream_bitrate > 0);
  fail_unless (last_fast_stream_bitrate < 5000000, "reported %"
      G_GUINT64_FORMAT " bit/s", last_fast_stream_bitrate);
}

GST_END_TEST;

/* bitrate-control=encoder with no encoder upstream: a warning that says
 * so, the stream goes on. */
GST_START_TEST (test_no_encoder_is_a_warning)
{
  Sender *s = sender_new ("bitrate-control=encoder");
  Receiver *r = receiver_new (sender_port (s), 1, 2000);
  GstBus *bus = gst_element_get_bus (s->pipeline);
  GstMessage *m;
  GError *err = NULL;
  gchar *debug = NULL;

  wait_for_connections (s->sink, 1);
  stream_and_check (s, &r, 1, 60, TRUE);
  m = gst_bus_timed_pop_filtered (bus, 5 * GST_SECOND, GST_MESSAGE_WARNING);
  fail_unless (m != NULL, "no warning");
  gst_message_parse_warning (m, &err, &debug);
  fail_unless (strstr (err->message, "no video encoder upstream") != NULL,
      "%s", err->message);
  g_error_free (err);
  g_free (debug);
  gst_message_unref (m);
  gst_object_unref (bus);
  receiver_free (r);
  sender_free (s);
}

GST_END_TEST;

static Suite *
bitrate_elements_suite (void)
{
  Suite *s = suite_create ("bitrate_elements");
  TCase *tc = tcase_create ("loopback");

  suite_add_tcase (s, tc);
  tcase_set_timeout (tc, 120);
  tcase_add_test (tc, test_encoder_follows_slow_receiver);
  tcase_add_test (tc, test_encoder_follows_strongest_receiver);
  tcase_add_test (tc, test_padding_probes_reach_the_receiver);
  tcase_add_test (tc, test_no_encoder_is_a_warning);
  tcase_add_test (tc, test_receivers_size_for_the_encoders_most);
  return s;
}

GST_CHECK_MAIN (bitrate_elements);

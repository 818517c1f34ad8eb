/* multitcp
 * Copyright (C) 2026 the multitcp authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
/* multitcpsink's transfer-control on a non-live upstream (seed 004), on
 * loopback: sent greedily a stored stream runs far ahead of its playback,
 * the receiver reports what it holds ahead (its playout buffer) and the
 * sink sees it; nothing is lost, though the receiver comes after the
 * file began. How far network-friendly
 * stays ahead is tests/netsim/test_transfer.py's: on loopback the MSS is
 * 64 kB and the RTT 50 us, so a round (5 ms at least) that sends at all
 * sends a whole frame, and the pacing is that coarse. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "mtcptestutil.h"

/* 150 raw frames of 19 200 bytes at 30 fps: 5 s, 4.6 Mbit/s, from a file
 * server: the sink does not sync to the clock */
#define FRAMES 150
#define FRAME_BYTES (160 * 120)

typedef struct {
  guint64 sent_at_2s;           /* the session's bytes sent 2 s in */
  guint64 playout_at_2s;        /* the receiver's playout buffer then */
  guint64 sink_saw_at_2s;       /* and what the sink's FEEDBACK said */
  guint frames;                 /* buffers that reached the receiver's sink */
} TransferRun;

static void
on_handoff (GstElement * sink, GstBuffer * buf, GstPad * pad, gpointer data)
{
  g_atomic_int_inc ((gint *) data);
}

/* A multitcpsrc on @port (@props) into a fakesink (@sink_props) that
 * counts its buffers in @frames; PLAYING. */
static GstElement *
receiver_start (gint port, const gchar * props, const gchar * sink_props,
    gint * frames)
{
  gchar *desc = g_strdup_printf ("multitcpsrc name=src host=127.0.0.1 "
      "port=%d %s drift-correction=false ! fakesink name=fake %s "
      "signal-handoffs=true", port, props, sink_props);
  GstElement *recv = gst_parse_launch (desc, NULL), *fake;

  g_free (desc);
  fail_unless (recv != NULL);
  fake = gst_bin_get_by_name (GST_BIN (recv), "fake");
  g_signal_connect (fake, "handoff", G_CALLBACK (on_handoff), frames);
  gst_object_unref (fake);
  fail_unless (gst_element_set_state (recv, GST_STATE_PLAYING) !=
      GST_STATE_CHANGE_FAILURE);
  return recv;
}

static void
wait_for_eos (GstElement * recv, GstClockTime timeout, const gchar * what)
{
  GstBus *bus = gst_element_get_bus (recv);
  GstMessage *msg = gst_bus_timed_pop_filtered (bus, timeout,
      GST_MESSAGE_EOS | GST_MESSAGE_ERROR);

  fail_unless (msg && GST_MESSAGE_TYPE (msg) == GST_MESSAGE_EOS,
      "%s: no EOS at the receiver", what);
  gst_message_unref (msg);
  gst_object_unref (bus);
}

static void
run_transfer (const gchar * control, TransferRun * out)
{
  gchar *desc;
  GstElement *send, *recv, *sink, *src;
  gint port, frames = 0;
  GstStructure *st = NULL;
  const GValue *sessions;

  desc = g_strdup_printf ("videotestsrc is-live=false num-buffers=%d ! "
      "video/x-raw,format=GRAY8,width=160,height=120,framerate=30/1 ! "
      "multitcpsink name=sink port=0 sync=false transfer-control=%s", FRAMES,
      control);
  send = gst_parse_launch (desc, NULL);
  g_free (desc);
  fail_unless (send != NULL);
  sink = gst_bin_get_by_name (GST_BIN (send), "sink");
  fail_unless (gst_element_set_state (send, GST_STATE_PLAYING) !=
      GST_STATE_CHANGE_FAILURE);
  g_object_get (sink, "current-port", &port, NULL);
  fail_unless (port > 0);
  /* the receiver comes a moment after the file began: a stream that is not
   * live waits for it (before stop 57 the file went through the queue with
   * no one to take it, and the receiver started at its newest keyframe,
   * near the end: the "18 of 150 frames lost" of one CI run) */
  g_usleep (300 * G_TIME_SPAN_MILLISECOND);

  /* the receiver renders in time: its playout buffer drains at the
   * stream's rate */
  recv = receiver_start (port, "connections=2 latency=1000", "sync=true",
      &frames);
  src = gst_bin_get_by_name (GST_BIN (recv), "src");

  wait_for_connections (sink, 2);
  g_usleep (2 * G_USEC_PER_SEC);
  g_object_get (sink, "stats", &st, NULL);
  sessions = gst_structure_get_value (st, "sessions");
  fail_unless (sessions && gst_value_array_get_size (sessions) == 1);
  out->sent_at_2s = structure_unsigned (gst_value_get_structure
      (gst_value_array_get_value (sessions, 0)), "bytes-sent");
  out->sink_saw_at_2s = structure_unsigned (gst_value_get_structure
      (gst_value_array_get_value (sessions, 0)), "receiver-playout-bytes");
  gst_structure_free (st);
  out->playout_at_2s = stats_uint64 (src, "playout-bytes");

  wait_for_eos (recv, 30 * GST_SECOND, control);
  out->frames = g_atomic_int_get (&frames);

  gst_element_set_state (recv, GST_STATE_NULL);
  gst_element_set_state (send, GST_STATE_NULL);
  gst_object_unref (src);
  gst_object_unref (sink);
  gst_object_unref (recv);
  gst_object_unref (send);
}

GST_START_TEST (test_playout_reported_nothing_lost)
{
  TransferRun greedy;
  guint64 total = (guint64) FRAMES * FRAME_BYTES;

  /* greedy only: network-friendly's pacing is tests/netsim/test_transfer.py's
   * (on loopback its rounds are coarse) */
  run_transfer ("greedy", &greedy);
  GST_INFO ("2 s in: greedy sent %" G_GUINT64_FORMAT " (playout %"
      G_GUINT64_FORMAT ", the sink saw %" G_GUINT64_FORMAT ")",
      greedy.sent_at_2s, greedy.playout_at_2s, greedy.sink_saw_at_2s);
  fail_unless_equals_int (greedy.frames, FRAMES);
  /* greedy: the whole 5 s stream within 2 s */
  fail_unless (greedy.sent_at_2s >= total * 9 / 10, "greedy sent %"
      G_GUINT64_FORMAT " of %" G_GUINT64_FORMAT, greedy.sent_at_2s, total);
  /* 2 s in, about 3 s of it (2 s and the 1 s latency) is still to play:
   * the receiver holds it and says so */
  fail_unless (greedy.playout_at_2s >= total / 3 &&
      greedy.playout_at_2s <= total, "playout %" G_GUINT64_FORMAT,
      greedy.playout_at_2s);
  fail_unless (greedy.sink_saw_at_2s >= total / 3,
      "the sink saw a playout of %" G_GUINT64_FORMAT, greedy.sink_saw_at_2s);
}

GST_END_TEST;

/* A file waiting for its first receiver can be paused, and played again:
 * render waits in basesink's own way when unlocked for PAUSED (it returned
 * FLUSHING before, the source's task stopped and PAUSED never came). */
GST_START_TEST (test_file_waiting_for_a_receiver_pauses)
{
  GstElement *send, *recv, *sink;
  GstStateChangeReturn ret;
  gint port, frames = 0;

  send = gst_parse_launch ("videotestsrc is-live=false num-buffers=30 ! "
      "video/x-raw,format=GRAY8,width=160,height=120,framerate=30/1 ! "
      "multitcpsink name=sink port=0 sync=false", NULL);
  fail_unless (send != NULL);
  sink = gst_bin_get_by_name (GST_BIN (send), "sink");
  gst_element_set_state (send, GST_STATE_PLAYING);
  g_usleep (300 * G_TIME_SPAN_MILLISECOND);
  gst_element_set_state (send, GST_STATE_PAUSED);
  ret = gst_element_get_state (send, NULL, NULL, 5 * GST_SECOND);
  fail_unless_equals_int (ret, GST_STATE_CHANGE_SUCCESS);
  gst_element_set_state (send, GST_STATE_PLAYING);
  g_object_get (sink, "current-port", &port, NULL);
  fail_unless (port > 0);

  recv = receiver_start (port, "connections=1 latency=500", "sync=false",
      &frames);
  wait_for_eos (recv, 20 * GST_SECOND, "paused before a receiver");
  /* paused before any receiver, the file is still whole */
  fail_unless_equals_int (g_atomic_int_get (&frames), 30);

  gst_element_set_state (recv, GST_STATE_NULL);
  gst_element_set_state (send, GST_STATE_NULL);
  gst_object_unref (sink);
  gst_object_unref (recv);
  gst_object_unref (send);
}

GST_END_TEST;

static Suite *
transfer_elements_suite (void)
{
  Suite *s = suite_create ("transfer_elements");
  TCase *tc = tcase_create ("general");

  tcase_set_timeout (tc, 120);
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_playout_reported_nothing_lost);
  tcase_add_test (tc, test_file_waiting_for_a_receiver_pauses);
  return s;
}

GST_CHECK_MAIN (transfer_elements);

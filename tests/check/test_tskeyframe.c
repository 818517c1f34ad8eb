/* multitcp
 * Copyright (C) 2026 the multitcp authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
/* MPEG-TS keyframes by the random access indicator (mtcptskeyframe.c), on
 * packets made by hand, and on what mpegtsmux makes of x264. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <gst/check/gstcheck.h>
#include <string.h>

#include "mtcptskeyframe.h"

/* @n packets of 188 bytes (each after @lead bytes); packet @rai (or none:
 * -1) starts a PES of @stream_id with random_access_indicator set */
static GstBuffer *
ts_buffer (guint n, gint rai, guint lead, guint8 stream_id)
{
  guint size = 188 + lead, i;
  guint8 *data = g_malloc0 (n * size);

  for (i = 0; i < n; i++) {
    guint8 *p = data + i * size + lead;
    p[0] = 0x47;
    p[1] = 0x01;                /* PID 0x100 */
    p[2] = 0x00;
    if ((gint) i == rai) {
      p[1] |= 0x40;             /* payload unit start */
      p[3] = 0x30;              /* adaptation field and payload */
      p[4] = 7;
      p[5] = 0x50;              /* random access, PCR */
      /* the PES header after the 1 + 7 bytes of the field */
      p[12] = 0;
      p[13] = 0;
      p[14] = 1;
      p[15] = stream_id;
    } else if (i % 2) {
      p[3] = 0x30;              /* an adaptation field without the flag */
      p[4] = 1;
      p[5] = 0x10;
    } else {
      p[3] = 0x10;              /* payload only */
      p[4] = 0x40;              /* payload bytes that look like the flag */
      p[5] = 0x40;
    }
  }
  return gst_buffer_new_wrapped (data, n * size);
}

static GstCaps *
ts_caps (gint packetsize)
{
  return packetsize ? gst_caps_new_simple ("video/mpegts", "systemstream",
      G_TYPE_BOOLEAN, TRUE, "packetsize", G_TYPE_INT, packetsize, NULL) :
      gst_caps_new_simple ("video/mpegts", "systemstream", G_TYPE_BOOLEAN,
      TRUE, NULL);
}

#define VIDEO 0xe0
#define AUDIO 0xc0

GST_START_TEST (test_random_access_by_hand)
{
  MtcpTsKeyframes tk = { 0 };
  GstCaps *caps = ts_caps (0), *m2ts = ts_caps (192), *h264;
  GstBuffer *key = ts_buffer (7, 3, 0, VIDEO), *delta = ts_buffer (7, -1, 0,
      VIDEO), *flagged = ts_buffer (7, -1, 0, VIDEO);
  GstBuffer *audio = ts_buffer (7, 2, 0, AUDIO), *junk;
  guint8 *bytes = g_malloc0 (4096);

  junk = gst_buffer_new_wrapped (bytes, 4096);
  fail_unless (mtcp_ts_keyframes_init (&tk, caps));
  fail_unless_equals_int (tk.packet_size, 188);
  /* before the first random access point the buffer's flag says */
  GST_BUFFER_FLAG_SET (flagged, GST_BUFFER_FLAG_DELTA_UNIT);
  fail_unless (mtcp_ts_keyframes_is_delta (&tk, flagged, 0));
  fail_if (mtcp_ts_keyframes_is_delta (&tk, delta, 0));
  /* an audio PES with the indicator is no video keyframe */
  fail_if (mtcp_ts_keyframes_is_delta (&tk, audio, 0));
  fail_if (tk.seen_random_access);
  /* from the first video one on, ours */
  fail_if (mtcp_ts_keyframes_is_delta (&tk, key, GST_SECOND));
  fail_unless (mtcp_ts_keyframes_is_delta (&tk, delta, 2 * GST_SECOND));
  fail_unless (mtcp_ts_keyframes_is_delta (&tk, audio, 2 * GST_SECOND));
  fail_if (mtcp_ts_keyframes_is_delta (&tk, key, 3 * GST_SECOND));
  /* the same caps again (a new stream header) change nothing */
  fail_unless (mtcp_ts_keyframes_init (&tk, caps));
  fail_unless (tk.seen_random_access);
  /* not aligned on packets: cannot tell, the buffer's own flag */
  fail_unless_equals_int (mtcp_ts_random_access (&tk, bytes, 4096),
      MTCP_TS_CANNOT_TELL);
  fail_if (mtcp_ts_keyframes_is_delta (&tk, junk, 3 * GST_SECOND));
  /* no random access point for 10 s: the muxer stopped, own flags again */
  fail_unless (mtcp_ts_keyframes_is_delta (&tk, delta, 12 * GST_SECOND));
  fail_if (mtcp_ts_keyframes_is_delta (&tk, delta, 14 * GST_SECOND));
  fail_if (tk.seen_random_access);
  /* M2TS: 4 bytes before each packet */
  gst_buffer_unref (key);
  key = ts_buffer (5, 4, 4, VIDEO);
  fail_unless (mtcp_ts_keyframes_init (&tk, m2ts));
  fail_if (tk.seen_random_access);
  fail_if (mtcp_ts_keyframes_is_delta (&tk, key, 0));
  fail_unless (tk.seen_random_access);
  /* not TS: nothing to do */
  h264 = gst_caps_new_empty_simple ("video/x-h264");
  fail_if (mtcp_ts_keyframes_init (&tk, h264));
  fail_unless_equals_int (tk.packet_size, 0);
  fail_unless (mtcp_ts_keyframes_is_delta (&tk, flagged, 0));
  fail_if (mtcp_ts_keyframes_is_delta (&tk, delta, 0));
  gst_caps_unref (caps);
  gst_caps_unref (m2ts);
  gst_caps_unref (h264);
  gst_buffer_unref (key);
  gst_buffer_unref (delta);
  gst_buffer_unref (flagged);
  gst_buffer_unref (audio);
  gst_buffer_unref (junk);
}

GST_END_TEST;

static GList *muxed;

static gboolean
collect_one (GstBuffer ** buf, guint idx, gpointer unused)
{
  muxed = g_list_append (muxed, gst_buffer_ref (*buf));
  return TRUE;
}

/* mpegtsmux pushes buffer lists */
static GstPadProbeReturn
collect (GstPad * pad, GstPadProbeInfo * info, gpointer unused)
{
  if (info->type & GST_PAD_PROBE_TYPE_BUFFER_LIST)
    gst_buffer_list_foreach (GST_PAD_PROBE_INFO_BUFFER_LIST (info),
        collect_one, NULL);
  else
    muxed = g_list_append (muxed, gst_buffer_ref (GST_PAD_PROBE_INFO_BUFFER
            (info)));
  return GST_PAD_PROBE_OK;
}

/* x264 with a keyframe every 10 frames through mpegtsmux: 40 frames give 4
 * keyframes, each starting a run of the buffers it and its GOP fill */
GST_START_TEST (test_random_access_from_mpegtsmux)
{
  GstElement *pipe;
  GstPad *pad;
  GstBus *bus;
  GstMessage *msg;
  GstCaps *caps;
  MtcpTsKeyframes tk = { 0 };
  GstElement *fakesink;
  GList *l;
  guint keys = 0, deltas = 0;

  GstElementFactory *x264 = gst_element_factory_find ("x264enc"),
      *mux = gst_element_factory_find ("mpegtsmux");

  if (x264 == NULL || mux == NULL) {
    g_printerr ("SKIP: x264enc or mpegtsmux not installed\n");
    g_clear_object (&x264);
    g_clear_object (&mux);
    return;
  }
  gst_object_unref (x264);
  gst_object_unref (mux);
  pipe = gst_parse_launch ("videotestsrc num-buffers=40 pattern=ball ! "
      "video/x-raw,width=320,height=240,framerate=30/1 ! x264enc "
      "key-int-max=10 tune=zerolatency speed-preset=ultrafast ! h264parse ! "
      "mpegtsmux alignment=7 ! fakesink name=sink", NULL);
  fail_unless (pipe != NULL);
  fakesink = gst_bin_get_by_name (GST_BIN (pipe), "sink");
  pad = gst_element_get_static_pad (fakesink, "sink");
  gst_object_unref (fakesink);
  gst_pad_add_probe (pad, GST_PAD_PROBE_TYPE_BUFFER |
      GST_PAD_PROBE_TYPE_BUFFER_LIST, collect, NULL, NULL);
  gst_element_set_state (pipe, GST_STATE_PLAYING);
  bus = gst_element_get_bus (pipe);
  msg = gst_bus_timed_pop_filtered (bus, 30 * GST_SECOND,
      GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
  fail_unless (msg && GST_MESSAGE_TYPE (msg) == GST_MESSAGE_EOS);
  gst_message_unref (msg);
  caps = gst_pad_get_current_caps (pad);
  fail_unless (mtcp_ts_keyframes_init (&tk, caps));
  for (l = muxed; l; l = l->next) {
    if (mtcp_ts_keyframes_is_delta (&tk, l->data,
            GST_BUFFER_PTS (GST_BUFFER (l->data))))
      deltas++;
    else
      keys++;
  }
  GST_INFO ("%u buffers: %u keyframes", keys + deltas, keys);
  /* the first buffer starts the first keyframe */
  fail_unless (tk.seen_random_access);
  fail_unless_equals_int (keys, 4);
  fail_unless (deltas > 4 * keys);
  gst_caps_unref (caps);
  gst_object_unref (pad);
  gst_object_unref (bus);
  gst_element_set_state (pipe, GST_STATE_NULL);
  gst_object_unref (pipe);
  g_list_free_full (muxed, (GDestroyNotify) gst_buffer_unref);
  muxed = NULL;
}

GST_END_TEST;

static Suite *
tskeyframe_suite (void)
{
  Suite *s = suite_create ("tskeyframe");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_random_access_by_hand);
  tcase_add_test (tc, test_random_access_from_mpegtsmux);
  return s;
}

GST_CHECK_MAIN (tskeyframe);

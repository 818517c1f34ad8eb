/* multitcp
 * Copyright (C) 2026 the multitcp authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
/* Unit tests of the shared send queue: cursors, joiners, skips, lanes. */
#include <gst/check/gstcheck.h>

#include "mtcpsendqueue.h"

static MtcpSendQueueLimits no_limits = { 0, GST_CLOCK_TIME_NONE };

static GstBuffer *
make_buffer (guint8 tag, gsize size, gboolean delta, gboolean header)
{
  GstBuffer *buf = gst_buffer_new_allocate (NULL, size, NULL);
  gst_buffer_memset (buf, 0, tag, size);
  if (delta)
    GST_BUFFER_FLAG_SET (buf, GST_BUFFER_FLAG_DELTA_UNIT);
  if (header)
    GST_BUFFER_FLAG_SET (buf, GST_BUFFER_FLAG_HEADER);
  return buf;
}

/* push a buffer whose first byte is @tag, at @ms running time */
static void
push (MtcpSendQueue * q, guint8 tag, gboolean delta, guint ms)
{
  GstBuffer *buf = make_buffer (tag, 1000, delta, FALSE);
  mtcp_send_queue_push_buffer (q, buf, ms * GST_MSECOND, ms * GST_MSECOND,
      33 * GST_MSECOND);
  gst_buffer_unref (buf);
}

static guint8
payload_tag (MtcpOutFrame * f)
{
  guint8 tag = 0;
  fail_unless (f->payload != NULL);
  gst_buffer_extract (f->payload, 0, &tag, 1);
  return tag;
}

static void
expect_buffer (MtcpOutFrame * f, guint64 seq, guint8 tag)
{
  fail_unless (f != NULL, "expected buffer seq %" G_GUINT64_FORMAT, seq);
  fail_unless_equals_int (f->type, MTCP_FRAME_BUFFER);
  fail_unless_equals_uint64 (f->seq, seq);
  fail_unless_equals_int (payload_tag (f), tag);
  mtcp_out_frame_free (f);
}

static void
expect_caps (MtcpOutFrame * f, guint64 seq)
{
  fail_unless (f != NULL);
  fail_unless_equals_int (f->type, MTCP_FRAME_CAPS);
  fail_unless_equals_uint64 (f->seq, seq);
  mtcp_out_frame_free (f);
}

static void
expect_skip (MtcpOutFrame * f, guint64 first, guint64 end)
{
  MtcpFrameHeader hdr;
  MtcpSkip skip;
  gchar *err = NULL;

  fail_unless (f != NULL);
  fail_unless_equals_int (f->type, MTCP_FRAME_SKIP);
  fail_unless_equals_int (mtcp_parse_header (f->head, f->head_size,
          MTCP_MAX_FRAME_DEFAULT, &hdr, &err), MTCP_PARSE_OK);
  fail_unless (mtcp_parse_skip (f->head + MTCP_HEADER_SIZE, hdr.length, &skip,
          &err));
  fail_unless_equals_uint64 (skip.first_seq, first);
  fail_unless_equals_uint64 (skip.end_seq, end);
  mtcp_out_frame_free (f);
}

GST_START_TEST (test_early_session_gets_everything_in_order)
{
  MtcpSendQueue *q = mtcp_send_queue_new (&no_limits);
  MtcpQueueSession *s = mtcp_send_queue_add_session (q);
  GstCaps *caps = gst_caps_new_empty_simple ("video/x-h264");

  fail_unless (mtcp_send_queue_take (q, s) == NULL);
  mtcp_send_queue_push_caps (q, caps);
  push (q, 1, FALSE, 0);
  push (q, 2, TRUE, 33);
  push (q, 3, TRUE, 66);

  expect_caps (mtcp_send_queue_take (q, s), 0);
  expect_buffer (mtcp_send_queue_take (q, s), 1, 1);
  expect_buffer (mtcp_send_queue_take (q, s), 2, 2);
  expect_buffer (mtcp_send_queue_take (q, s), 3, 3);
  fail_unless (mtcp_send_queue_take (q, s) == NULL);
  fail_unless (mtcp_send_queue_drained (q));

  gst_caps_unref (caps);
  mtcp_send_queue_free (q);
}

GST_END_TEST;

GST_START_TEST (test_deltas_before_first_keyframe_are_skipped)
{
  MtcpSendQueue *q = mtcp_send_queue_new (&no_limits);
  MtcpQueueSession *s = mtcp_send_queue_add_session (q);

  push (q, 1, TRUE, 0);
  push (q, 2, TRUE, 33);
  push (q, 3, FALSE, 66);
  push (q, 4, TRUE, 99);

  /* the receiver learns that seq 0 and 1 never come */
  expect_skip (mtcp_send_queue_take (q, s), 0, 2);
  expect_buffer (mtcp_send_queue_take (q, s), 2, 3);
  expect_buffer (mtcp_send_queue_take (q, s), 3, 4);
  fail_unless (mtcp_send_queue_take (q, s) == NULL);
  mtcp_send_queue_free (q);
}

GST_END_TEST;

GST_START_TEST (test_late_joiner_starts_at_latest_keyframe_after_caps)
{
  MtcpSendQueue *q = mtcp_send_queue_new (&no_limits);
  MtcpQueueSession *s;
  GstCaps *caps = gst_caps_new_empty_simple ("video/x-h264");
  MtcpQueueSessionStats st;

  mtcp_send_queue_push_caps (q, caps);
  push (q, 1, FALSE, 0);
  push (q, 2, TRUE, 33);
  push (q, 3, FALSE, 66);
  push (q, 4, TRUE, 99);

  s = mtcp_send_queue_add_session (q);
  expect_caps (mtcp_send_queue_take (q, s), 0);
  expect_buffer (mtcp_send_queue_take (q, s), 1, 3);
  expect_buffer (mtcp_send_queue_take (q, s), 2, 4);
  fail_unless (mtcp_send_queue_take (q, s) == NULL);
  mtcp_send_queue_session_stats (q, s, &st);
  fail_unless_equals_uint64 (st.buffers_sent, 2);
  fail_unless_equals_uint64 (st.buffers_dropped, 0);

  gst_caps_unref (caps);
  mtcp_send_queue_free (q);
}

GST_END_TEST;

GST_START_TEST (test_joiner_waits_when_the_backlog_is_too_much)
{
  MtcpSendQueue *q = mtcp_send_queue_new (&no_limits);
  MtcpQueueSession *s, *fits;
  GstCaps *caps = gst_caps_new_empty_simple ("video/x-h264");
  MtcpQueueSessionStats st;

  mtcp_send_queue_push_caps (q, caps);
  push (q, 1, FALSE, 0);
  push (q, 2, TRUE, 33);
  push (q, 3, TRUE, 66);

  /* 3000 bytes since the latest keyframe: 2999 is too little */
  s = mtcp_send_queue_add_session_within (q, 2999);
  fits = mtcp_send_queue_add_session_within (q, 3000);
  expect_caps (mtcp_send_queue_take (q, fits), 0);
  expect_buffer (mtcp_send_queue_take (q, fits), 1, 1);
  expect_caps (mtcp_send_queue_take (q, s), 0);
  fail_unless (mtcp_send_queue_take (q, s) == NULL);
  /* a delta first: still waiting; then the next keyframe */
  push (q, 4, TRUE, 99);
  push (q, 5, FALSE, 1000);
  expect_skip (mtcp_send_queue_take (q, s), 1, 2);
  expect_buffer (mtcp_send_queue_take (q, s), 2, 5);
  fail_unless (mtcp_send_queue_take (q, s) == NULL);
  /* a start, not a skip */
  mtcp_send_queue_session_stats (q, s, &st);
  fail_unless_equals_uint64 (st.skips, 0);

  gst_caps_unref (caps);
  mtcp_send_queue_free (q);
}

GST_END_TEST;

GST_START_TEST (test_joiner_gets_streamheader_from_caps)
{
  MtcpSendQueue *q = mtcp_send_queue_new (&no_limits);
  MtcpQueueSession *s;
  GstCaps *caps = gst_caps_new_empty_simple ("video/x-matroska");
  GValue array = G_VALUE_INIT, v = G_VALUE_INIT;
  GstBuffer *hdr = make_buffer (0xAA, 50, FALSE, TRUE);
  MtcpOutFrame *f;

  g_value_init (&array, GST_TYPE_ARRAY);
  g_value_init (&v, GST_TYPE_BUFFER);
  gst_value_set_buffer (&v, hdr);
  gst_value_array_append_value (&array, &v);
  g_value_unset (&v);
  gst_structure_take_value (gst_caps_get_structure (caps, 0), "streamheader",
      &array);

  mtcp_send_queue_push_caps (q, caps);
  mtcp_send_queue_push_buffer (q, hdr, GST_CLOCK_TIME_NONE,
      GST_CLOCK_TIME_NONE, GST_CLOCK_TIME_NONE);
  push (q, 1, FALSE, 0);
  push (q, 2, FALSE, 1000);

  s = mtcp_send_queue_add_session (q);
  expect_caps (mtcp_send_queue_take (q, s), 0);
  f = mtcp_send_queue_take (q, s);
  fail_unless_equals_int (f->type, MTCP_FRAME_BUFFER);
  fail_unless_equals_int (payload_tag (f), 0xAA);
  fail_unless_equals_uint64 (f->seq, 1);
  mtcp_out_frame_free (f);
  expect_buffer (mtcp_send_queue_take (q, s), 2, 2);
  fail_unless (mtcp_send_queue_take (q, s) == NULL);

  gst_buffer_unref (hdr);
  gst_caps_unref (caps);
  mtcp_send_queue_free (q);
}

GST_END_TEST;

GST_START_TEST (test_joiner_gets_inband_headers)
{
  MtcpSendQueue *q = mtcp_send_queue_new (&no_limits);
  MtcpQueueSession *s;
  GstCaps *caps = gst_caps_new_empty_simple ("video/mpegts");
  GstBuffer *hdr = make_buffer (0xBB, 20, FALSE, TRUE);

  mtcp_send_queue_push_caps (q, caps);
  mtcp_send_queue_push_buffer (q, hdr, GST_CLOCK_TIME_NONE,
      GST_CLOCK_TIME_NONE, GST_CLOCK_TIME_NONE);
  push (q, 1, FALSE, 0);
  push (q, 2, TRUE, 33);
  push (q, 3, FALSE, 66);

  s = mtcp_send_queue_add_session (q);
  expect_caps (mtcp_send_queue_take (q, s), 0);
  expect_buffer (mtcp_send_queue_take (q, s), 1, 0xBB);
  expect_buffer (mtcp_send_queue_take (q, s), 2, 3);

  gst_buffer_unref (hdr);
  gst_caps_unref (caps);
  mtcp_send_queue_free (q);
}

GST_END_TEST;

GST_START_TEST (test_stalled_session_skips_to_keyframe_and_memory_stays_bounded)
{
  MtcpSendQueueLimits limits = { 20 * 1000, GST_CLOCK_TIME_NONE };
  MtcpSendQueue *q = mtcp_send_queue_new (&limits);
  MtcpQueueSession *stalled = mtcp_send_queue_add_session (q);
  GstCaps *caps = gst_caps_new_empty_simple ("video/x-h264");
  MtcpQueueSessionStats st;
  guint i;
  guint64 max_bytes = 0;
  MtcpOutFrame *f;

  mtcp_send_queue_push_caps (q, caps);
  /* 1000 buffers of 1000 bytes, a keyframe every 10: the session never reads */
  for (i = 0; i < 1000; i++) {
    push (q, i % 256, i % 10 != 0, i * 33);
    mtcp_send_queue_enforce_limits (q);
    max_bytes = MAX (max_bytes, mtcp_send_queue_get_bytes (q));
  }
  /* bound plus one GOP */
  fail_unless (max_bytes <= 20 * 1000 + 10 * 1000,
      "queue held %" G_GUINT64_FORMAT " bytes", max_bytes);
  mtcp_send_queue_session_stats (q, stalled, &st);
  fail_unless (st.skips > 0);
  fail_unless (st.buffers_dropped > 900);
  fail_unless (st.backlog_bytes <= 20 * 1000);

  /* what it gets now: caps, a SKIP for what it lost, then a keyframe */
  expect_caps (mtcp_send_queue_take (q, stalled), 0);
  f = mtcp_send_queue_take (q, stalled);
  fail_unless_equals_int (f->type, MTCP_FRAME_SKIP);
  mtcp_out_frame_free (f);
  /* all skips are announced before the first buffer, which is a keyframe */
  while ((f = mtcp_send_queue_take (q, stalled)) &&
      f->type == MTCP_FRAME_SKIP)
    mtcp_out_frame_free (f);
  fail_unless (f != NULL);
  fail_unless_equals_int (f->type, MTCP_FRAME_BUFFER);
  fail_if (GST_BUFFER_FLAG_IS_SET (f->payload, GST_BUFFER_FLAG_DELTA_UNIT));
  mtcp_out_frame_free (f);

  gst_caps_unref (caps);
  mtcp_send_queue_free (q);
}

GST_END_TEST;

GST_START_TEST (test_caps_change_inside_skipped_range_still_arrives)
{
  MtcpSendQueueLimits limits = { 3 * 1000, GST_CLOCK_TIME_NONE };
  MtcpSendQueue *q = mtcp_send_queue_new (&limits);
  MtcpQueueSession *s = mtcp_send_queue_add_session (q);
  GstCaps *c1 = gst_caps_new_simple ("video/x-h264", "width", G_TYPE_INT, 1,
      NULL);
  GstCaps *c2 = gst_caps_new_simple ("video/x-h264", "width", G_TYPE_INT, 2,
      NULL);

  mtcp_send_queue_push_caps (q, c1);    /* seq 0 */
  push (q, 1, FALSE, 0);        /* 1 */
  push (q, 2, TRUE, 33);        /* 2 */
  mtcp_send_queue_push_caps (q, c2);    /* 3 */
  push (q, 3, TRUE, 66);        /* 4 */
  push (q, 4, FALSE, 99);       /* 5: keyframe */
  push (q, 5, TRUE, 133);       /* 6 */
  push (q, 6, TRUE, 166);       /* 7 */
  fail_unless_equals_int (mtcp_send_queue_enforce_limits (q), 1);

  expect_caps (mtcp_send_queue_take (q, s), 0);
  expect_skip (mtcp_send_queue_take (q, s), 1, 3);
  expect_caps (mtcp_send_queue_take (q, s), 3);
  expect_skip (mtcp_send_queue_take (q, s), 4, 5);
  expect_buffer (mtcp_send_queue_take (q, s), 5, 4);
  expect_buffer (mtcp_send_queue_take (q, s), 6, 5);

  gst_caps_unref (c1);
  gst_caps_unref (c2);
  mtcp_send_queue_free (q);
}

GST_END_TEST;

static gint64 fake_now_us;

static gint64
fake_clock (void)
{
  return fake_now_us;
}

/* A live source: buffer @tag pushed when the clock shows its time. */
static void
push_live (MtcpSendQueue * q, guint8 tag, gboolean delta, guint ms)
{
  fake_now_us = (gint64) ms * 1000;
  push (q, tag, delta, ms);
}

/* A receiver with 1 s of latency: once the next buffer its session would
 * hand out was due more than 1 s ago, the session skips to the latest keyframe, although the
 * sink allows 5 s; the other session keeps everything. */
GST_START_TEST (test_session_lag_bound_of_its_own)
{
  MtcpSendQueueLimits limits = { 0, 5 * GST_SECOND };
  MtcpSendQueue *q = mtcp_send_queue_new (&limits);
  MtcpQueueSession *tight = mtcp_send_queue_add_session (q);
  MtcpQueueSession *loose = mtcp_send_queue_add_session (q);
  guint i, skips = 0;

  mtcp_send_queue_set_clock (q, fake_clock);
  mtcp_send_queue_session_set_max_lag (q, tight, GST_SECOND);
  mtcp_send_queue_session_set_max_lag (q, loose, 5 * GST_SECOND);
  push_live (q, 0, FALSE, 0);
  expect_buffer (mtcp_send_queue_take (q, tight), 0, 0);
  expect_buffer (mtcp_send_queue_take (q, loose), 0, 0);
  for (i = 1; i < 41; i++) {
    push_live (q, i, i != 30, i * 33);  /* keyframe at 990 ms */
    skips += mtcp_send_queue_enforce_limits (q);
    /* seq 1 (33 ms) is due at 33 ms + 1 s: passed at 1056 ms */
    fail_unless_equals_int (skips, i < 32 ? 0 : 1);
  }
  /* holding back a non-live upstream goes by the sink's limit alone */
  fail_if (mtcp_send_queue_over_limits (q));

  expect_skip (mtcp_send_queue_take (q, tight), 1, 30);
  expect_buffer (mtcp_send_queue_take (q, tight), 30, 30);
  expect_buffer (mtcp_send_queue_take (q, loose), 1, 1);
  mtcp_send_queue_free (q);
}

GST_END_TEST;

/* A live source that hands over a burst (13 s of stream at one instant) is
 * not behind: each buffer is due its time after the first. */
GST_START_TEST (test_session_lag_burst_is_not_late)
{
  MtcpSendQueueLimits limits = { 0, GST_CLOCK_TIME_NONE };
  MtcpSendQueue *q = mtcp_send_queue_new (&limits);
  MtcpQueueSession *s = mtcp_send_queue_add_session (q);
  guint i;

  mtcp_send_queue_set_clock (q, fake_clock);
  fake_now_us = 5000000;
  mtcp_send_queue_session_set_max_lag (q, s, GST_SECOND);
  push (q, 0, FALSE, 0);
  expect_buffer (mtcp_send_queue_take (q, s), 0, 0);
  for (i = 1; i < 400; i++) {
    push (q, i % 256, TRUE, i * 33);
    fail_unless_equals_int (mtcp_send_queue_enforce_limits (q), 0);
  }
  /* 1.5 s later only seq 1 went out: the next buffer (66 ms) was due
   * more than 1 s ago */
  fake_now_us += 1500000;
  expect_buffer (mtcp_send_queue_take (q, s), 1, 1);
  fail_unless_equals_int (mtcp_send_queue_enforce_limits (q), 1);
  mtcp_send_queue_free (q);
}

GST_END_TEST;

/* What sockets hold is theirs: a frame stuck on one connection (the
 * receiver acknowledges nothing past it) does not make the session skip
 * while the queue keeps up. */
GST_START_TEST (test_session_lag_ignores_what_is_in_flight)
{
  MtcpSendQueueLimits limits = { 0, 5 * GST_SECOND };
  MtcpSendQueue *q = mtcp_send_queue_new (&limits);
  MtcpQueueSession *s = mtcp_send_queue_add_session (q);
  guint i;

  mtcp_send_queue_set_clock (q, fake_clock);
  mtcp_send_queue_session_set_max_lag (q, s, GST_SECOND);
  for (i = 0; i < 90; i++) {
    push_live (q, i, i % 30 != 0, i * 33);
    fail_unless_equals_int (mtcp_send_queue_enforce_limits (q), 0);
    expect_buffer (mtcp_send_queue_take (q, s), i, i);
  }
  mtcp_send_queue_free (q);
}

GST_END_TEST;

/* A path whose sockets hold 600 ms of stream: a buffer handed out now
 * arrives 600 ms later than the first did, so the session skips to the
 * keyframe once the next buffer is 400 ms late (of a 1 s bound), not 1 s;
 * the lateness it reports is the next buffer's. */
GST_START_TEST (test_session_lag_counts_transit)
{
  MtcpSendQueueLimits limits = { 0, 5 * GST_SECOND };
  MtcpSendQueue *q = mtcp_send_queue_new (&limits);
  MtcpQueueSession *s = mtcp_send_queue_add_session (q);
  guint i, skips = 0;

  mtcp_send_queue_set_clock (q, fake_clock);
  mtcp_send_queue_session_set_max_lag (q, s, GST_SECOND);
  push_live (q, 0, FALSE, 0);
  expect_buffer (mtcp_send_queue_take (q, s), 0, 0);
  mtcp_send_queue_session_set_transit (q, s, 600 * GST_MSECOND);
  for (i = 1; i < 16; i++) {
    push_live (q, i, i != 10, i * 33);  /* keyframe at 330 ms */
    if (i == 12)                /* seq 1 was due at 33 ms */
      fail_unless_equals_uint64 (mtcp_send_queue_session_late_by (q, s),
          (12 - 1) * 33 * GST_MSECOND);
    skips += mtcp_send_queue_enforce_limits (q);
    /* seq 1 is 400 ms late at 433 ms: at 13 * 33 = 429 ms not yet */
    fail_unless_equals_int (skips, i < 14 ? 0 : 1);
  }
  expect_skip (mtcp_send_queue_take (q, s), 1, 10);
  expect_buffer (mtcp_send_queue_take (q, s), 10, 10);
  /* a transit past the bound itself skips whatever is next */
  mtcp_send_queue_session_set_transit (q, s, 3 * GST_SECOND);
  fail_unless_equals_int (mtcp_send_queue_enforce_limits (q), 1);
  mtcp_send_queue_free (q);
}

GST_END_TEST;

/* An outage at a receiver with 2 s of latency: nothing is taken after the
 * first buffer. Once seq 1 is late (2033 ms) a session told to keep what
 * is in time (the sink does during and just after an outage) skips to
 * the first keyframe still in time (990 ms, due at 2990 ms), and once
 * that one is late, to the next (1980 ms); one that is not told skips to
 * the latest keyframe (1980 ms at once). Behind the sink's own bound it
 * is the latest keyframe either way. */
GST_START_TEST (test_session_lag_keeps_the_first_timely_keyframe)
{
  MtcpSendQueueLimits limits = { 0, 5 * GST_SECOND };
  MtcpSendQueue *q = mtcp_send_queue_new (&limits);
  MtcpQueueSession *s = mtcp_send_queue_add_session (q);
  MtcpQueueSession *plain = mtcp_send_queue_add_session (q);
  guint i, skips = 0;

  mtcp_send_queue_set_clock (q, fake_clock);
  mtcp_send_queue_session_set_max_lag (q, s, 2 * GST_SECOND);
  mtcp_send_queue_session_set_max_lag (q, plain, 2 * GST_SECOND);
  mtcp_send_queue_session_keep_timely (q, s, TRUE);
  push_live (q, 0, FALSE, 0);
  expect_buffer (mtcp_send_queue_take (q, s), 0, 0);
  expect_buffer (mtcp_send_queue_take (q, plain), 0, 0);
  for (i = 1; i <= 62; i++) {
    push_live (q, i, i % 30 != 0, i * 33);      /* keyframes every 990 ms */
    skips += mtcp_send_queue_enforce_limits (q);
    fail_unless_equals_int (skips, i < 62 ? 0 : 2);
  }
  expect_skip (mtcp_send_queue_take (q, s), 1, 30);
  expect_skip (mtcp_send_queue_take (q, plain), 1, 60);
  expect_buffer (mtcp_send_queue_take (q, plain), 60, 60);
  mtcp_send_queue_remove_session (q, plain);
  /* the outage goes on: nothing more is taken */
  for (i = 63; i <= 92; i++) {
    push_live (q, i, i % 30 != 0, i * 33);
    skips += mtcp_send_queue_enforce_limits (q);
    /* seq 30 (990 ms) is due at 2990 ms: past it at 91 * 33 = 3003 ms */
    fail_unless_equals_int (skips, i < 91 ? 2 : 3);
  }
  expect_skip (mtcp_send_queue_take (q, s), 30, 60);
  expect_buffer (mtcp_send_queue_take (q, s), 60, 60);
  /* the sink's own bound (5 s): the latest keyframe */
  for (i = 93; i <= 250; i++)
    push_live (q, i % 256, i % 30 != 0, i * 33);
  fake_now_us = 8250 * 1000;
  mtcp_send_queue_session_set_max_lag (q, s, 10 * GST_SECOND);
  fail_unless_equals_int (mtcp_send_queue_enforce_limits (q), 1);
  expect_skip (mtcp_send_queue_take (q, s), 61, 240);
  expect_buffer (mtcp_send_queue_take (q, s), 240, 240);
  mtcp_send_queue_free (q);
}

GST_END_TEST;

GST_START_TEST (test_static_lanes_take_seq_mod_n)
{
  MtcpSendQueue *q = mtcp_send_queue_new (&no_limits);
  MtcpQueueSession *s = mtcp_send_queue_add_session (q);
  guint i;

  for (i = 0; i < 9; i++)
    push (q, 10 + i, i != 0, i * 33);

  expect_buffer (mtcp_send_queue_take_lane (q, s, 1, 3), 1, 11);
  expect_buffer (mtcp_send_queue_take_lane (q, s, 1, 3), 4, 14);
  expect_buffer (mtcp_send_queue_take_lane (q, s, 2, 3), 2, 12);
  expect_buffer (mtcp_send_queue_take_lane (q, s, 0, 3), 0, 10);
  expect_buffer (mtcp_send_queue_take_lane (q, s, 1, 3), 7, 17);
  /* lane 1 has nothing more until seq 10 arrives */
  fail_unless (mtcp_send_queue_take_lane (q, s, 1, 3) == NULL);
  expect_buffer (mtcp_send_queue_take_lane (q, s, 0, 3), 3, 13);
  expect_buffer (mtcp_send_queue_take_lane (q, s, 0, 3), 6, 16);
  expect_buffer (mtcp_send_queue_take_lane (q, s, 2, 3), 5, 15);
  expect_buffer (mtcp_send_queue_take_lane (q, s, 2, 3), 8, 18);
  fail_unless (mtcp_send_queue_take_lane (q, s, 0, 3) == NULL);
  fail_unless (mtcp_send_queue_drained (q));
  mtcp_send_queue_free (q);
}

GST_END_TEST;

GST_START_TEST (test_two_sessions_have_own_cursors)
{
  MtcpSendQueue *q = mtcp_send_queue_new (&no_limits);
  MtcpQueueSession *a = mtcp_send_queue_add_session (q);
  MtcpQueueSession *b = mtcp_send_queue_add_session (q);

  push (q, 1, FALSE, 0);
  push (q, 2, TRUE, 33);
  expect_buffer (mtcp_send_queue_take (q, a), 0, 1);
  expect_buffer (mtcp_send_queue_take (q, a), 1, 2);
  fail_unless (!mtcp_send_queue_drained (q));
  expect_buffer (mtcp_send_queue_take (q, b), 0, 1);
  expect_buffer (mtcp_send_queue_take (q, b), 1, 2);
  fail_unless (mtcp_send_queue_drained (q));
  mtcp_send_queue_remove_session (q, a);
  push (q, 3, TRUE, 66);
  expect_buffer (mtcp_send_queue_take (q, b), 2, 3);
  mtcp_send_queue_free (q);
}

GST_END_TEST;

GST_START_TEST (test_over_limits_for_non_live)
{
  MtcpSendQueueLimits limits = { 5 * 1000, GST_CLOCK_TIME_NONE };
  MtcpSendQueue *q = mtcp_send_queue_new (&limits);
  MtcpQueueSession *s = mtcp_send_queue_add_session (q);
  guint i;

  for (i = 0; i < 5; i++)
    push (q, i, i != 0, i);
  fail_if (mtcp_send_queue_over_limits (q));
  push (q, 5, TRUE, 5);
  fail_unless (mtcp_send_queue_over_limits (q));
  mtcp_out_frame_free (mtcp_send_queue_take (q, s));
  fail_if (mtcp_send_queue_over_limits (q));
  mtcp_send_queue_free (q);
}

GST_END_TEST;

static Suite *
sendqueue_suite (void)
{
  Suite *s = suite_create ("sendqueue");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_early_session_gets_everything_in_order);
  tcase_add_test (tc, test_joiner_waits_when_the_backlog_is_too_much);
  tcase_add_test (tc, test_session_lag_bound_of_its_own);
  tcase_add_test (tc, test_session_lag_burst_is_not_late);
  tcase_add_test (tc, test_session_lag_ignores_what_is_in_flight);
  tcase_add_test (tc, test_session_lag_counts_transit);
  tcase_add_test (tc, test_session_lag_keeps_the_first_timely_keyframe);
  tcase_add_test (tc, test_deltas_before_first_keyframe_are_skipped);
  tcase_add_test (tc, test_late_joiner_starts_at_latest_keyframe_after_caps);
  tcase_add_test (tc, test_joiner_gets_streamheader_from_caps);
  tcase_add_test (tc, test_joiner_gets_inband_headers);
  tcase_add_test (tc,
      test_stalled_session_skips_to_keyframe_and_memory_stays_bounded);
  tcase_add_test (tc, test_caps_change_inside_skipped_range_still_arrives);
  tcase_add_test (tc, test_static_lanes_take_seq_mod_n);
  tcase_add_test (tc, test_two_sessions_have_own_cursors);
  tcase_add_test (tc, test_over_limits_for_non_live);
  return s;
}

GST_CHECK_MAIN (sendqueue);

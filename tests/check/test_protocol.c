/* multitcp
 * Copyright (C) 2026 the multitcp authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
/* Unit tests of the wire protocol codec. */
#include <gst/check/gstcheck.h>
#include <string.h>

#include "mtcpprotocol.h"

/* Feeds @data in chunks from @sizes (cycled) and collects whole frames. */
static guint
feed_in_chunks (MtcpFrameReader * r, const guint8 * data, gsize size,
    GRand * rand, MtcpFrameHeader * last_hdr)
{
  gsize off = 0;
  guint frames = 0;

  while (off < size) {
    gsize space, n;
    guint8 *dst = mtcp_frame_reader_space (r, &space);
    const guint8 *body;
    gchar *err = NULL;

    n = rand ? (gsize) g_rand_int_range (rand, 1, 300) : 1;
    n = MIN (MIN (n, space), size - off);
    memcpy (dst, data + off, n);
    mtcp_frame_reader_commit (r, n);
    off += n;
    while (mtcp_frame_reader_next (r, last_hdr, &body, &err) ==
        MTCP_PARSE_OK)
      frames++;
    fail_unless (err == NULL);
  }
  return frames;
}

GST_START_TEST (test_hello_layout)
{
  MtcpHello hello = { 0, }, back;
  guint8 out[MTCP_HELLO_FRAME_SIZE];
  static const guint8 expected[MTCP_HELLO_FRAME_SIZE] = {
    0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x1c,
    'M', 'T', 'C', 'P', 0x00, 0x01, 0x01, 0x00,
    0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15,
    0x00, 0x00, 0x03, 0xe8,
  };
  MtcpFrameHeader hdr;
  gchar *err = NULL;
  guint i;

  hello.magic = MTCP_MAGIC;
  hello.version = MTCP_VERSION;
  hello.flags = MTCP_HELLO_FLAG_JOIN;
  hello.latency_ms = 1000;
  for (i = 0; i < MTCP_SESSION_ID_SIZE; i++)
    hello.session_id[i] = i;
  fail_unless_equals_int (mtcp_write_hello (out, sizeof (out), &hello),
      MTCP_HELLO_FRAME_SIZE);
  fail_unless (memcmp (out, expected, sizeof (out)) == 0);
  fail_unless_equals_int (mtcp_write_hello (out, sizeof (out) - 1, &hello), 0);

  fail_unless_equals_int (mtcp_parse_header (out, sizeof (out),
          MTCP_MAX_FRAME_DEFAULT, &hdr, &err), MTCP_PARSE_OK);
  fail_unless_equals_int (hdr.type, MTCP_FRAME_HELLO);
  fail_unless (mtcp_parse_hello (out + 8, hdr.length, &back, &err));
  fail_unless_equals_int (back.flags, MTCP_HELLO_FLAG_JOIN);
  fail_unless (memcmp (back.session_id, hello.session_id, 16) == 0);
  fail_unless_equals_int (back.latency_ms, 1000);

  /* the first receivers' HELLO had no latency: still good, latency unsaid */
  back.latency_ms = 7;
  fail_unless (mtcp_parse_hello (out + 8, 24, &back, &err));
  fail_unless_equals_int (back.latency_ms, 0);
  fail_unless (memcmp (back.session_id, hello.session_id, 16) == 0);
  fail_if (mtcp_parse_hello (out + 8, 23, &back, &err));
  g_clear_pointer (&err, g_free);
}

GST_END_TEST;

/* The stream id a caller names rides at the end of HELLO and WELCOME:
 * none leaves the frames as they were; one round-trips; too long, past
 * the frame or not text is refused; a body without it reads as none. */
GST_START_TEST (test_stream_id_tail)
{
  MtcpHello hello = { 0, }, back;
  MtcpWelcome w = { {0}, }, wback;
  guint8 out[MTCP_WELCOME_FRAME_MAX + 8];
  gchar *err = NULL;
  gsize n;

  hello.magic = MTCP_MAGIC;
  hello.version = MTCP_VERSION;
  fail_unless_equals_int (mtcp_write_hello (out, sizeof (out), &hello),
      MTCP_HELLO_FRAME_SIZE);
  g_strlcpy (hello.stream_id, "cam/1 \xc3\xa9", sizeof (hello.stream_id));
  n = mtcp_write_hello (out, sizeof (out), &hello);
  fail_unless_equals_int (n, MTCP_HELLO_FRAME_SIZE + 2 + 8);
  fail_unless (mtcp_parse_hello (out + 8, n - 8, &back, &err));
  fail_unless_equals_string (back.stream_id, "cam/1 \xc3\xa9");
  /* an old receiver's 28 bytes: no stream id */
  fail_unless (mtcp_parse_hello (out + 8, 28, &back, &err));
  fail_unless_equals_string (back.stream_id, "");
  /* a length past the frame */
  fail_if (mtcp_parse_hello (out + 8, n - 9, &back, &err));
  g_free (err);
  err = NULL;
  /* not text */
  out[8 + 30] = 0xff;
  fail_if (mtcp_parse_hello (out + 8, n - 8, &back, &err));
  g_free (err);
  err = NULL;
  out[8 + 30] = 0;
  fail_if (mtcp_parse_hello (out + 8, n - 8, &back, &err));
  g_free (err);
  err = NULL;
  /* longer than the most */
  out[8 + 28] = 0;
  out[8 + 29] = MTCP_STREAM_ID_MAX + 1;
  fail_if (mtcp_parse_hello (out + 8, n - 8, &back, &err));
  g_free (err);
  err = NULL;
  /* the longest fits a stranger's handshake limit */
  fail_unless (MTCP_HELLO_FRAME_MAX - MTCP_HEADER_SIZE <=
      MTCP_MAX_HANDSHAKE_BODY);

  memset (w.stream_id, 'x', MTCP_STREAM_ID_MAX);
  w.stream_id[MTCP_STREAM_ID_MAX] = 0;
  /* the most: the longest id, a calling sink's path and its limit */
  w.path = 1;
  w.n_paths = 2;
  w.max_connections = 16;
  n = mtcp_write_welcome (out, sizeof (out), &w);
  fail_unless_equals_int (n, MTCP_WELCOME_FRAME_MAX);
  fail_unless (mtcp_parse_welcome (out + 8, n - 8, &wback, &err));
  fail_unless_equals_int (strlen (wback.stream_id), MTCP_STREAM_ID_MAX);
  fail_unless_equals_int (wback.max_connections, 16);
  fail_unless (MTCP_WELCOME_FRAME_MAX - MTCP_HEADER_SIZE <=
      MTCP_MAX_HANDSHAKE_BODY);
  fail_unless (mtcp_parse_welcome (out + 8, 32, &wback, &err));
  fail_unless_equals_string (wback.stream_id, "");
  fail_unless_equals_int (wback.max_connections, 0);
}

GST_END_TEST;

GST_START_TEST (test_hello_wrong_magic_and_version)
{
  MtcpHello hello = { 0, }, back;
  guint8 out[MTCP_HELLO_FRAME_SIZE];
  gchar *err = NULL;

  hello.magic = 0x47455420;     /* "GET " */
  hello.version = MTCP_VERSION;
  mtcp_write_hello (out, sizeof (out), &hello);
  fail_if (mtcp_parse_hello (out + 8, 24, &back, &err));
  fail_unless (strstr (err, "magic") != NULL);
  g_free (err);
  err = NULL;

  hello.magic = MTCP_MAGIC;
  hello.version = 7;
  mtcp_write_hello (out, sizeof (out), &hello);
  fail_if (mtcp_parse_hello (out + 8, 24, &back, &err));
  fail_unless (strstr (err, "version") != NULL);
  g_free (err);
  err = NULL;

  fail_if (mtcp_parse_hello (out + 8, 23, &back, &err));
  g_free (err);
}

GST_END_TEST;

GST_START_TEST (test_buffer_layout_and_roundtrip)
{
  MtcpBufferInfo info = { 0, }, back;
  guint8 frame[MTCP_BUFFER_HEAD_SIZE + 3];
  static const guint8 expected_head[MTCP_BUFFER_HEAD_SIZE] = {
    0x11, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x2b,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x02,
    0x00, 0x00, 0x00, 0x00, 0x3b, 0x9a, 0xca, 0x00,
    0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
    0x00, 0x00, 0x00, 0x00, 0x01, 0xfc, 0xa0, 0x55,
    0x00, 0x00, 0x00, 0x03, 0x00, 0x00, 0x00, 0x03,
  };
  const guint8 *payload;
  gchar *err = NULL;

  info.seq = 0x102;
  info.pts = 1000000000;
  info.dts = MTCP_TIME_NONE;
  info.duration = 33333333;
  info.flags = MTCP_BUF_DELTA | MTCP_BUF_HEADER;
  info.payload_size = 3;
  fail_unless_equals_int (mtcp_write_buffer_head (frame, sizeof (frame),
          &info), MTCP_BUFFER_HEAD_SIZE);
  fail_unless (memcmp (frame, expected_head, MTCP_BUFFER_HEAD_SIZE) == 0);
  memcpy (frame + MTCP_BUFFER_HEAD_SIZE, "abc", 3);

  fail_unless (mtcp_parse_buffer (frame + 8, 43, &back, &payload, &err));
  fail_unless_equals_uint64 (back.seq, 0x102);
  fail_unless_equals_uint64 (back.pts, 1000000000);
  fail_unless_equals_uint64 (back.dts, MTCP_TIME_NONE);
  fail_unless_equals_uint64 (back.duration, 33333333);
  fail_unless_equals_int (back.flags, MTCP_BUF_DELTA | MTCP_BUF_HEADER);
  fail_unless (memcmp (payload, "abc", 3) == 0);

  /* payload_size disagrees with the frame length */
  fail_if (mtcp_parse_buffer (frame + 8, 42, &back, &payload, &err));
  g_free (err);
  err = NULL;
  fail_if (mtcp_parse_buffer (frame + 8, 39, &back, &payload, &err));
  g_free (err);
}

GST_END_TEST;

/* A run of buffers as one connection carries them: TS packets of one
 * frame (same times), a new frame, a frame without times and one that
 * follows it, a buffer handed over from a dead connection (seq going back),
 * a key unit; with long headers, and with the receiver's COMPACT. */
GST_START_TEST (test_buffer_delta_roundtrip)
{
  static const MtcpBufferInfo run[] = {
    {0, 0, 0, 33333333, MTCP_BUF_HEADER, 1316},
    {1, 0, 0, 33333333, MTCP_BUF_DELTA, 1316},
    {2, 0, 0, 33333333, MTCP_BUF_DELTA, 1316},
    {7, 33333333, 33333333, 33333333, MTCP_BUF_DELTA, 1316},
    {8, MTCP_TIME_NONE, MTCP_TIME_NONE, MTCP_TIME_NONE, 0, 0},
    {9, MTCP_TIME_NONE, MTCP_TIME_NONE, MTCP_TIME_NONE, 0, 70000},
    {5, 1000000000000ull, 999966666667ull, 33333333, 0, 188},
    {9, 66666666, 66666666, 33333333, MTCP_BUF_DISCONT | MTCP_BUF_RESYNC, 1},
    {G_MAXUINT64 - 1, G_MAXUINT64 - 1, 0, 0, G_MAXUINT32, 2},
  };
  guint8 *frame = g_malloc (MTCP_BUFFER_DELTA_HEAD_MAX + 70000);
  guint i, compact;

  for (compact = 0; compact < 2; compact++) {
    MtcpBufferDeltaState out = { 0, }, in = { 0, };
    for (i = 0; i < G_N_ELEMENTS (run); i++) {
      MtcpBufferInfo back;
      MtcpFrameHeader hdr;
      const guint8 *payload;
      gchar *err = NULL;
      gsize head = mtcp_write_buffer_delta_head (frame,
          MTCP_BUFFER_DELTA_HEAD_MAX, &run[i], &out, compact);

      fail_unless (head > MTCP_SHORT_HEADER_SIZE &&
          head <= MTCP_BUFFER_DELTA_HEAD_MAX);
      memset (frame + head, 0xa5, run[i].payload_size);
      fail_unless_equals_int (mtcp_parse_header (frame, head, G_MAXUINT32, &hdr,
              NULL), MTCP_PARSE_OK);
      fail_unless_equals_int (hdr.type, MTCP_FRAME_BUFFER_DELTA);
      /* a body over 64 kB keeps the long header */
      fail_unless_equals_int (hdr.head_size, compact &&
          run[i].payload_size < 65000 ? MTCP_SHORT_HEADER_SIZE :
          MTCP_HEADER_SIZE);
      fail_unless_equals_int (hdr.length, head - hdr.head_size +
          run[i].payload_size);
      fail_unless (mtcp_parse_buffer_delta (frame + hdr.head_size,
              hdr.length, &in, &back, &payload, &err), "%u: %s", i, err);
      fail_unless_equals_uint64 (back.seq, run[i].seq);
      fail_unless_equals_uint64 (back.pts, run[i].pts);
      fail_unless_equals_uint64 (back.dts, run[i].dts);
      fail_unless_equals_uint64 (back.duration, run[i].duration);
      fail_unless_equals_uint64 (back.flags, run[i].flags);
      fail_unless_equals_uint64 (back.payload_size, run[i].payload_size);
      fail_unless (payload == frame + head);
      /* the point of it: a TS packet of the frame before costs a few bytes,
       * 5 with COMPACT once the flags repeat too; so does one without times
       * after one without */
      if (i == 1)
        fail_unless_equals_int (head, hdr.head_size + 6);
      if (i == 2)
        fail_unless_equals_int (head, compact ? MTCP_SHORT_HEADER_SIZE + 2 :
            MTCP_HEADER_SIZE + 6);
      if (i == 5 && compact)
        fail_unless_equals_int (head, MTCP_HEADER_SIZE + 2);
    }
    /* both ends remember the same */
    fail_unless_equals_uint64 (in.next_seq, out.next_seq);
    fail_unless_equals_uint64 (in.pts, out.pts);
    fail_unless_equals_uint64 (in.dts, out.dts);
    fail_unless_equals_uint64 (in.duration, out.duration);
    fail_unless_equals_int (in.mask, out.mask);
    fail_unless_equals_int (in.flags, out.flags);
  }
  g_free (frame);
}

GST_END_TEST;

GST_START_TEST (test_buffer_delta_malformed)
{
  MtcpBufferDeltaState state = { 10, 5, 5, 5, 0x01, MTCP_BUF_DELTA }, before;
  MtcpBufferInfo info;
  const guint8 *payload;
  gchar *err = NULL;
  /* mask, seq 0 from 10 (zigzag of -10 = 19), flags 0 */
  guint8 good[] = { 0x00, 19, 0x00 };
  guint8 unknown_mask[] = { 0x10, 0x00, 0x00 };
  /* SAME takes only the seq: with another bit it is not SAME */
  guint8 same_and_pts[] = { 0x09, 0x00, 0x00, 0x00 };
  guint8 same_cut[] = { 0x08, 0x80 };
  /* seq 12 (zigzag of +2 = 4) */
  guint8 same[] = { 0x08, 4, 'x' };
  guint8 cut[] = { 0x01, 0x00, 0x80 };
  guint8 overlong[] = { 0x00, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
    0xff, 0x7f, 0x00
  };
  /* pts 5 + zigzag(2^64 - 6) is all ones: "no time" in disguise */
  guint8 none_time[16] = { 0x01, 0x00 };
  gsize n = 2;
  guint64 z = 11;               /* zigzag of -6: 5 - 6 is all ones */

  while (z >= 0x80) {
    none_time[n++] = (guint8) (z | 0x80);
    z >>= 7;
  }
  none_time[n++] = (guint8) z;
  none_time[n++] = 0;

  before = state;
  fail_unless (mtcp_parse_buffer_delta (good, sizeof (good), &state, &info,
          &payload, &err));
  fail_unless_equals_uint64 (info.seq, 0);
  fail_unless_equals_uint64 (info.pts, MTCP_TIME_NONE);
  fail_unless_equals_uint64 (info.payload_size, 0);
  fail_unless_equals_uint64 (state.next_seq, 1);
  fail_unless_equals_uint64 (state.pts, 5);     /* no pts: kept */

  /* SAME: a seq with the last one's times and flags */
  state = before;
  fail_unless (mtcp_parse_buffer_delta (same, sizeof (same), &state,
          &info, &payload, &err));
  fail_unless_equals_uint64 (info.seq, 12);
  fail_unless_equals_uint64 (info.pts, 5);
  fail_unless_equals_uint64 (info.dts, MTCP_TIME_NONE);
  fail_unless_equals_uint64 (info.duration, MTCP_TIME_NONE);
  fail_unless_equals_int (info.flags, MTCP_BUF_DELTA);
  fail_unless_equals_int (info.payload_size, 1);
  fail_unless (payload == same + 2);
  fail_unless_equals_uint64 (state.next_seq, 13);
  fail_unless_equals_uint64 (state.pts, 5);

  state = before;
#define REJECT_DELTA(bytes, len) G_STMT_START {                              \
    fail_if (mtcp_parse_buffer_delta (bytes, len, &state, &info, &payload,   \
            &err));                                                          \
    fail_unless (err != NULL);                                               \
    g_clear_pointer (&err, g_free);                                          \
    fail_unless (memcmp (&state, &before, sizeof (state)) == 0);             \
  } G_STMT_END
  REJECT_DELTA (good, 2);
  REJECT_DELTA (unknown_mask, sizeof (unknown_mask));
  REJECT_DELTA (same_and_pts, sizeof (same_and_pts));
  REJECT_DELTA (same_cut, sizeof (same_cut));
  REJECT_DELTA (same, 1);
  REJECT_DELTA (cut, sizeof (cut));
  REJECT_DELTA (overlong, sizeof (overlong));
  REJECT_DELTA (none_time, n);
#undef REJECT_DELTA
}

GST_END_TEST;

GST_START_TEST (test_control_frames_roundtrip)
{
  guint8 out[512];
  gchar *err = NULL, *caps = NULL;
  guint64 seq;
  MtcpSkip skip = { 5, 9 }, skip_back;
  MtcpReport rep = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11 }, rep_back;
  MtcpFeedback fb = { 11, 12, 13, 14, 15, 16, 0, 17, 18, FALSE }, fb_back;
  MtcpWelcome w = { {0}, 77, 1 << 20 }, w_back;
  MtcpRefuse refuse;

  fail_unless (mtcp_write_caps (out, sizeof (out), 9, "video/x-h264") > 0);
  fail_unless (mtcp_parse_caps (out + 8, 8 + 12, &seq, &caps, &err));
  fail_unless_equals_uint64 (seq, 9);
  fail_unless_equals_string (caps, "video/x-h264");
  g_free (caps);

  fail_unless (mtcp_write_eos (out, sizeof (out), 42) > 0);
  fail_unless (mtcp_parse_eos (out + 8, 8, &seq, &err));
  fail_unless_equals_uint64 (seq, 42);

  fail_unless (mtcp_write_skip (out, sizeof (out), &skip) > 0);
  fail_unless (mtcp_parse_skip (out + 8, 16, &skip_back, &err));
  fail_unless_equals_uint64 (skip_back.first_seq, 5);
  fail_unless_equals_uint64 (skip_back.end_seq, 9);
  skip.first_seq = 9;
  mtcp_write_skip (out, sizeof (out), &skip);
  fail_if (mtcp_parse_skip (out + 8, 16, &skip_back, &err));
  g_free (err);
  err = NULL;

  rep.flags = MTCP_REPORT_RATE_IGNORES_LOSS;
  fail_unless (mtcp_write_report (out, sizeof (out), &rep) > 0);
  fail_unless (mtcp_parse_report (out + 8, MTCP_REPORT_SIZE, &rep_back, &err));
  /* up to the flags (the struct's tail padding is not compared) */
  fail_unless (memcmp (&rep, &rep_back, G_STRUCT_OFFSET (MtcpReport,
              flags)) == 0);
  fail_unless_equals_int (rep_back.flags, MTCP_REPORT_RATE_IGNORES_LOSS);
  /* a later version's longer body is accepted */
  fail_unless (mtcp_parse_report (out + 8, MTCP_REPORT_SIZE + 8, &rep_back,
          &err));
  fail_unless_equals_int (rep_back.flags, MTCP_REPORT_RATE_IGNORES_LOSS);
  /* a sink from before the flags sends 64 bytes: read as no flags */
  fail_unless (mtcp_parse_report (out + 8, MTCP_REPORT_SIZE_MIN, &rep_back,
          &err));
  fail_unless_equals_uint64 (rep_back.unsent_bytes, 11);
  fail_unless_equals_int (rep_back.flags, 0);
  fail_if (mtcp_parse_report (out + 8, MTCP_REPORT_SIZE_MIN - 1, &rep_back,
          &err));
  g_free (err);
  err = NULL;

  fail_unless (mtcp_write_feedback (out, sizeof (out), &fb) > 0);
  fail_unless (mtcp_parse_feedback (out + 8, MTCP_FEEDBACK_SIZE, &fb_back,
          &err));
  fail_unless_equals_uint64 (fb_back.echo_delay_us, 15);
  fail_unless_equals_int (fb_back.window_bytes, 16);
  fail_unless (fb_back.playout_known);
  fail_unless_equals_uint64 (fb_back.playout_bytes, 17);
  fail_unless_equals_uint64 (fb_back.playout_time, 18);
  /* a receiver from before the playout buffer sends 48 bytes */
  fail_unless (mtcp_parse_feedback (out + 8, MTCP_FEEDBACK_SIZE_MIN, &fb_back,
          &err));
  fail_if (fb_back.playout_known);
  fail_unless_equals_uint64 (fb_back.playout_bytes, 0);
  fail_unless_equals_int (fb_back.window_bytes, 16);

  {
    MtcpWant want = { 12, 0, }, back;
    fail_unless_equals_int (mtcp_write_want (out, sizeof (out), &want),
        MTCP_WANT_FRAME_SIZE);
    fail_unless_equals_int (out[0], MTCP_FRAME_WANT);
    fail_unless (mtcp_parse_want (out + 8, MTCP_WANT_SIZE, &back, &err));
    fail_unless_equals_int (back.connections, 12);
    fail_unless_equals_int (back.n_paths, 0);
    fail_if (mtcp_parse_want (out + 8, MTCP_WANT_SIZE - 1, &back, &err));
    g_free (err);
    err = NULL;
    fail_unless_equals_int (mtcp_write_want (out, MTCP_WANT_FRAME_SIZE - 1,
            &want), 0);
    /* per path: a calling sink's uplinks */
    want.n_paths = 3;
    want.per_path[0] = 4;
    want.per_path[1] = 1;
    want.per_path[2] = 2;
    fail_unless_equals_int (mtcp_write_want (out, sizeof (out), &want),
        MTCP_WANT_FRAME_SIZE + 6);
    fail_unless (mtcp_parse_want (out + 8, MTCP_WANT_SIZE + 6, &back, &err));
    fail_unless_equals_int (back.n_paths, 3);
    fail_unless (back.per_path[0] == 4 && back.per_path[1] == 1 &&
        back.per_path[2] == 2);
    /* counts it says it has and does not */
    fail_if (mtcp_parse_want (out + 8, MTCP_WANT_SIZE + 5, &back, &err));
    g_free (err);
    err = NULL;
    out[8 + 2] = MTCP_MAX_PATHS + 1;
    fail_if (mtcp_parse_want (out + 8, sizeof (out) - 8, &back, &err));
    g_free (err);
    err = NULL;
    fail_unless_equals_int (mtcp_write_want (out, MTCP_WANT_FRAME_SIZE + 5,
            &want), 0);
  }
  {
    /* WELCOME names a calling sink's uplink, with and without a stream id;
     * a receiver that knows nothing of paths reads the rest as before */
    MtcpWelcome pw, pback;
    gsize n;
    memset (&pw, 0, sizeof (pw));
    pw.connection_id = 7;
    pw.path = 1;
    pw.n_paths = 2;
    n = mtcp_write_welcome (out, sizeof (out), &pw);
    fail_unless_equals_int (n, MTCP_WELCOME_FRAME_SIZE + 2 + 2);
    fail_unless (mtcp_parse_welcome (out + 8, n - 8, &pback, &err));
    fail_unless (pback.path == 1 && pback.n_paths == 2);
    fail_unless_equals_string (pback.stream_id, "");
    g_strlcpy (pw.stream_id, "cam/1", sizeof (pw.stream_id));
    n = mtcp_write_welcome (out, sizeof (out), &pw);
    fail_unless (mtcp_parse_welcome (out + 8, n - 8, &pback, &err));
    fail_unless (pback.path == 1 && pback.n_paths == 2);
    fail_unless_equals_string (pback.stream_id, "cam/1");
    /* without the path's bytes: no paths */
    fail_unless (mtcp_parse_welcome (out + 8, n - 10, &pback, &err));
    fail_unless_equals_int (pback.n_paths, 0);
    /* a path beyond the count */
    out[n - 2] = 5;
    fail_if (mtcp_parse_welcome (out + 8, n - 8, &pback, &err));
    g_free (err);
    err = NULL;
    /* the sink's limit after the path, 0, 0 when it names none; an older
     * receiver reads the path's two bytes as no paths and stops there */
    memset (&pw, 0, sizeof (pw));
    pw.max_connections = 300;
    n = mtcp_write_welcome (out, sizeof (out), &pw);
    fail_unless_equals_int (n, MTCP_WELCOME_FRAME_SIZE + 2 + 2 + 2);
    fail_unless (mtcp_parse_welcome (out + 8, n - 8, &pback, &err));
    fail_unless (pback.path == 0 && pback.n_paths == 0);
    fail_unless_equals_int (pback.max_connections, 300);
    fail_unless (mtcp_parse_welcome (out + 8, n - 10, &pback, &err));
    fail_unless_equals_int (pback.max_connections, 0);
    /* with a path too */
    pw.path = 1;
    pw.n_paths = 3;
    n = mtcp_write_welcome (out, sizeof (out), &pw);
    fail_unless (mtcp_parse_welcome (out + 8, n - 8, &pback, &err));
    fail_unless (pback.path == 1 && pback.n_paths == 3 &&
        pback.max_connections == 300);
  }

  memset (w.session_id, 0xab, 16);
  fail_unless_equals_int (mtcp_write_welcome (out, sizeof (out), &w),
      MTCP_WELCOME_FRAME_SIZE);
  fail_unless (mtcp_parse_welcome (out + 8, 32, &w_back, &err));
  fail_unless_equals_int (w_back.connection_id, 77);
  fail_unless (memcmp (w_back.session_id, w.session_id, 16) == 0);

  fail_unless (mtcp_write_refuse (out, sizeof (out), MTCP_REFUSE_BAD_VERSION,
          "wrong version") > 0);
  fail_unless (mtcp_parse_refuse (out + 8, 2 + 13, &refuse, &err));
  fail_unless_equals_int (refuse.code, MTCP_REFUSE_BAD_VERSION);
  fail_unless_equals_string (refuse.reason, "wrong version");
}

GST_END_TEST;

GST_START_TEST (test_header_limits)
{
  guint8 hdr_bytes[MTCP_HEADER_SIZE];
  MtcpFrameHeader hdr;
  gchar *err = NULL;

  mtcp_write_header (hdr_bytes, MTCP_FRAME_BUFFER, 0, 0xfffffff0u);
  fail_unless_equals_int (mtcp_parse_header (hdr_bytes, 8,
          MTCP_MAX_FRAME_DEFAULT, &hdr, &err), MTCP_PARSE_ERROR);
  fail_unless (strstr (err, "limit") != NULL);
  g_free (err);
  err = NULL;

  /* control frames have their own, smaller limit */
  mtcp_write_header (hdr_bytes, MTCP_FRAME_CAPS, 0,
      MTCP_MAX_CONTROL_BODY + 1);
  fail_unless_equals_int (mtcp_parse_header (hdr_bytes, 8,
          MTCP_MAX_FRAME_DEFAULT, &hdr, &err), MTCP_PARSE_ERROR);
  g_free (err);
  err = NULL;

  fail_unless_equals_int (mtcp_parse_header (hdr_bytes, 7,
          MTCP_MAX_FRAME_DEFAULT, &hdr, &err), MTCP_PARSE_NEED_MORE);

  /* the short header: top bit, type, u16 length; its limits are the same */
  hdr_bytes[0] = MTCP_SHORT_HEADER_BIT | MTCP_FRAME_BUFFER_DELTA;
  hdr_bytes[1] = 0x01;
  hdr_bytes[2] = 0x02;
  fail_unless_equals_int (mtcp_parse_header (hdr_bytes, 2,
          MTCP_MAX_FRAME_DEFAULT, &hdr, &err), MTCP_PARSE_NEED_MORE);
  fail_unless_equals_int (mtcp_parse_header (hdr_bytes, 3,
          MTCP_MAX_FRAME_DEFAULT, &hdr, &err), MTCP_PARSE_OK);
  fail_unless_equals_int (hdr.type, MTCP_FRAME_BUFFER_DELTA);
  fail_unless_equals_int (hdr.length, 0x102);
  fail_unless_equals_int (hdr.head_size, MTCP_SHORT_HEADER_SIZE);
  fail_unless_equals_int (mtcp_parse_header (hdr_bytes, 3, 0x101, &hdr,
          &err), MTCP_PARSE_ERROR);
  g_clear_pointer (&err, g_free);
}

GST_END_TEST;

GST_START_TEST (test_reader_reassembles_any_chunking)
{
  GByteArray *stream = g_byte_array_new ();
  guint8 frame[MTCP_BUFFER_HEAD_SIZE + 5000];
  MtcpBufferInfo info = { 0, };
  MtcpFrameHeader hdr;
  GRand *rand = g_rand_new_with_seed (7);
  guint i, pass;

  for (i = 0; i < 50; i++) {
    gsize n;
    info.seq = i;
    info.payload_size = (i * 97) % 5000;
    n = mtcp_write_buffer_head (frame, sizeof (frame), &info);
    memset (frame + n, i, info.payload_size);
    g_byte_array_append (stream, frame, n + info.payload_size);
    n = mtcp_write_eos (frame, sizeof (frame), i);
    g_byte_array_append (stream, frame, n);
  }
  /* BUFFER_DELTAs with short headers among the long ones */
  for (i = 0; i < 20; i++) {
    MtcpBufferDeltaState delta = { 0, };
    gsize n;
    info.seq = 0;
    info.payload_size = 1316;
    n = mtcp_write_buffer_delta_head (frame, sizeof (frame), &info, &delta,
        TRUE);
    memset (frame + n, i, info.payload_size);
    g_byte_array_append (stream, frame, n + info.payload_size);
  }
  /* an unknown type is returned whole, so the caller can skip it */
  mtcp_write_header (frame, 0x7f, 0, 3);
  memcpy (frame + 8, "xyz", 3);
  g_byte_array_append (stream, frame, 11);

  for (pass = 0; pass < 2; pass++) {
    MtcpFrameReader *r = mtcp_frame_reader_new (MTCP_MAX_FRAME_DEFAULT);
    fail_unless_equals_int (feed_in_chunks (r, stream->data, stream->len,
            pass ? rand : NULL, &hdr), 121);
    fail_unless_equals_int (hdr.type, 0x7f);
    fail_unless_equals_int (mtcp_frame_reader_pending (r), 0);
    mtcp_frame_reader_free (r);
  }
  g_rand_free (rand);
  g_byte_array_unref (stream);
}

GST_END_TEST;

GST_START_TEST (test_reader_huge_length_and_cut_frames)
{
  MtcpFrameReader *r = mtcp_frame_reader_new (1024);
  MtcpFrameHeader hdr;
  const guint8 *body;
  gchar *err = NULL;
  gsize space;
  guint8 *dst;

  /* half a frame stays NEED_MORE */
  dst = mtcp_frame_reader_space (r, &space);
  mtcp_write_eos (dst, space, 1);
  mtcp_frame_reader_commit (r, 10);
  fail_unless_equals_int (mtcp_frame_reader_next (r, &hdr, &body, &err),
      MTCP_PARSE_NEED_MORE);
  mtcp_frame_reader_free (r);

  /* a huge length is refused from its header alone, nothing allocated */
  r = mtcp_frame_reader_new (1024);
  dst = mtcp_frame_reader_space (r, &space);
  mtcp_write_header (dst, MTCP_FRAME_BUFFER, 0, 0xfffffff0u);
  mtcp_frame_reader_commit (r, 8);
  dst = mtcp_frame_reader_space (r, &space);
  fail_unless (space < 1024 * 1024);
  fail_unless_equals_int (mtcp_frame_reader_next (r, &hdr, &body, &err),
      MTCP_PARSE_ERROR);
  fail_unless (err != NULL);
  g_free (err);
  mtcp_frame_reader_free (r);
}

GST_END_TEST;

/* A header that claims a large (allowed) length costs memory only as the
 * bytes come: a peer that sends a header and stalls holds a few kB. */
GST_START_TEST (test_reader_memory_follows_received_bytes)
{
  MtcpFrameReader *r = mtcp_frame_reader_new (MTCP_MAX_FRAME_DEFAULT);
  MtcpFrameHeader hdr;
  const guint8 *body;
  gchar *err = NULL;
  guint8 *dst;
  gsize space, got = 0, frame = MTCP_HEADER_SIZE + 8 * 1024 * 1024;

  fail_unless_equals_int (mtcp_frame_reader_allocated (r), 0);
  dst = mtcp_frame_reader_space (r, &space);
  fail_unless (space >= MTCP_HEADER_SIZE);
  mtcp_write_header (dst, 0x7f, 0, frame - MTCP_HEADER_SIZE);
  memset (dst + MTCP_HEADER_SIZE, 0xab, 100);
  mtcp_frame_reader_commit (r, MTCP_HEADER_SIZE + 100);
  got = MTCP_HEADER_SIZE + 100;
  fail_unless_equals_int (mtcp_frame_reader_next (r, &hdr, &body, &err),
      MTCP_PARSE_NEED_MORE);
  dst = mtcp_frame_reader_space (r, &space);
  fail_unless (mtcp_frame_reader_allocated (r) <= 2 * 64 * 1024,
      "%" G_GSIZE_FORMAT " bytes for 108 received",
      mtcp_frame_reader_allocated (r));
  /* the rest, in whatever pieces the reader offers: never above twice
   * what it holds plus one read */
  while (got < frame) {
    gsize n;
    dst = mtcp_frame_reader_space (r, &space);
    fail_unless (mtcp_frame_reader_allocated (r) <= 2 * got + 64 * 1024);
    n = MIN (space, frame - got);
    memset (dst, 0xab, n);
    mtcp_frame_reader_commit (r, n);
    got += n;
  }
  fail_unless_equals_int (mtcp_frame_reader_next (r, &hdr, &body, &err),
      MTCP_PARSE_OK);
  fail_unless_equals_int (hdr.length, frame - MTCP_HEADER_SIZE);
  fail_unless_equals_int (body[hdr.length - 1], 0xab);
  mtcp_frame_reader_free (r);

  /* before a handshake the limit is tiny: so is the buffer */
  r = mtcp_frame_reader_new (MTCP_MAX_HANDSHAKE_BODY);
  mtcp_frame_reader_space (r, &space);
  fail_unless (mtcp_frame_reader_allocated (r) <=
      MTCP_HEADER_SIZE + MTCP_MAX_HANDSHAKE_BODY);
  mtcp_frame_reader_free (r);
}

GST_END_TEST;

GST_START_TEST (test_truncated_bodies_rejected)
{
  guint8 body[64] = { 0, };
  gchar *err = NULL, *caps;
  MtcpHello h;
  MtcpWelcome w;
  MtcpRefuse rf;
  MtcpBufferInfo b;
  const guint8 *p;
  guint64 seq;
  MtcpSkip s;
  MtcpReport rep;
  MtcpFeedback fb;

#define REJECT(call) G_STMT_START { fail_if (call); g_free (err); err = NULL; } G_STMT_END
  REJECT (mtcp_parse_hello (body, 23, &h, &err));
  REJECT (mtcp_parse_welcome (body, 31, &w, &err));
  REJECT (mtcp_parse_refuse (body, 1, &rf, &err));
  REJECT (mtcp_parse_buffer (body, 39, &b, &p, &err));
  REJECT (mtcp_parse_caps (body, 7, &seq, &caps, &err));
  REJECT (mtcp_parse_eos (body, 7, &seq, &err));
  REJECT (mtcp_parse_skip (body, 15, &s, &err));
  REJECT (mtcp_parse_report (body, MTCP_REPORT_SIZE_MIN - 1, &rep, &err));
  REJECT (mtcp_parse_feedback (body, MTCP_FEEDBACK_SIZE_MIN - 1, &fb, &err));
  /* caps text with a NUL inside */
  body[10] = 'a';
  body[11] = 0;
  body[12] = 'b';
  REJECT (mtcp_parse_caps (body, 13, &seq, &caps, &err));
  /* brackets that do not pair up (gst_caps_from_string leaks on them) */
  {
    const gchar *bad[] = { "video/x-raw, width=(int){ 1, 2 ]",
      "a/b, c=(int)[ 1, 2", "a/b, c=(int)1 }", "a/b, c=(string)\"x",
      /* lists and ranges (not fixed caps), even well formed: GStreamer
       * leaks on any element that fails inside them */
      "a/b, c=(int){ 1, 2 }", "a/b, c=(int){ 1, x }", "a/b, c=[ 1, 2 ]",
      "a/b, c=[ 1, \"abc\" ]", "a/b, c={ 1,, 2 }",
      /* arrays whose elements do not read as their type, or do not parse */
      "a/b, c=(buffer)< 0102, 030 >", "a/b, c=(buffer)< 0102, 0g >",
      "a/b, c=(buffer)< 0102 0304 >", "a/b, c=(int)< 1,, 2 >",
      "a/b, c=(int)< 1, x >", "a/b, c=(fraction)< 1/2, 1/0 >",
      "a/b, c=(string)< abc, (int)q >", "a/b, c=< 1, < 2 > >",
      "a/b, c=< 1, { 2 } >", "a/b, c=(int)< 1, 2", "a/b, c=(int)< 1 2 >",
      "a/b, c=< \"x >",
      /* a buffer's text that is not hex: GStreamer unmaps a freed buffer */
      "a/b, c=(buffer)0g", "a/b, c=(buffer)\"0102\"", "a/b, c=(buffer)012",
      /* arrays without a type or of mixed types: GStreamer writes them as
       * text that does not read back */
      "a/b, c=< 1, x >", "a/b, c=(int)< 1, (string)x >", "a/b, c=< 1 >",
      /* fractions past a gint (GStreamer's sscanf wraps, then it asserts),
       * values it reads but cannot write back */
      "a/b, c=2147483648/1", "a/b, c=1/-2147483648", "a/b, c=6442450944/1",
      "a/b, c=\" -2147483648/1\"", "a/b, c=(fraction)2147483648",
      "a/b, c=(fraction)< 2147483648/1 >", "a/b, c=(string)< NULL >",
      "a/b, c=(string)NULL", "a/b, c=(GstFormat)77",
      "a/b, c=(GstSeekFlags)0x80000000", "a/b, c=(GEnum)1",
      "a/b, c=(GFlags)1",
      /* nested caps and structures (the fuzzer's find, 208 bytes each) */
      "a/b, c=(GstCaps)\"x/y, d=(int)<\"", "a/b, c=(GstCaps)\"x/y\"",
      "a/b, c=(structure)\"x, d=(int)1\"", "a/b, c=(GstCaps)[x/y]",
      "a/b, c=(GstSegment)\"s, x=(int)< 1 \\076\"",
      /* types whose text cannot be looked into, or no type at all */
      "a/b, c=(GstSample)\"abc\"", "a/b, c=(NoSuchType)1",
      "a/b, c=(int\"1", "a/b, c=(int)1)", "a/b, c=(array)< 1 >",
      /* a structure's name that is not one (a critical in GStreamer) */
      "1a/b", "a/b; -x", " +"
    };
    const gchar *good_texts[] = {
      "video/x-raw(memory:SystemMemory, meta:GstVideoMeta), "
          "framerate=(fraction)30/1, big=(guint64)5, e=(GstFormat)time, "
          "sh=(buffer)< 0102, 0304 >, t=(string)< \"a\", \"b\\\" >\" >, "
          "s=(string)\"q{[ \\\" ]<\", f=(flagset)1:3, g=(type)GstBuffer",
      "a/b, c=(string)< 1, x, \"y z\" >, d=(int)< (int)1, 2, >, "
          "e=(int)<>, f=5, g=x, h=\"q\"; c/d",
      "audio/x-vorbis, rate=(int)44100, channels=(int)2, "
          "streamheader=(buffer)< 01766f72626973, 03766f72626973 >",
      /* what x264enc ! h264parse gives: the flag set's type is loaded from
       * its plugin by name (pbtypes), as GStreamer does */
      "video/x-h264, stream-format=(string)avc, alignment=(string)au, "
          "codec_data=(buffer)0164001fffe1, width=(int)640, "
          "multiview-mode=(string)mono, multiview-flags=("
          "GstVideoMultiviewFlagsSet)0:ffffffff:/right-view-first/"
          "left-flipped/left-flopped/right-flipped/right-flopped/half-aspect/"
          "mixed-mono"
    };
    guint8 frame[512];
    guint k;

    gst_format_get_type ();
    gst_seek_flags_get_type ();
    for (k = 0; k < G_N_ELEMENTS (good_texts); k++) {
      const gchar *good = good_texts[k];
      GstCaps *parsed;
      memset (frame, 0, 8);
      memcpy (frame + 8, good, strlen (good));
      fail_unless (mtcp_parse_caps (frame, 8 + strlen (good), &seq, &caps,
              &err), "%s: %s", good, err);
      /* what the check lets through is caps GStreamer reads */
      parsed = gst_caps_from_string (caps);
      fail_unless (parsed != NULL, "%s", caps);
      gst_caps_unref (parsed);
      g_free (caps);
    }
    for (k = 0; k < G_N_ELEMENTS (bad); k++) {
      memset (frame, 0, 8);
      memcpy (frame + 8, bad[k], strlen (bad[k]));
      REJECT (mtcp_parse_caps (frame, 8 + strlen (bad[k]), &seq, &caps,
              &err));
    }
  }
#undef REJECT
}

GST_END_TEST;

/* Names in CAPS text become GQuarks for good: what peers' caps may add
 * over the process's life is bounded, and caps of names already known
 * still pass once it is spent. */
GST_START_TEST (test_caps_new_names_bounded)
{
  const gsize text_max = 60 * 1024;
  guint8 *frame = g_malloc0 (8 + text_max);
  const gchar *known = "video/x-raw, width=(int)320, height=(int)240";
  gchar *caps = NULL, *err = NULL;
  guint64 seq;
  guint k, accepted = 0, expected = 0;
  gsize names = 0;
  gboolean refused = FALSE;

  g_quark_from_static_string ("video/x-raw");
  g_quark_from_static_string ("width");
  g_quark_from_static_string ("height");
  for (k = 0; k < 12 && !refused; k++) {
    GString *text = g_string_new ("a/b");
    gsize bytes = k == 0 ? strlen ("a/b") + 1 : 0;
    guint n = 0;
    while (text->len + 32 < text_max) {
      gchar *name = g_strdup_printf ("fresh%u_%u", k, n++);
      g_string_append_printf (text, ", %s=(int)1", name);
      bytes += strlen (name) + 1;
      g_free (name);
    }
    if (names + bytes <= 256 * 1024) {
      names += bytes;
      expected++;
    }
    memcpy (frame + 8, text->str, text->len);
    if (mtcp_parse_caps (frame, 8 + text->len, &seq, &caps, &err)) {
      accepted++;
      g_free (caps);
    } else {
      refused = TRUE;
      fail_unless (err != NULL);
      g_clear_pointer (&err, g_free);
    }
    g_string_free (text, TRUE);
  }
  /* 256 kB of new names, the texts that fit in it pass */
  fail_unless (expected > 0 && expected < 12);
  fail_unless_equals_int (accepted, expected);
  fail_unless (refused);
  memcpy (frame + 8, known, strlen (known));
  fail_unless (mtcp_parse_caps (frame, 8 + strlen (known), &seq, &caps,
          &err), "%s", err);
  g_free (caps);
  g_free (frame);
}

GST_END_TEST;

GST_START_TEST (test_handshake_frames_roundtrip)
{
  MtcpChallenge ch, ch_back;
  MtcpAuth auth, auth_back;
  guint8 mac[MTCP_MAC_SIZE], mac_back[MTCP_MAC_SIZE];
  guint8 out[MTCP_AUTH_FRAME_SIZE + 8], big[MTCP_AUTH_FRAME_SIZE + 8];
  MtcpFrameHeader hdr;
  gchar *err = NULL;
  gsize n;

  memset (ch.nonce, 0x01, MTCP_NONCE_SIZE);
  memset (ch.salt, 0x02, MTCP_SALT_SIZE);
  ch.iterations = 150000;
  n = mtcp_write_challenge (out, sizeof (out), &ch);
  fail_unless_equals_int (n, MTCP_HEADER_SIZE + 52);
  fail_unless_equals_int (mtcp_write_challenge (out, n - 1, &ch), 0);
  fail_unless_equals_int (mtcp_parse_header (out, n, MTCP_MAX_HANDSHAKE_BODY,
          &hdr, &err), MTCP_PARSE_OK);
  fail_unless_equals_int (hdr.type, MTCP_FRAME_CHALLENGE);
  fail_unless_equals_int (hdr.length, 52);
  /* the rounds are big-endian right after the salt */
  fail_unless_equals_int (out[MTCP_HEADER_SIZE + 48 + 1], 0x02);
  fail_unless_equals_int (out[MTCP_HEADER_SIZE + 48 + 2], 0x49);
  fail_unless_equals_int (out[MTCP_HEADER_SIZE + 48 + 3], 0xf0);
  fail_unless (mtcp_parse_challenge (out + MTCP_HEADER_SIZE, hdr.length,
          &ch_back, &err));
  fail_unless (memcmp (&ch, &ch_back, sizeof (ch)) == 0);

  memset (auth.nonce, 0x03, MTCP_NONCE_SIZE);
  memset (auth.mac, 0x04, MTCP_MAC_SIZE);
  n = mtcp_write_auth (out, sizeof (out), &auth);
  fail_unless_equals_int (n, MTCP_HEADER_SIZE + 64);
  fail_unless_equals_int (mtcp_write_auth (out, n - 1, &auth), 0);
  fail_unless_equals_int (mtcp_parse_header (out, n, MTCP_MAX_HANDSHAKE_BODY,
          &hdr, &err), MTCP_PARSE_OK);
  fail_unless_equals_int (hdr.type, MTCP_FRAME_AUTH);
  fail_unless (mtcp_parse_auth (out + MTCP_HEADER_SIZE, hdr.length,
          &auth_back, &err));
  fail_unless (memcmp (&auth, &auth_back, sizeof (auth)) == 0);

  memset (mac, 0x05, MTCP_MAC_SIZE);
  n = mtcp_write_proof (out, sizeof (out), mac);
  fail_unless_equals_int (n, MTCP_HEADER_SIZE + 32);
  fail_unless_equals_int (mtcp_write_proof (out, n - 1, mac), 0);
  fail_unless_equals_int (mtcp_parse_header (out, n, MTCP_MAX_HANDSHAKE_BODY,
          &hdr, &err), MTCP_PARSE_OK);
  fail_unless_equals_int (hdr.type, MTCP_FRAME_PROOF);
  fail_unless_equals_string (mtcp_frame_type_name (hdr.type), "PROOF");
  fail_unless (mtcp_parse_proof (out + MTCP_HEADER_SIZE, hdr.length,
          mac_back, &err));
  fail_unless (memcmp (mac, mac_back, MTCP_MAC_SIZE) == 0);

  /* a byte short or long is refused */
  memset (big, 0, sizeof (big));
#define REJECT(call) G_STMT_START { fail_if (call); fail_unless (err != NULL); \
    g_free (err); err = NULL; } G_STMT_END
  REJECT (mtcp_parse_challenge (big, 51, &ch_back, &err));
  REJECT (mtcp_parse_challenge (big, 53, &ch_back, &err));
  REJECT (mtcp_parse_challenge (big, 32, &ch_back, &err));
  REJECT (mtcp_parse_auth (big, 63, &auth_back, &err));
  REJECT (mtcp_parse_auth (big, 65, &auth_back, &err));
  REJECT (mtcp_parse_auth (big, 32, &auth_back, &err));
  REJECT (mtcp_parse_proof (big, 31, mac_back, &err));
  REJECT (mtcp_parse_proof (big, 33, mac_back, &err));
#undef REJECT

  /* handshake frames stay small whatever the reader's limit */
  mtcp_write_header (big, MTCP_FRAME_CHALLENGE, 0, MTCP_MAX_HANDSHAKE_BODY + 1);
  fail_unless_equals_int (mtcp_parse_header (big, MTCP_HEADER_SIZE,
          MTCP_MAX_FRAME_DEFAULT, &hdr, &err), MTCP_PARSE_ERROR);
  g_clear_pointer (&err, g_free);
  mtcp_write_header (big, MTCP_FRAME_PROOF, 0, 4096);
  fail_unless_equals_int (mtcp_parse_header (big, MTCP_HEADER_SIZE,
          MTCP_MAX_FRAME_DEFAULT, &hdr, &err), MTCP_PARSE_ERROR);
  g_clear_pointer (&err, g_free);

  /* what a receiver sends once admitted fits its limit */
  fail_unless (MTCP_FEEDBACK_SIZE <= MTCP_MAX_RECEIVER_BODY);
  fail_unless (MTCP_MAX_HANDSHAKE_BODY <= MTCP_MAX_RECEIVER_BODY);
}

GST_END_TEST;

GST_START_TEST (test_bytes_equal_ct)
{
  guint8 a[40], b[40];
  guint i;

  memset (a, 0x33, sizeof (a));
  memcpy (b, a, sizeof (b));
  fail_unless (mtcp_bytes_equal_ct (a, b, sizeof (a)));
  fail_unless (mtcp_bytes_equal_ct (a, b, 0));
  for (i = 0; i < sizeof (a); i++) {
    b[i] ^= 0x80;
    fail_if (mtcp_bytes_equal_ct (a, b, sizeof (a)), "byte %u", i);
    fail_unless (mtcp_bytes_equal_ct (a, b, i));
    b[i] ^= 0x80;
  }
}

GST_END_TEST;

/* Item 5: what a large frame grew is given back once it is consumed. */
GST_START_TEST (test_reader_shrinks_after_large_frame)
{
  MtcpFrameReader *r = mtcp_frame_reader_new (MTCP_MAX_FRAME_DEFAULT);
  const gsize frame = 4 * 1024 * 1024;
  guint8 small[MTCP_EOS_FRAME_SIZE];
  MtcpFrameHeader hdr;
  const guint8 *body;
  gchar *err = NULL;
  gsize got = 0, space, peak = 0;
  guint8 *dst;
  guint64 seq;

  while (got < frame) {
    gsize n;
    dst = mtcp_frame_reader_space (r, &space);
    n = MIN (space, frame - got);
    memset (dst, 0xab, n);
    if (got == 0)
      mtcp_write_header (dst, MTCP_FRAME_BUFFER, 0, frame - MTCP_HEADER_SIZE);
    mtcp_frame_reader_commit (r, n);
    got += n;
    peak = MAX (peak, mtcp_frame_reader_allocated (r));
  }
  fail_unless (peak >= frame);
  fail_unless_equals_int (mtcp_frame_reader_next (r, &hdr, &body, &err),
      MTCP_PARSE_OK);
  fail_unless_equals_int (hdr.length, frame - MTCP_HEADER_SIZE);

  /* small frames after it: the next read gets a small buffer again */
  mtcp_write_eos (small, sizeof (small), 7);
  dst = mtcp_frame_reader_space (r, &space);
  fail_unless (mtcp_frame_reader_allocated (r) <= 2 * 64 * 1024,
      "%" G_GSIZE_FORMAT " bytes still allocated",
      mtcp_frame_reader_allocated (r));
  memcpy (dst, small, 5);
  mtcp_frame_reader_commit (r, 5);
  fail_unless_equals_int (mtcp_frame_reader_next (r, &hdr, &body, &err),
      MTCP_PARSE_NEED_MORE);
  /* part of a frame held: it survives the shrink */
  dst = mtcp_frame_reader_space (r, &space);
  fail_unless (mtcp_frame_reader_allocated (r) <= 2 * 64 * 1024);
  memcpy (dst, small + 5, sizeof (small) - 5);
  mtcp_frame_reader_commit (r, sizeof (small) - 5);
  fail_unless_equals_int (mtcp_frame_reader_next (r, &hdr, &body, &err),
      MTCP_PARSE_OK);
  fail_unless (mtcp_parse_eos (body, hdr.length, &seq, &err));
  fail_unless_equals_uint64 (seq, 7);
  mtcp_frame_reader_free (r);
}

GST_END_TEST;

static Suite *
protocol_suite (void)
{
  Suite *s = suite_create ("protocol");
  TCase *tc = tcase_create ("codec");

  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_hello_layout);
  tcase_add_test (tc, test_hello_wrong_magic_and_version);
  tcase_add_test (tc, test_stream_id_tail);
  tcase_add_test (tc, test_buffer_layout_and_roundtrip);
  tcase_add_test (tc, test_buffer_delta_roundtrip);
  tcase_add_test (tc, test_buffer_delta_malformed);
  tcase_add_test (tc, test_control_frames_roundtrip);
  tcase_add_test (tc, test_header_limits);
  tcase_add_test (tc, test_reader_reassembles_any_chunking);
  tcase_add_test (tc, test_reader_huge_length_and_cut_frames);
  tcase_add_test (tc, test_reader_memory_follows_received_bytes);
  tcase_add_test (tc, test_truncated_bodies_rejected);
  tcase_add_test (tc, test_caps_new_names_bounded);
  tcase_add_test (tc, test_handshake_frames_roundtrip);
  tcase_add_test (tc, test_bytes_equal_ct);
  tcase_add_test (tc, test_reader_shrinks_after_large_frame);
  return s;
}

GST_CHECK_MAIN (protocol);

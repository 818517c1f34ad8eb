/* multitcp
 * Copyright (C) 2026 the multitcp authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
/* libFuzzer target: the bytes a peer can send, through the incremental
 * frame reader and every body parser. No crash, no leak, no read past a
 * buffer, whatever arrives and however it is cut. What a sink sends goes on
 * as in multitcpsrc: CAPS text through gst_caps_from_string, timestamps
 * range-checked and into the clock skew estimate, BUFFER, CAPS, EOS and
 * SKIP into a reorder buffer with the source's kind of limits, which is
 * drained as it goes. */
#include <gst/gst.h>
#include <string.h>

#include "mtcpprotocol.h"
#include "mtcpreorder.h"
#include "mtcpskew.h"

/* as in mtcpclient.c */
#define MAX_TIME (G_MAXINT64 / 2)
#define HORIZON (2 * GST_SECOND)
#define RX_MAX_BYTES (1 << 20)

/* The receiver side of one input: a reorder buffer and the skew estimate,
 * fed with a clock that runs 1 ms a frame. */
typedef struct
{
  MtcpReorder *reorder;
  MtcpSkew *skew;
  GstClockTime now;
} Receiver;

static void
receiver_hold (Receiver * rx, guint64 seq, GstClockTime deadline, gsize size)
{
  guint64 *item = g_new (guint64, 1);

  *item = seq;
  if (mtcp_reorder_push (rx->reorder, seq, deadline, rx->now, size, item) !=
      MTCP_REORDER_ACCEPTED)
    g_free (item);
}

static void
receiver_drain (Receiver * rx)
{
  MtcpReorderStats stats;
  gpointer item;
  guint64 seq;
  gboolean discont;
  GstClockTime wake_at;

  while ((item = mtcp_reorder_pop (rx->reorder, rx->now, &seq, &discont,
              &wake_at)) != NULL) {
    if (*(guint64 *) item != seq)
      __builtin_trap ();        /* released under another number */
    g_free (item);
  }
  mtcp_reorder_get_stats (rx->reorder, &stats);
  /* the cap, and at most one frame next in order taken over it */
  if (mtcp_reorder_n_ranges (rx->reorder) > MTCP_REORDER_MAX_RANGES ||
      stats.bytes > RX_MAX_BYTES + (1 << 20))
    __builtin_trap ();          /* a bound did not hold */
  (void) mtcp_reorder_highest_in_order (rx->reorder);
  (void) mtcp_reorder_first_deadline (rx->reorder);
}

/* handle_buffer's checks and time arithmetic, on a parsed head */
static void
receiver_buffer (Receiver * rx, const MtcpBufferInfo * info)
{
  guint64 ref = info->dts != MTCP_TIME_NONE ? info->dts : info->pts;

  if ((info->pts != MTCP_TIME_NONE && info->pts > MAX_TIME) ||
      (info->dts != MTCP_TIME_NONE && info->dts > MAX_TIME) ||
      (info->duration != MTCP_TIME_NONE && info->duration > MAX_TIME))
    return;                     /* a protocol error there */
  if (ref != MTCP_TIME_NONE) {
    mtcp_skew_observe (rx->skew, ref, rx->now);
    (void) mtcp_skew_correction (rx->skew, ref);
    (void) mtcp_skew_get_ppm (rx->skew);
  }
  /* the sender's time itself as the deadline: any value, often far off */
  receiver_hold (rx, info->seq, ref == MTCP_TIME_NONE ? GST_CLOCK_TIME_NONE :
      ref, info->payload_size);
}

int LLVMFuzzerInitialize (int *argc, char ***argv);
int LLVMFuzzerTestOneInput (const guint8 * data, size_t size);

int
LLVMFuzzerInitialize (int *argc, char ***argv)
{
  gst_init (NULL, NULL);
  return 0;
}

static void
parse_body (const MtcpFrameHeader * hdr, const guint8 * body,
    MtcpBufferDeltaState * delta, Receiver * rx)
{
  gchar *err = NULL, *caps = NULL;
  guint64 seq;
  const guint8 *payload;
  MtcpHello hello;
  MtcpWelcome welcome;
  MtcpRefuse refuse;
  MtcpBufferInfo info;
  MtcpSkip skip;
  MtcpReport report;
  MtcpFeedback fb;
  MtcpChallenge challenge;
  MtcpAuth auth;
  guint8 mac[MTCP_MAC_SIZE];
  gboolean ok = TRUE;

  switch (hdr->type) {
    case MTCP_FRAME_HELLO:
      ok = mtcp_parse_hello (body, hdr->length, &hello, &err);
      break;
    case MTCP_FRAME_WELCOME:
      ok = mtcp_parse_welcome (body, hdr->length, &welcome, &err);
      break;
    case MTCP_FRAME_REFUSE:
      ok = mtcp_parse_refuse (body, hdr->length, &refuse, &err);
      break;
    case MTCP_FRAME_BUFFER:
      ok = mtcp_parse_buffer (body, hdr->length, &info, &payload, &err);
      if (ok && info.payload_size > 0) {
        /* touch both ends of the payload: ASan checks the bounds */
        volatile guint8 x = payload[0] ^ payload[info.payload_size - 1];
        (void) x;
      }
      if (ok)
        receiver_buffer (rx, &info);
      break;
    case MTCP_FRAME_BUFFER_DELTA:
      ok = mtcp_parse_buffer_delta (body, hdr->length, delta, &info, &payload,
          &err);
      if (ok && info.payload_size > 0) {
        volatile guint8 x = payload[0] ^ payload[info.payload_size - 1];
        (void) x;
      }
      if (ok)
        receiver_buffer (rx, &info);
      break;
    case MTCP_FRAME_CAPS:
      ok = mtcp_parse_caps (body, hdr->length, &seq, &caps, &err);
      if (ok) {
        /* handle_caps: GStreamer parses the sink's text */
        GstCaps *c = gst_caps_from_string (caps);
        if (c != NULL && gst_caps_is_fixed (c))
          receiver_hold (rx, seq, rx->now + HORIZON, strlen (caps));
        gst_clear_caps (&c);
      }
      g_free (caps);
      break;
    case MTCP_FRAME_EOS:
      ok = mtcp_parse_eos (body, hdr->length, &seq, &err);
      if (ok)
        receiver_hold (rx, seq, rx->now + HORIZON, 0);
      break;
    case MTCP_FRAME_SKIP:
      ok = mtcp_parse_skip (body, hdr->length, &skip, &err);
      if (ok)
        (void) mtcp_reorder_skip_range (rx->reorder, skip.first_seq,
            skip.end_seq);
      break;
    case MTCP_FRAME_REPORT:
      ok = mtcp_parse_report (body, hdr->length, &report, &err);
      break;
    case MTCP_FRAME_FEEDBACK:
      ok = mtcp_parse_feedback (body, hdr->length, &fb, &err);
      break;
    case MTCP_FRAME_WANT:{
      MtcpWant want;
      ok = mtcp_parse_want (body, hdr->length, &want, &err);
      break;
    }
    case MTCP_FRAME_CHALLENGE:
      ok = mtcp_parse_challenge (body, hdr->length, &challenge, &err);
      break;
    case MTCP_FRAME_AUTH:
      ok = mtcp_parse_auth (body, hdr->length, &auth, &err);
      break;
    case MTCP_FRAME_PROOF:
      ok = mtcp_parse_proof (body, hdr->length, mac, &err);
      break;
    default:
      break;                    /* unknown types are skipped by length */
  }
  if (!ok && err == NULL)
    __builtin_trap ();          /* every refusal must say why */
  g_free (err);
  rx->now += GST_MSECOND;
  receiver_drain (rx);
}

int
LLVMFuzzerTestOneInput (const guint8 * data, size_t size)
{
  MtcpFrameReader *reader;
  MtcpBufferDeltaState delta = { 0, };
  Receiver rx;
  size_t off = 1, chunk;

  if (size < 1)
    return 0;
  /* the first byte picks how the stream is cut into reads */
  chunk = 1 + data[0] % 97;
  reader = mtcp_frame_reader_new (1 << 20);
  /* a small window, so that the ring's growth and the window are reached */
  rx.reorder = mtcp_reorder_new (1 << 12, g_free);
  mtcp_reorder_set_limits (rx.reorder, RX_MAX_BYTES, HORIZON);
  rx.skew = mtcp_skew_new (10 * GST_MSECOND, 5);
  rx.now = GST_SECOND;
  while (off < size) {
    gsize space, n;
    guint8 *dst = mtcp_frame_reader_space (reader, &space);
    MtcpFrameHeader hdr;
    const guint8 *body;
    gchar *err = NULL;
    MtcpParseResult r;

    n = MIN (MIN (chunk, space), size - off);
    memcpy (dst, data + off, n);
    mtcp_frame_reader_commit (reader, n);
    off += n;
    while ((r = mtcp_frame_reader_next (reader, &hdr, &body, &err)) ==
        MTCP_PARSE_OK)
      parse_body (&hdr, body, &delta, &rx);
    g_free (err);
    if (r == MTCP_PARSE_ERROR)
      break;                    /* the connection would be closed here */
  }
  mtcp_frame_reader_free (reader);
  /* what the source does once nothing more can arrive */
  rx.now = G_MAXUINT64 - 1;
  receiver_drain (&rx);
  mtcp_reorder_free (rx.reorder);
  mtcp_skew_free (rx.skew);
  return 0;
}

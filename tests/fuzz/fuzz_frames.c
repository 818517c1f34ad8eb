/* libFuzzer target: the bytes a peer can send, through the incremental
 * frame reader and every body parser. No crash, no leak, no read past a
 * buffer, whatever arrives and however it is cut. */
#include <gst/gst.h>
#include <string.h>

#include "mtcpprotocol.h"

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
    MtcpBufferDeltaState * delta)
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
      break;
    case MTCP_FRAME_BUFFER_DELTA:
      ok = mtcp_parse_buffer_delta (body, hdr->length, delta, &info, &payload,
          &err);
      if (ok && info.payload_size > 0) {
        volatile guint8 x = payload[0] ^ payload[info.payload_size - 1];
        (void) x;
      }
      break;
    case MTCP_FRAME_CAPS:
      ok = mtcp_parse_caps (body, hdr->length, &seq, &caps, &err);
      g_free (caps);
      break;
    case MTCP_FRAME_EOS:
      ok = mtcp_parse_eos (body, hdr->length, &seq, &err);
      break;
    case MTCP_FRAME_SKIP:
      ok = mtcp_parse_skip (body, hdr->length, &skip, &err);
      break;
    case MTCP_FRAME_REPORT:
      ok = mtcp_parse_report (body, hdr->length, &report, &err);
      break;
    case MTCP_FRAME_FEEDBACK:
      ok = mtcp_parse_feedback (body, hdr->length, &fb, &err);
      break;
    default:
      break;                    /* unknown types are skipped by length */
  }
  if (!ok && err == NULL)
    __builtin_trap ();          /* every refusal must say why */
  g_free (err);
}

int
LLVMFuzzerTestOneInput (const guint8 * data, size_t size)
{
  MtcpFrameReader *reader;
  MtcpBufferDeltaState delta = { 0, };
  size_t off = 1, chunk;

  if (size < 1)
    return 0;
  /* the first byte picks how the stream is cut into reads */
  chunk = 1 + data[0] % 97;
  reader = mtcp_frame_reader_new (1 << 20);
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
      parse_body (&hdr, body, &delta);
    g_free (err);
    if (r == MTCP_PARSE_ERROR)
      break;                    /* the connection would be closed here */
  }
  mtcp_frame_reader_free (reader);
  return 0;
}

/* multitcp
 * Copyright (C) 2026 the multitcp authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "mtcpprotocol.h"

#include <gst/gst.h>
#include <string.h>

GST_DEBUG_CATEGORY_STATIC (mtcp_protocol_debug);
#define GST_CAT_DEFAULT mtcp_protocol_debug

#define HELLO_BODY 28
/* HELLO without latency_ms, as the first receivers sent it */
#define HELLO_BODY_MIN 24
#define WELCOME_BODY 32
#define SKIP_BODY 16

void
mtcp_protocol_debug_init (void)
{
  static gsize done = 0;
  if (g_once_init_enter (&done)) {
    GST_DEBUG_CATEGORY_INIT (mtcp_protocol_debug, "multitcpprotocol", 0,
        "multitcp wire protocol");
    g_once_init_leave (&done, 1);
  }
}

/* ---- byte order helpers ---- */

static inline void
put_u16 (guint8 * p, guint16 v)
{
  p[0] = v >> 8;
  p[1] = v;
}

static inline void
put_u32 (guint8 * p, guint32 v)
{
  p[0] = v >> 24;
  p[1] = v >> 16;
  p[2] = v >> 8;
  p[3] = v;
}

static inline void
put_u64 (guint8 * p, guint64 v)
{
  put_u32 (p, v >> 32);
  put_u32 (p + 4, (guint32) v);
}

static inline guint16
get_u16 (const guint8 * p)
{
  return ((guint16) p[0] << 8) | p[1];
}

static inline guint32
get_u32 (const guint8 * p)
{
  return ((guint32) p[0] << 24) | ((guint32) p[1] << 16) |
      ((guint32) p[2] << 8) | p[3];
}

static inline guint64
get_u64 (const guint8 * p)
{
  return ((guint64) get_u32 (p) << 32) | get_u32 (p + 4);
}

const gchar *
mtcp_frame_type_name (guint8 type)
{
  switch (type) {
    case MTCP_FRAME_HELLO:
      return "HELLO";
    case MTCP_FRAME_WELCOME:
      return "WELCOME";
    case MTCP_FRAME_REFUSE:
      return "REFUSE";
    case MTCP_FRAME_CHALLENGE:
      return "CHALLENGE";
    case MTCP_FRAME_AUTH:
      return "AUTH";
    case MTCP_FRAME_PROOF:
      return "PROOF";
    case MTCP_FRAME_CAPS:
      return "CAPS";
    case MTCP_FRAME_BUFFER:
      return "BUFFER";
    case MTCP_FRAME_BUFFER_DELTA:
      return "BUFFER_DELTA";
    case MTCP_FRAME_PADDING:
      return "PADDING";
    case MTCP_FRAME_EOS:
      return "EOS";
    case MTCP_FRAME_SKIP:
      return "SKIP";
    case MTCP_FRAME_REPORT:
      return "REPORT";
    case MTCP_FRAME_FEEDBACK:
      return "FEEDBACK";
    case MTCP_FRAME_RETIRE:
      return "RETIRE";
    case MTCP_FRAME_WANT:
      return "WANT";
    default:
      return "unknown";
  }
}

gchar *
mtcp_session_id_to_string (const guint8 id[MTCP_SESSION_ID_SIZE])
{
  gchar *s = g_malloc (MTCP_SESSION_ID_SIZE * 2 + 1);
  guint i;
  for (i = 0; i < MTCP_SESSION_ID_SIZE; i++)
    g_snprintf (s + i * 2, 3, "%02x", id[i]);
  return s;
}

/* ---- writing ---- */

gsize
mtcp_write_header (guint8 out[MTCP_HEADER_SIZE], guint8 type, guint8 flags,
    guint32 length)
{
  out[0] = type;
  out[1] = flags;
  put_u16 (out + 2, 0);
  put_u32 (out + 4, length);
  return MTCP_HEADER_SIZE;
}

/* HELLO's and WELCOME's optional tail: u16 length, the stream id (UTF-8,
 * no NUL); nothing when there is none, so the frames stay as they were */
static gsize
stream_id_tail_size (const gchar * id)
{
  gsize len = strnlen (id, MTCP_STREAM_ID_MAX + 1);
  return len == 0 || len > MTCP_STREAM_ID_MAX ? 0 : 2 + len;
}

static void
put_stream_id_tail (guint8 * p, const gchar * id)
{
  gsize size = stream_id_tail_size (id);

  if (size == 0)
    return;
  put_u16 (p, size - 2);
  memcpy (p + 2, id, size - 2);
}

/* The tail of a body of @size whose fixed part is @fixed bytes, into
 * @out ("" without one). */
static gboolean
get_stream_id_tail (const gchar * what, const guint8 * body, gsize size,
    gsize fixed, gchar out[MTCP_STREAM_ID_MAX + 1], gchar ** error)
{
  gsize len;

  out[0] = '\0';
  if (size < fixed + 2)
    return TRUE;
  len = get_u16 (body + fixed);
  if (len > MTCP_STREAM_ID_MAX || fixed + 2 + len > size) {
    if (error)
      *error = g_strdup_printf ("%s stream id of %" G_GSIZE_FORMAT " bytes "
          "(at most %d, and within the frame)", what, len,
          MTCP_STREAM_ID_MAX);
    return FALSE;
  }
  if (!g_utf8_validate ((const gchar *) body + fixed + 2, len, NULL) ||
      memchr (body + fixed + 2, 0, len)) {
    if (error)
      *error = g_strdup_printf ("%s stream id is not UTF-8 text", what);
    return FALSE;
  }
  memcpy (out, body + fixed + 2, len);
  out[len] = '\0';
  return TRUE;
}

gsize
mtcp_write_hello (guint8 * out, gsize out_size, const MtcpHello * hello)
{
  guint8 *b = out + MTCP_HEADER_SIZE;
  gsize body = HELLO_BODY + stream_id_tail_size (hello->stream_id);

  if (out_size < MTCP_HEADER_SIZE + body)
    return 0;
  mtcp_write_header (out, MTCP_FRAME_HELLO, 0, body);
  put_u32 (b, hello->magic);
  put_u16 (b + 4, hello->version);
  b[6] = hello->flags;
  b[7] = 0;
  memcpy (b + 8, hello->session_id, MTCP_SESSION_ID_SIZE);
  put_u32 (b + 24, hello->latency_ms);
  put_stream_id_tail (b + HELLO_BODY, hello->stream_id);
  return MTCP_HEADER_SIZE + body;
}

gsize
mtcp_write_welcome (guint8 * out, gsize out_size, const MtcpWelcome * welcome)
{
  guint8 *b = out + MTCP_HEADER_SIZE;
  gsize id_tail = stream_id_tail_size (welcome->stream_id);
  gsize body;
  /* the path follows the stream id, which is then there even if empty,
   * and the sink's limit follows the path (0, 0 when it names none) */
  gboolean limit = welcome->max_connections > 0;
  gboolean path = welcome->n_paths > 0 || limit;

  if (path && id_tail == 0)
    id_tail = 2;
  body = WELCOME_BODY + id_tail + (path ? 2 : 0) + (limit ? 2 : 0);
  if (out_size < MTCP_HEADER_SIZE + body)
    return 0;
  mtcp_write_header (out, MTCP_FRAME_WELCOME, 0, body);
  put_u32 (b, MTCP_MAGIC);
  put_u16 (b + 4, MTCP_VERSION);
  put_u16 (b + 6, 0);
  memcpy (b + 8, welcome->session_id, MTCP_SESSION_ID_SIZE);
  put_u32 (b + 24, welcome->connection_id);
  put_u32 (b + 28, welcome->max_frame);
  if (id_tail > 0)
    put_u16 (b + WELCOME_BODY, 0);
  put_stream_id_tail (b + WELCOME_BODY, welcome->stream_id);
  if (path) {
    b[WELCOME_BODY + id_tail] = welcome->n_paths > 0 ? welcome->path : 0;
    b[WELCOME_BODY + id_tail + 1] = welcome->n_paths;
  }
  if (limit)
    put_u16 (b + WELCOME_BODY + id_tail + 2, welcome->max_connections);
  return MTCP_HEADER_SIZE + body;
}

gsize
mtcp_write_refuse (guint8 * out, gsize out_size, guint16 code,
    const gchar * reason)
{
  gsize len = reason ? strlen (reason) : 0;
  const gchar *end;

  if (len > MTCP_MAX_REASON)
    len = MTCP_MAX_REASON;
  /* never cut a UTF-8 sequence in half */
  if (reason && !g_utf8_validate (reason, len, &end))
    len = end - reason;
  if (out_size < MTCP_HEADER_SIZE + 2 + len)
    return 0;
  mtcp_write_header (out, MTCP_FRAME_REFUSE, 0, 2 + len);
  put_u16 (out + MTCP_HEADER_SIZE, code);
  if (len)
    memcpy (out + MTCP_HEADER_SIZE + 2, reason, len);
  return MTCP_HEADER_SIZE + 2 + len;
}

gsize
mtcp_write_buffer_head (guint8 * out, gsize out_size,
    const MtcpBufferInfo * info)
{
  guint8 *b = out + MTCP_HEADER_SIZE;

  if (out_size < MTCP_BUFFER_HEAD_SIZE ||
      (guint64) info->payload_size + MTCP_BUFFER_INFO_SIZE > G_MAXUINT32)
    return 0;
  mtcp_write_header (out, MTCP_FRAME_BUFFER, 0,
      MTCP_BUFFER_INFO_SIZE + info->payload_size);
  put_u64 (b, info->seq);
  put_u64 (b + 8, info->pts);
  put_u64 (b + 16, info->dts);
  put_u64 (b + 24, info->duration);
  put_u32 (b + 32, info->flags);
  put_u32 (b + 36, info->payload_size);
  return MTCP_BUFFER_HEAD_SIZE;
}

/* LEB128, at most 10 bytes for 64 bits */
static gsize
put_varint (guint8 * p, guint64 v)
{
  gsize n = 0;

  while (v >= 0x80) {
    p[n++] = (guint8) (v | 0x80);
    v >>= 7;
  }
  p[n++] = (guint8) v;
  return n;
}

static gboolean
get_varint (const guint8 * p, gsize size, gsize * pos, guint64 * v)
{
  guint shift = 0;

  *v = 0;
  while (*pos < size && shift < 64) {
    guint8 b = p[(*pos)++];
    /* the tenth byte may carry only the top bit */
    if (shift == 63 && b > 1)
      return FALSE;
    *v |= (guint64) (b & 0x7f) << shift;
    if (!(b & 0x80))
      return TRUE;
    shift += 7;
  }
  return FALSE;
}

/* differences as zigzag: small either way round */
static gsize
put_delta (guint8 * p, guint64 value, guint64 reference)
{
  gint64 d = (gint64) (value - reference);
  return put_varint (p, ((guint64) d << 1) ^ (guint64) (d >> 63));
}

static gboolean
get_delta (const guint8 * p, gsize size, gsize * pos, guint64 reference,
    guint64 * value)
{
  guint64 z;

  if (!get_varint (p, size, pos, &z))
    return FALSE;
  *value = reference + ((z >> 1) ^ (~(z & 1) + 1));
  return TRUE;
}

#define DELTA_HAS_PTS 0x01
#define DELTA_HAS_DTS 0x02
#define DELTA_HAS_DURATION 0x04
#define DELTA_TIMES (DELTA_HAS_PTS | DELTA_HAS_DTS | DELTA_HAS_DURATION)
/* alone in the mask: only the seq follows, the times and flags are the last
 * one's */
#define DELTA_SAME 0x08

static guint8
delta_time_mask (const MtcpBufferInfo * info)
{
  return (info->pts != MTCP_TIME_NONE ? DELTA_HAS_PTS : 0) |
      (info->dts != MTCP_TIME_NONE ? DELTA_HAS_DTS : 0) |
      (info->duration != MTCP_TIME_NONE ? DELTA_HAS_DURATION : 0);
}

/* the MPEG-TS units of one video frame: times and flags as the last's */
static gboolean
delta_same (const MtcpBufferInfo * info, guint8 mask,
    const MtcpBufferDeltaState * state)
{
  return mask == state->mask && info->flags == state->flags &&
      (!(mask & DELTA_HAS_PTS) || info->pts == state->pts) &&
      (!(mask & DELTA_HAS_DTS) || info->dts == state->dts) &&
      (!(mask & DELTA_HAS_DURATION) || info->duration == state->duration);
}

gsize
mtcp_write_buffer_delta_head (guint8 * out, gsize out_size,
    const MtcpBufferInfo * info, MtcpBufferDeltaState * state,
    gboolean compact)
{
  guint8 body[MTCP_BUFFER_DELTA_HEAD_MAX];
  guint8 mask = delta_time_mask (info);
  gsize n = 1, head;

  if (out_size < MTCP_BUFFER_DELTA_HEAD_MAX)
    return 0;
  body[0] = compact && delta_same (info, mask, state) ? DELTA_SAME : mask;
  n += put_delta (body + n, info->seq, state->next_seq);
  if (body[0] != DELTA_SAME) {
    if (mask & DELTA_HAS_PTS)
      n += put_delta (body + n, info->pts, state->pts);
    if (mask & DELTA_HAS_DTS)
      n += put_delta (body + n, info->dts, state->dts);
    if (mask & DELTA_HAS_DURATION)
      n += put_delta (body + n, info->duration, state->duration);
    n += put_varint (body + n, info->flags);
  }
  if ((guint64) info->payload_size + n > G_MAXUINT32)
    return 0;
  if (compact && info->payload_size + n <= MTCP_SHORT_BODY_MAX) {
    out[0] = MTCP_SHORT_HEADER_BIT | MTCP_FRAME_BUFFER_DELTA;
    put_u16 (out + 1, n + info->payload_size);
    head = MTCP_SHORT_HEADER_SIZE;
  } else {
    head = mtcp_write_header (out, MTCP_FRAME_BUFFER_DELTA, 0,
        n + info->payload_size);
  }
  memcpy (out + head, body, n);
  if (mask & DELTA_HAS_PTS)
    state->pts = info->pts;
  if (mask & DELTA_HAS_DTS)
    state->dts = info->dts;
  if (mask & DELTA_HAS_DURATION)
    state->duration = info->duration;
  state->mask = mask;
  state->flags = info->flags;
  state->next_seq = info->seq + 1;
  return head + n;
}

gsize
mtcp_write_caps (guint8 * out, gsize out_size, guint64 seq,
    const gchar * caps_str)
{
  gsize len = strlen (caps_str);

  if (len > MTCP_MAX_CONTROL_BODY - 8 || out_size < MTCP_HEADER_SIZE + 8 + len)
    return 0;
  mtcp_write_header (out, MTCP_FRAME_CAPS, 0, 8 + len);
  put_u64 (out + MTCP_HEADER_SIZE, seq);
  memcpy (out + MTCP_HEADER_SIZE + 8, caps_str, len);
  return MTCP_HEADER_SIZE + 8 + len;
}

gsize
mtcp_write_eos (guint8 * out, gsize out_size, guint64 seq)
{
  if (out_size < MTCP_EOS_FRAME_SIZE)
    return 0;
  mtcp_write_header (out, MTCP_FRAME_EOS, 0, 8);
  put_u64 (out + MTCP_HEADER_SIZE, seq);
  return MTCP_EOS_FRAME_SIZE;
}

gsize
mtcp_write_skip (guint8 * out, gsize out_size, const MtcpSkip * skip)
{
  if (out_size < MTCP_SKIP_FRAME_SIZE)
    return 0;
  mtcp_write_header (out, MTCP_FRAME_SKIP, 0, SKIP_BODY);
  put_u64 (out + MTCP_HEADER_SIZE, skip->first_seq);
  put_u64 (out + MTCP_HEADER_SIZE + 8, skip->end_seq);
  return MTCP_SKIP_FRAME_SIZE;
}

gsize
mtcp_write_report (guint8 * out, gsize out_size, const MtcpReport * r)
{
  guint8 *b = out + MTCP_HEADER_SIZE;

  if (out_size < MTCP_REPORT_FRAME_SIZE)
    return 0;
  mtcp_write_header (out, MTCP_FRAME_REPORT, 0, MTCP_REPORT_SIZE);
  put_u64 (b, r->sink_time_us);
  put_u64 (b + 8, r->stream_bitrate);
  put_u64 (b + 16, r->backlog_bytes);
  put_u32 (b + 24, r->rtt_us);
  put_u32 (b + 28, r->rttvar_us);
  put_u32 (b + 32, r->snd_cwnd);
  put_u32 (b + 36, r->snd_mss);
  put_u32 (b + 40, r->total_retrans);
  put_u32 (b + 44, r->lost);
  put_u64 (b + 48, r->bytes_acked);
  put_u64 (b + 56, r->unsent_bytes);
  put_u32 (b + 64, r->flags);
  put_u32 (b + 68, 0);
  return MTCP_REPORT_FRAME_SIZE;
}

gsize
mtcp_write_feedback (guint8 * out, gsize out_size, const MtcpFeedback * fb)
{
  guint8 *b = out + MTCP_HEADER_SIZE;

  if (out_size < MTCP_FEEDBACK_FRAME_SIZE)
    return 0;
  mtcp_write_header (out, MTCP_FRAME_FEEDBACK, 0, MTCP_FEEDBACK_SIZE);
  put_u64 (b, fb->highest_in_order);
  put_u64 (b + 8, fb->buffered_bytes);
  put_u64 (b + 16, fb->buffered_time);
  put_u64 (b + 24, fb->echo_sink_time_us);
  put_u64 (b + 32, fb->echo_delay_us);
  put_u32 (b + 40, fb->window_bytes);
  put_u32 (b + 44, 0);
  put_u64 (b + 48, fb->playout_bytes);
  put_u64 (b + 56, fb->playout_time);
  return MTCP_FEEDBACK_FRAME_SIZE;
}

gsize
mtcp_write_want (guint8 * out, gsize out_size, const MtcpWant * want)
{
  guint8 *b = out + MTCP_HEADER_SIZE;
  guint n = MIN (want->n_paths, MTCP_MAX_PATHS), i;
  gsize body = MTCP_WANT_SIZE + 2 * n;

  if (out_size < MTCP_HEADER_SIZE + body)
    return 0;
  mtcp_write_header (out, MTCP_FRAME_WANT, 0, body);
  put_u16 (b, want->connections);
  b[2] = n;
  b[3] = 0;
  for (i = 0; i < n; i++)
    put_u16 (b + MTCP_WANT_SIZE + 2 * i, want->per_path[i]);
  return MTCP_HEADER_SIZE + body;
}

gsize
mtcp_write_challenge (guint8 * out, gsize out_size,
    const MtcpChallenge * challenge)
{
  guint8 *b = out + MTCP_HEADER_SIZE;

  if (out_size < MTCP_CHALLENGE_FRAME_SIZE)
    return 0;
  mtcp_write_header (out, MTCP_FRAME_CHALLENGE, 0, MTCP_CHALLENGE_BODY_SIZE);
  memcpy (b, challenge->nonce, MTCP_NONCE_SIZE);
  memcpy (b + MTCP_NONCE_SIZE, challenge->salt, MTCP_SALT_SIZE);
  put_u32 (b + MTCP_NONCE_SIZE + MTCP_SALT_SIZE, challenge->iterations);
  return MTCP_CHALLENGE_FRAME_SIZE;
}

gsize
mtcp_write_auth (guint8 * out, gsize out_size, const MtcpAuth * auth)
{
  if (out_size < MTCP_AUTH_FRAME_SIZE)
    return 0;
  mtcp_write_header (out, MTCP_FRAME_AUTH, 0, MTCP_AUTH_BODY_SIZE);
  memcpy (out + MTCP_HEADER_SIZE, auth->nonce, MTCP_NONCE_SIZE);
  memcpy (out + MTCP_HEADER_SIZE + MTCP_NONCE_SIZE, auth->mac, MTCP_MAC_SIZE);
  return MTCP_AUTH_FRAME_SIZE;
}

gsize
mtcp_write_proof (guint8 * out, gsize out_size,
    const guint8 mac[MTCP_MAC_SIZE])
{
  if (out_size < MTCP_PROOF_FRAME_SIZE)
    return 0;
  mtcp_write_header (out, MTCP_FRAME_PROOF, 0, MTCP_PROOF_BODY_SIZE);
  memcpy (out + MTCP_HEADER_SIZE, mac, MTCP_MAC_SIZE);
  return MTCP_PROOF_FRAME_SIZE;
}

gboolean
mtcp_bytes_equal_ct (const void *a, const void *b, gsize n)
{
  /* volatile: the compiler must not turn this into an early-exit compare */
  const volatile guint8 *pa = a, *pb = b;
  guint8 diff = 0;
  gsize i;

  for (i = 0; i < n; i++)
    diff |= pa[i] ^ pb[i];
  return diff == 0;
}

/* ---- reading ---- */

static gboolean
is_control_type (guint8 type)
{
  switch (type) {
    case MTCP_FRAME_HELLO:
    case MTCP_FRAME_WELCOME:
    case MTCP_FRAME_REFUSE:
    case MTCP_FRAME_CHALLENGE:
    case MTCP_FRAME_AUTH:
    case MTCP_FRAME_PROOF:
    case MTCP_FRAME_CAPS:
    case MTCP_FRAME_EOS:
    case MTCP_FRAME_SKIP:
    case MTCP_FRAME_REPORT:
    case MTCP_FRAME_FEEDBACK:
    case MTCP_FRAME_RETIRE:
    case MTCP_FRAME_WANT:
      return TRUE;
    default:
      return FALSE;
  }
}

/* the passphrase frames have a fixed small size: refused at the header */
static gboolean
is_handshake_type (guint8 type)
{
  return type == MTCP_FRAME_CHALLENGE || type == MTCP_FRAME_AUTH ||
      type == MTCP_FRAME_PROOF;
}

MtcpParseResult
mtcp_parse_header (const guint8 * data, gsize size, guint32 max_body,
    MtcpFrameHeader * hdr, gchar ** error)
{
  guint32 limit;

  if (size >= 1 && (data[0] & MTCP_SHORT_HEADER_BIT)) {
    if (size < MTCP_SHORT_HEADER_SIZE)
      return MTCP_PARSE_NEED_MORE;
    hdr->type = data[0] & ~MTCP_SHORT_HEADER_BIT;
    hdr->flags = 0;
    hdr->length = get_u16 (data + 1);
    hdr->head_size = MTCP_SHORT_HEADER_SIZE;
  } else {
    if (size < MTCP_HEADER_SIZE)
      return MTCP_PARSE_NEED_MORE;
    hdr->type = data[0];
    hdr->flags = data[1];
    hdr->length = get_u32 (data + 4);
    hdr->head_size = MTCP_HEADER_SIZE;
  }
  if (is_handshake_type (hdr->type))
    limit = MIN (max_body, MTCP_MAX_HANDSHAKE_BODY);
  else if (is_control_type (hdr->type))
    limit = MIN (max_body, MTCP_MAX_CONTROL_BODY);
  else
    limit = max_body;
  if (hdr->length > limit) {
    if (error)
      *error = g_strdup_printf ("%s frame (type 0x%02x) of %u bytes is over "
          "the limit of %u bytes", mtcp_frame_type_name (hdr->type),
          hdr->type, hdr->length, limit);
    GST_DEBUG ("oversized frame: type 0x%02x length %u limit %u", hdr->type,
        hdr->length, limit);
    return MTCP_PARSE_ERROR;
  }
  return MTCP_PARSE_OK;
}

static gboolean
check_size (const gchar * what, gsize size, gsize need, gchar ** error)
{
  if (size >= need)
    return TRUE;
  if (error)
    *error = g_strdup_printf ("%s body of %" G_GSIZE_FORMAT " bytes is too "
        "short (%" G_GSIZE_FORMAT " needed)", what, size, need);
  return FALSE;
}

static gboolean
check_magic_version (const gchar * what, const guint8 * body, gchar ** error)
{
  guint32 magic = get_u32 (body);
  guint16 version = get_u16 (body + 4);

  if (magic != MTCP_MAGIC) {
    if (error)
      *error = g_strdup_printf ("%s has wrong magic 0x%08x: not a multitcp "
          "peer (expected 0x%08x)", what, magic, MTCP_MAGIC);
    return FALSE;
  }
  if (version != MTCP_VERSION) {
    if (error)
      *error = g_strdup_printf ("%s has protocol version %u, this side speaks "
          "version %u", what, version, MTCP_VERSION);
    return FALSE;
  }
  return TRUE;
}

gboolean
mtcp_parse_hello (const guint8 * body, gsize size, MtcpHello * out,
    gchar ** error)
{
  if (!check_size ("HELLO", size, HELLO_BODY_MIN, error) ||
      !check_magic_version ("HELLO", body, error))
    return FALSE;
  out->magic = get_u32 (body);
  out->version = get_u16 (body + 4);
  out->flags = body[6];
  memcpy (out->session_id, body + 8, MTCP_SESSION_ID_SIZE);
  out->latency_ms = size >= HELLO_BODY ? get_u32 (body + 24) : 0;
  return get_stream_id_tail ("HELLO", body, size, HELLO_BODY, out->stream_id,
      error);
}

gboolean
mtcp_parse_welcome (const guint8 * body, gsize size, MtcpWelcome * out,
    gchar ** error)
{
  if (!check_size ("WELCOME", size, WELCOME_BODY, error) ||
      !check_magic_version ("WELCOME", body, error))
    return FALSE;
  memcpy (out->session_id, body + 8, MTCP_SESSION_ID_SIZE);
  out->connection_id = get_u32 (body + 24);
  out->max_frame = get_u32 (body + 28);
  out->path = out->n_paths = 0;
  out->max_connections = 0;
  if (!get_stream_id_tail ("WELCOME", body, size, WELCOME_BODY,
          out->stream_id, error))
    return FALSE;
  if (size >= WELCOME_BODY + 2) {
    gsize end = WELCOME_BODY + 2 + get_u16 (body + WELCOME_BODY);
    if (size >= end + 2) {
      out->path = body[end];
      out->n_paths = body[end + 1];
      if (out->n_paths > MTCP_MAX_PATHS || out->path >= MAX (out->n_paths,
              1)) {
        if (error)
          *error = g_strdup_printf ("WELCOME names path %u of %u (at most "
              "%d)", out->path, out->n_paths, MTCP_MAX_PATHS);
        return FALSE;
      }
      if (size >= end + 4)
        out->max_connections = get_u16 (body + end + 2);
    }
  }
  return TRUE;
}

gboolean
mtcp_parse_refuse (const guint8 * body, gsize size, MtcpRefuse * out,
    gchar ** error)
{
  gsize len;

  if (!check_size ("REFUSE", size, 2, error))
    return FALSE;
  len = size - 2;
  if (len > MTCP_MAX_REASON) {
    if (error)
      *error = g_strdup_printf ("REFUSE reason of %" G_GSIZE_FORMAT " bytes "
          "is over the limit of %d", len, MTCP_MAX_REASON);
    return FALSE;
  }
  if (!g_utf8_validate ((const gchar *) body + 2, len, NULL)) {
    if (error)
      *error = g_strdup ("REFUSE reason is not UTF-8");
    return FALSE;
  }
  out->code = get_u16 (body);
  memcpy (out->reason, body + 2, len);
  out->reason[len] = '\0';
  return TRUE;
}

gboolean
mtcp_parse_buffer (const guint8 * body, gsize size, MtcpBufferInfo * out,
    const guint8 ** payload, gchar ** error)
{
  if (!check_size ("BUFFER", size, MTCP_BUFFER_INFO_SIZE, error))
    return FALSE;
  out->seq = get_u64 (body);
  out->pts = get_u64 (body + 8);
  out->dts = get_u64 (body + 16);
  out->duration = get_u64 (body + 24);
  out->flags = get_u32 (body + 32);
  out->payload_size = get_u32 (body + 36);
  if ((guint64) out->payload_size + MTCP_BUFFER_INFO_SIZE != size) {
    if (error)
      *error = g_strdup_printf ("BUFFER says %u payload bytes but the frame "
          "holds %" G_GSIZE_FORMAT, out->payload_size,
          size - MTCP_BUFFER_INFO_SIZE);
    return FALSE;
  }
  *payload = body + MTCP_BUFFER_INFO_SIZE;
  return TRUE;
}

gboolean
mtcp_parse_buffer_delta (const guint8 * body, gsize size,
    MtcpBufferDeltaState * state, MtcpBufferInfo * out,
    const guint8 ** payload, gchar ** error)
{
  MtcpBufferDeltaState next = *state;
  gsize pos = 1;
  guint64 flags;
  guint8 mask;

  if (size >= 2 && body[0] == DELTA_SAME &&
      get_delta (body, size, &pos, state->next_seq, &out->seq)) {
    out->pts = (state->mask & DELTA_HAS_PTS) ? state->pts : MTCP_TIME_NONE;
    out->dts = (state->mask & DELTA_HAS_DTS) ? state->dts : MTCP_TIME_NONE;
    out->duration = (state->mask & DELTA_HAS_DURATION) ?
        state->duration : MTCP_TIME_NONE;
    out->flags = state->flags;
    out->payload_size = size - pos;
    state->next_seq = out->seq + 1;
    *payload = body + pos;
    return TRUE;
  }
  if (!check_size ("BUFFER_DELTA", size, 3, error))
    return FALSE;
  mask = body[0];
  out->pts = out->dts = out->duration = MTCP_TIME_NONE;
  /* SAME cut short lands here too */
  if (mask & ~DELTA_TIMES ||
      !get_delta (body, size, &pos, state->next_seq, &out->seq) ||
      ((mask & DELTA_HAS_PTS) &&
          !get_delta (body, size, &pos, state->pts, &out->pts)) ||
      ((mask & DELTA_HAS_DTS) &&
          !get_delta (body, size, &pos, state->dts, &out->dts)) ||
      ((mask & DELTA_HAS_DURATION) &&
          !get_delta (body, size, &pos, state->duration, &out->duration)) ||
      !get_varint (body, size, &pos, &flags) || flags > G_MAXUINT32) {
    if (error)
      *error = g_strdup_printf ("BUFFER_DELTA head is malformed (field mask "
          "0x%02x, %" G_GSIZE_FORMAT " bytes)", mask, size);
    return FALSE;
  }
  /* NONE is never a delta's result: it would read as "no time" */
  if (((mask & DELTA_HAS_PTS) && out->pts == MTCP_TIME_NONE) ||
      ((mask & DELTA_HAS_DTS) && out->dts == MTCP_TIME_NONE) ||
      ((mask & DELTA_HAS_DURATION) && out->duration == MTCP_TIME_NONE)) {
    if (error)
      *error = g_strdup ("BUFFER_DELTA codes a time of all ones");
    return FALSE;
  }
  out->flags = (guint32) flags;
  out->payload_size = size - pos;
  next.next_seq = out->seq + 1;
  next.mask = mask;
  next.flags = out->flags;
  if (mask & DELTA_HAS_PTS)
    next.pts = out->pts;
  if (mask & DELTA_HAS_DTS)
    next.dts = out->dts;
  if (mask & DELTA_HAS_DURATION)
    next.duration = out->duration;
  *state = next;
  *payload = body + pos;
  return TRUE;
}

/* GStreamer 1.22's gst_caps_from_string leaks whatever it parsed so far
 * when anything inside a list, array or range fails ("a=(int){ 1, x }",
 * 208 bytes; a 64 kB text, 787 kB), also inside nested caps or structure
 * values (the fuzzer's find: "c=(GstCaps)\"x/y, d=(int)<\""); its parsers of
 * single values do not. A sink could make a receiver leak at will, so CAPS
 * text is checked first: multitcpsrc takes fixed caps only, so no list or
 * range and no nested caps; an array's elements are parsed as GStreamer
 * does and each must read as its type; a type cast names a type with a
 * single-value parser. */

#define CAPS_IS_SIMPLE_CHAR(c) (g_ascii_isalnum (c) || (c) == '_' || \
    (c) == '-' || (c) == '+' || (c) == '/' || (c) == ':' || (c) == '.')

/* The type a cast names, if its values are single tokens GStreamer reads
 * without leaking (numbers, strings, fractions, buffers, enums, flag sets,
 * dates, type names); 0 for anything else (caps, structures, tag lists,
 * segments, samples, arrays and lists, unknown names). As GStreamer, an
 * abbreviation, then a registered name, then a dynamic type's plugin. */
static GType
caps_cast_type (const gchar * name, gsize len)
{
  /* GStreamer's abbreviations: a fundamental type, or a type's getter */
  static const struct
  {
    const gchar *abbr;
    GType fundamental;
    GType (*get_type) (void);
  } abbrs[] = {
    {"int", G_TYPE_INT}, {"i", G_TYPE_INT}, {"uint", G_TYPE_UINT},
    {"u", G_TYPE_UINT}, {"float", G_TYPE_FLOAT}, {"f", G_TYPE_FLOAT},
    {"double", G_TYPE_DOUBLE}, {"d", G_TYPE_DOUBLE},
    {"boolean", G_TYPE_BOOLEAN}, {"bool", G_TYPE_BOOLEAN},
    {"b", G_TYPE_BOOLEAN}, {"string", G_TYPE_STRING},
    {"str", G_TYPE_STRING}, {"s", G_TYPE_STRING},
    {"buffer", 0, gst_buffer_get_type}, {"fraction", 0, gst_fraction_get_type},
    {"date", 0, g_date_get_type}, {"datetime", 0, gst_date_time_get_type},
    {"bitmask", 0, gst_bitmask_get_type}, {"flagset", 0, gst_flagset_get_type},
    {"type", 0, g_gtype_get_type}
  };
  gchar buf[64];
  GType type, fundamental;
  guint i;

  if (len == 0 || len >= sizeof (buf))
    return 0;
  memcpy (buf, name, len);
  buf[len] = '\0';
  for (i = 0; i < G_N_ELEMENTS (abbrs); i++)
    if (strcmp (buf, abbrs[i].abbr) == 0)
      return abbrs[i].get_type ? abbrs[i].get_type () : abbrs[i].fundamental;
  type = g_type_from_name (buf);
  if (type == 0)
    type = gst_dynamic_type_factory_load (buf);
  if (type == 0 || G_TYPE_IS_ABSTRACT (type))
    return 0;
  fundamental = G_TYPE_FUNDAMENTAL (type);
  switch (fundamental) {
    case G_TYPE_ENUM:
    case G_TYPE_FLAGS:
    case G_TYPE_INT:
    case G_TYPE_UINT:
    case G_TYPE_INT64:
    case G_TYPE_UINT64:
    case G_TYPE_LONG:
    case G_TYPE_ULONG:
    case G_TYPE_FLOAT:
    case G_TYPE_DOUBLE:
    case G_TYPE_BOOLEAN:
    case G_TYPE_STRING:
      return type;
    default:
      break;
  }
  if (g_type_is_a (type, GST_TYPE_FLAG_SET) || type == GST_TYPE_FRACTION ||
      type == GST_TYPE_BUFFER || type == GST_TYPE_BITMASK ||
      type == GST_TYPE_DATE_TIME || type == G_TYPE_DATE ||
      type == G_TYPE_GTYPE)
    return type;
  return 0;
}

static gsize
caps_skip_space (const gchar * text, gsize len, gsize i)
{
  while (i < len && g_ascii_isspace (text[i]))
    i++;
  return i;
}

/* A cast at @text[*pos] ('('): its type in @type, *pos after the ')'. */
static gboolean
caps_read_cast (const gchar * text, gsize len, gsize * pos, GType * type)
{
  gsize i = caps_skip_space (text, len, *pos + 1), start = i;

  while (i < len && CAPS_IS_SIMPLE_CHAR (text[i]))
    i++;
  *type = caps_cast_type (text + start, i - start);
  i = caps_skip_space (text, len, i);
  if (*type == 0 || i == len || text[i] != ')')
    return FALSE;
  *pos = i + 1;
  return TRUE;
}

/* A quoted string from @text[*pos] (its opening quote): *pos after the
 * closing one. */
static gboolean
caps_skip_quoted (const gchar * text, gsize len, gsize * pos)
{
  gsize i;

  for (i = *pos + 1; i < len && text[i] != '"'; i++)
    if (text[i] == '\\' && ++i == len)
      return FALSE;
  if (i == len)
    return FALSE;
  *pos = i + 1;
  return TRUE;
}

/* Every run of digits in @token fits a gint: GStreamer reads a fraction's
 * parts with sscanf's %d, which wraps, then asserts they are in range. */
static gboolean
caps_digits_fit_int (const gchar * token)
{
  while (*token) {
    const gchar *start = token;
    while (g_ascii_isdigit (*token))
      token++;
    if (token - start > 10 || (token - start == 10 &&
            g_ascii_strtoull (start, NULL, 10) > G_MAXINT))
      return FALSE;
    if (token == start)
      token++;
  }
  return TRUE;
}

/* What GStreamer reads but cannot write back (a critical wherever the caps
 * are printed or relayed): an enum's number that is no value of it, flags
 * with bits it has not, a NULL string. */
static gboolean
caps_value_writable (const GValue * value)
{
  GType fundamental = G_TYPE_FUNDAMENTAL (G_VALUE_TYPE (value));
  gboolean ok = TRUE;

  if (fundamental == G_TYPE_STRING) {
    ok = g_value_get_string (value) != NULL;
  } else if (fundamental == G_TYPE_ENUM) {
    GEnumClass *klass = g_type_class_ref (G_VALUE_TYPE (value));
    ok = g_enum_get_value (klass, g_value_get_enum (value)) != NULL;
    g_type_class_unref (klass);
  } else if (fundamental == G_TYPE_FLAGS) {
    GFlagsClass *klass = g_type_class_ref (G_VALUE_TYPE (value));
    ok = (g_value_get_flags (value) & ~klass->mask) == 0;
    g_type_class_unref (klass);
  }
  return ok;
}

/* A value that is not a list, array or range, from @text[*pos] (spaces
 * before it skipped), read as GStreamer's _priv_gst_value_parse_value
 * does: a quoted string or a run of simple characters; it must read as
 * @type (0: none given: as a string, the type GStreamer falls back on) and
 * be one GStreamer can write back. A buffer's hex is checked here:
 * GStreamer 1.22 unmaps a buffer it has just freed when the text has a
 * character that is not hex. */
static gboolean
caps_value_safe (const gchar * text, gsize len, gsize * pos, GType type)
{
  gsize i = caps_skip_space (text, len, *pos), start = i;
  GValue value = G_VALUE_INIT;
  gchar *token;
  gboolean ok;

  if (i < len && text[i] == '"') {
    if (!caps_skip_quoted (text, len, &i))
      return FALSE;
  } else {
    while (i < len && CAPS_IS_SIMPLE_CHAR (text[i]))
      i++;
    if (i == start)
      return FALSE;             /* nothing, or a nested list, array, range */
  }
  *pos = i;
  if (type == GST_TYPE_BUFFER) {
    if ((i - start) % 2)
      return FALSE;
    for (; start < i; start++)
      if (!g_ascii_isxdigit (text[start]))
        return FALSE;
    return TRUE;
  }
  token = g_strndup (text + start, i - start);
  /* a value without a type may be read as a fraction */
  ok = (type != 0 && type != GST_TYPE_FRACTION) || caps_digits_fit_int (token);
  if (ok) {
    g_value_init (&value, type ? type : G_TYPE_STRING);
    ok = gst_value_deserialize (&value, token) && caps_value_writable (&value);
    g_value_unset (&value);
  }
  g_free (token);
  return ok;
}

/* An array from @text[*pos] ('<'), parsed as GStreamer's
 * _priv_gst_value_parse_any_list does, each element as caps_value_safe
 * reads it. Its elements have one type, given (the array's cast or their
 * own): GStreamer writes an array with its first element's type only, and
 * what it wrote of mixed ones would not read back. */
static gboolean
caps_array_safe (const gchar * text, gsize len, gsize * pos, GType type)
{
  gsize i = caps_skip_space (text, len, *pos + 1);
  GType first = 0;

  while (i < len && text[i] != '>') {
    GType element = type;

    if (text[i] == ',') {
      i = caps_skip_space (text, len, i + 1);
      if (i < len && text[i] == ',')
        return FALSE;
      continue;
    }
    if (text[i] == '(' && !caps_read_cast (text, len, &i, &element))
      return FALSE;
    if (element == 0 || (first != 0 && element != first))
      return FALSE;
    first = element;
    if (!caps_value_safe (text, len, &i, element))
      return FALSE;
    i = caps_skip_space (text, len, i);
    if (i < len && text[i] != ',' && text[i] != '>')
      return FALSE;
  }
  if (i == len)
    return FALSE;
  *pos = i + 1;
  return TRUE;
}

/* Names GStreamer interns for good (structure, field and feature names
 * become GQuarks): what CAPS text may add, over the process's life. A peer
 * sending caps with new names again and again would grow it without end. */
#define CAPS_NEW_NAMES_MAX_BYTES (256 * 1024)
G_LOCK_DEFINE_STATIC (caps_names);
static gsize caps_new_name_bytes;

/* Adds to *@bytes what the name @text[@start, @end) would cost if new. */
static void
caps_note_name (const gchar * text, gsize start, gsize end, gsize * bytes)
{
  gchar *name;

  while (start < end && g_ascii_isspace (text[start]))
    start++;
  while (end > start && g_ascii_isspace (text[end - 1]))
    end--;
  if (start == end)
    return;
  name = g_strndup (text + start, end - start);
  if (g_quark_try_string (name) == 0)
    *bytes += end - start + 1;
  g_free (name);
}

/* The whole text: a structure's name starts with a letter; a value (after
 * a cast or not) and an array are checked as above; features after a
 * structure's name are a list of names; the new names fit what is left of
 * the process's allowance. The rest is left to GStreamer, whose parsers fail
 * there cleanly. */
static gboolean
caps_text_safe (const gchar * text, gsize len)
{
  gchar prev = ';';             /* the last character outside spaces */
  gsize i = 0, new_names = 0;
  gboolean ok;

  while (i < len) {
    gchar c = text[i];
    GType cast = 0;

    if (g_ascii_isspace (c)) {
      i++;
      continue;
    }
    /* GStreamer asserts a structure's name starts with a letter (a
     * critical for every such CAPS) */
    if (prev == ';' && !g_ascii_isalpha (c))
      return FALSE;
    if ((prev == ';' || prev == ',') && CAPS_IS_SIMPLE_CHAR (c)) {
      gsize start = i;
      while (i < len && CAPS_IS_SIMPLE_CHAR (text[i]))
        i++;
      caps_note_name (text, start, i, &new_names);
      prev = text[i - 1];
      continue;
    }
    switch (c) {
      case '"':
        if (prev == '=') {
          if (!caps_value_safe (text, len, &i, 0))
            return FALSE;
        } else if (!caps_skip_quoted (text, len, &i)) {
          return FALSE;
        }
        break;
      case '(':
        /* after a structure's name: its caps features, not a cast */
        if (!strchr ("=,;<", prev)) {
          gsize start = ++i;
          for (; i < len && text[i] != ')'; i++) {
            if (strchr ("\"(<{[", text[i]))
              return FALSE;
            if (text[i] == ',') {
              caps_note_name (text, start, i, &new_names);
              start = i + 1;
            }
          }
          if (i == len)
            return FALSE;
          caps_note_name (text, start, i, &new_names);
          i++;
          break;
        }
        if (!caps_read_cast (text, len, &i, &cast))
          return FALSE;
        i = caps_skip_space (text, len, i);
        if (i < len && text[i] == '<') {
          if (!caps_array_safe (text, len, &i, cast))
            return FALSE;
        } else if (!caps_value_safe (text, len, &i, cast)) {
          return FALSE;
        }
        c = '>';                /* a value */
        break;
      case '<':
        if (!caps_array_safe (text, len, &i, 0))
          return FALSE;
        c = '>';
        break;
      case '{':                /* a list or a range: not fixed caps */
      case '[':
      case '}':
      case ']':
      case '>':
      case ')':
        return FALSE;
      default:
        if (prev == '=') {      /* a value without a type */
          if (!caps_value_safe (text, len, &i, 0))
            return FALSE;
          c = '>';
        } else {
          i++;
        }
        break;
    }
    prev = c;
  }
  G_LOCK (caps_names);
  ok = caps_new_name_bytes + new_names <= CAPS_NEW_NAMES_MAX_BYTES;
  if (ok)
    caps_new_name_bytes += new_names;
  G_UNLOCK (caps_names);
  return ok;
}

gboolean
mtcp_parse_caps (const guint8 * body, gsize size, guint64 * seq,
    gchar ** caps_str, gchar ** error)
{
  gsize len;

  if (!check_size ("CAPS", size, 8, error))
    return FALSE;
  len = size - 8;
  if (len > MTCP_MAX_CONTROL_BODY - 8 ||
      memchr (body + 8, '\0', len) != NULL ||
      !g_utf8_validate ((const gchar *) body + 8, len, NULL)) {
    if (error)
      *error = g_strdup ("CAPS text is too long, has a NUL or is not UTF-8");
    return FALSE;
  }
  if (!caps_text_safe ((const gchar *) body + 8, len)) {
    if (error)
      *error = g_strdup ("CAPS text is not fixed caps a receiver reads "
          "safely (a list, a range, nested caps, an array that does not "
          "parse, a type with no single-value parser)");
    return FALSE;
  }
  *seq = get_u64 (body);
  *caps_str = g_strndup ((const gchar *) body + 8, len);
  return TRUE;
}

gboolean
mtcp_parse_eos (const guint8 * body, gsize size, guint64 * seq,
    gchar ** error)
{
  if (!check_size ("EOS", size, 8, error))
    return FALSE;
  *seq = get_u64 (body);
  return TRUE;
}

gboolean
mtcp_parse_skip (const guint8 * body, gsize size, MtcpSkip * out,
    gchar ** error)
{
  if (!check_size ("SKIP", size, SKIP_BODY, error))
    return FALSE;
  out->first_seq = get_u64 (body);
  out->end_seq = get_u64 (body + 8);
  if (out->first_seq >= out->end_seq) {
    if (error)
      *error = g_strdup_printf ("SKIP range %" G_GUINT64_FORMAT "..%"
          G_GUINT64_FORMAT " is empty", out->first_seq, out->end_seq);
    return FALSE;
  }
  return TRUE;
}

gboolean
mtcp_parse_report (const guint8 * body, gsize size, MtcpReport * r,
    gchar ** error)
{
  if (!check_size ("REPORT", size, MTCP_REPORT_SIZE_MIN, error))
    return FALSE;
  r->sink_time_us = get_u64 (body);
  r->stream_bitrate = get_u64 (body + 8);
  r->backlog_bytes = get_u64 (body + 16);
  r->rtt_us = get_u32 (body + 24);
  r->rttvar_us = get_u32 (body + 28);
  r->snd_cwnd = get_u32 (body + 32);
  r->snd_mss = get_u32 (body + 36);
  r->total_retrans = get_u32 (body + 40);
  r->lost = get_u32 (body + 44);
  r->bytes_acked = get_u64 (body + 48);
  r->unsent_bytes = get_u64 (body + 56);
  r->flags = size >= MTCP_REPORT_SIZE ? get_u32 (body + 64) : 0;
  return TRUE;
}

gboolean
mtcp_parse_feedback (const guint8 * body, gsize size, MtcpFeedback * fb,
    gchar ** error)
{
  if (!check_size ("FEEDBACK", size, MTCP_FEEDBACK_SIZE_MIN, error))
    return FALSE;
  fb->highest_in_order = get_u64 (body);
  fb->buffered_bytes = get_u64 (body + 8);
  fb->buffered_time = get_u64 (body + 16);
  fb->echo_sink_time_us = get_u64 (body + 24);
  fb->echo_delay_us = get_u64 (body + 32);
  fb->window_bytes = get_u32 (body + 40);
  fb->reserved = 0;
  fb->playout_known = size >= MTCP_FEEDBACK_SIZE;
  fb->playout_bytes = fb->playout_known ? get_u64 (body + 48) : 0;
  fb->playout_time = fb->playout_known ? get_u64 (body + 56) : 0;
  return TRUE;
}

gboolean
mtcp_parse_want (const guint8 * body, gsize size, MtcpWant * out,
    gchar ** error)
{
  guint i;

  memset (out, 0, sizeof (*out));
  if (!check_size ("WANT", size, MTCP_WANT_SIZE, error))
    return FALSE;
  out->connections = get_u16 (body);
  out->n_paths = body[2];
  if (out->n_paths > MTCP_MAX_PATHS ||
      size < MTCP_WANT_SIZE + 2 * (gsize) out->n_paths) {
    if (error)
      *error = g_strdup_printf ("WANT for %u paths (at most %d) in %"
          G_GSIZE_FORMAT " bytes", out->n_paths, MTCP_MAX_PATHS, size);
    out->n_paths = 0;
    return FALSE;
  }
  for (i = 0; i < out->n_paths; i++)
    out->per_path[i] = get_u16 (body + MTCP_WANT_SIZE + 2 * i);
  return TRUE;
}

static gboolean
check_exact_size (const gchar * what, gsize size, gsize need, gchar ** error)
{
  if (size == need)
    return TRUE;
  if (error)
    *error = g_strdup_printf ("%s body of %" G_GSIZE_FORMAT " bytes, %"
        G_GSIZE_FORMAT " expected", what, size, need);
  return FALSE;
}

gboolean
mtcp_parse_challenge (const guint8 * body, gsize size, MtcpChallenge * out,
    gchar ** error)
{
  if (!check_exact_size ("CHALLENGE", size, MTCP_CHALLENGE_BODY_SIZE, error))
    return FALSE;
  memcpy (out->nonce, body, MTCP_NONCE_SIZE);
  memcpy (out->salt, body + MTCP_NONCE_SIZE, MTCP_SALT_SIZE);
  out->iterations = get_u32 (body + MTCP_NONCE_SIZE + MTCP_SALT_SIZE);
  return TRUE;
}

gboolean
mtcp_parse_auth (const guint8 * body, gsize size, MtcpAuth * out,
    gchar ** error)
{
  if (!check_exact_size ("AUTH", size, MTCP_AUTH_BODY_SIZE, error))
    return FALSE;
  memcpy (out->nonce, body, MTCP_NONCE_SIZE);
  memcpy (out->mac, body + MTCP_NONCE_SIZE, MTCP_MAC_SIZE);
  return TRUE;
}

gboolean
mtcp_parse_proof (const guint8 * body, gsize size,
    guint8 mac[MTCP_MAC_SIZE], gchar ** error)
{
  if (!check_exact_size ("PROOF", size, MTCP_PROOF_BODY_SIZE, error))
    return FALSE;
  memcpy (mac, body, MTCP_MAC_SIZE);
  return TRUE;
}

/* ---- incremental reader ---- */

#define READ_CHUNK (64 * 1024)
/* an allocation above this, more than twice what the next read needs, is
 * given back: what a large frame grew does not stay for the connection's
 * life */
#define SHRINK_ABOVE (2 * READ_CHUNK)

struct _MtcpFrameReader {
  guint32 max_body;
  guint8 *data;
  gsize alloc;
  gsize start;                  /* first unconsumed byte */
  gsize end;                    /* one past the last received byte */
};

MtcpFrameReader *
mtcp_frame_reader_new (guint32 max_body)
{
  MtcpFrameReader *r = g_new0 (MtcpFrameReader, 1);

  mtcp_protocol_debug_init ();
  r->max_body = max_body;
  /* allocated on the first read: an idle connection costs nothing here */
  return r;
}

void
mtcp_frame_reader_free (MtcpFrameReader * r)
{
  if (r == NULL)
    return;
  g_free (r->data);
  g_free (r);
}

void
mtcp_frame_reader_set_max_body (MtcpFrameReader * r, guint32 max_body)
{
  r->max_body = max_body;
}

gsize
mtcp_frame_reader_allocated (MtcpFrameReader * r)
{
  return r->alloc;
}

gsize
mtcp_frame_reader_pending (MtcpFrameReader * r)
{
  return r->end - r->start;
}

guint8 *
mtcp_frame_reader_space (MtcpFrameReader * r, gsize * size)
{
  gsize pending = r->end - r->start;
  /* one read at a time, never more than a whole frame can be */
  gsize chunk = MIN ((gsize) READ_CHUNK,
      MTCP_HEADER_SIZE + (gsize) r->max_body);
  gsize want = chunk;
  MtcpFrameHeader hdr;

  /* a frame whose header is in: room for more of it, but only as its
   * bytes come (at most doubling what is held), never at once for a length
   * that is only claimed */
  if (pending > 0 && mtcp_parse_header (r->data + r->start, pending,
          G_MAXUINT32, &hdr, NULL) == MTCP_PARSE_OK) {
    gsize frame = hdr.head_size + (gsize) hdr.length;
    if (hdr.length <= r->max_body && frame > pending)
      want = MAX (want, MIN (frame - pending, pending));
  }
  if (r->alloc - r->end < want || (r->alloc > SHRINK_ABOVE &&
          pending + want <= r->alloc / 2)) {
    /* slide the unconsumed bytes to the front, then grow if still short or
     * shrink if far too large */
    if (r->start > 0) {
      memmove (r->data, r->data + r->start, pending);
      r->start = 0;
      r->end = pending;
    }
    if (r->alloc - r->end < want || (r->alloc > SHRINK_ABOVE &&
            r->end + want <= r->alloc / 2)) {
      r->alloc = r->end + want;
      r->data = g_realloc (r->data, r->alloc);
    }
  }
  *size = r->alloc - r->end;
  return r->data + r->end;
}

void
mtcp_frame_reader_commit (MtcpFrameReader * r, gsize n_read)
{
  g_return_if_fail (r->end + n_read <= r->alloc);
  r->end += n_read;
}

MtcpParseResult
mtcp_frame_reader_next (MtcpFrameReader * r, MtcpFrameHeader * hdr,
    const guint8 ** body, gchar ** error)
{
  gsize pending = r->end - r->start;
  MtcpParseResult res;

  if (pending == 0)
    return MTCP_PARSE_NEED_MORE;        /* data may not be allocated yet */
  res = mtcp_parse_header (r->data + r->start, pending, r->max_body, hdr,
      error);
  if (res != MTCP_PARSE_OK)
    return res;
  if (pending < hdr->head_size + (gsize) hdr->length)
    return MTCP_PARSE_NEED_MORE;
  *body = r->data + r->start + hdr->head_size;
  r->start += hdr->head_size + hdr->length;
  if (r->start == r->end)
    r->start = r->end = 0;      /* the body stays valid: nothing overwrites it yet */
  return MTCP_PARSE_OK;
}

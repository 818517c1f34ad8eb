/* multitcp
 * Copyright (C) 2026 the multitcp authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "mtcpconnectionprivate.h"
#include "mtcptcpinfo.h"

#include <string.h>

GST_DEBUG_CATEGORY_STATIC (mtcp_connection_debug);
#define GST_CAT_DEFAULT mtcp_connection_debug

static void
mtcp_connection_debug_init (void)
{
  static gsize done = 0;
  if (g_once_init_enter (&done)) {
    GST_DEBUG_CATEGORY_INIT (mtcp_connection_debug, "multitcpconnection", 0,
        "multitcp connection I/O");
    g_once_init_leave (&done, 1);
  }
}

/* ---- frames ---- */

MtcpOutFrame *
mtcp_out_frame_new (void)
{
  MtcpOutFrame *frame = g_new0 (MtcpOutFrame, 1);
  frame->head = frame->head_inline;
  return frame;
}

guint8 *
mtcp_out_frame_alloc_head (MtcpOutFrame * frame, gsize size)
{
  if (frame->head != frame->head_inline)
    g_free (frame->head);
  frame->head = size <= sizeof (frame->head_inline) ?
      frame->head_inline : g_malloc (size);
  return frame->head;
}

gsize
mtcp_out_frame_size (const MtcpOutFrame * frame)
{
  return frame->head_size +
      (frame->payload ? gst_buffer_get_size (frame->payload) : 0);
}

void
mtcp_out_frame_free (MtcpOutFrame * frame)
{
  if (frame == NULL)
    return;
  if (frame->head != frame->head_inline)
    g_free (frame->head);
  gst_clear_buffer (&frame->payload);
  g_free (frame);
}

MtcpOutFrame *
mtcp_out_frame_new_refuse (guint16 code, const gchar * reason)
{
  MtcpOutFrame *frame = mtcp_out_frame_new ();
  gsize cap = MTCP_HEADER_SIZE + 2 + MTCP_MAX_REASON;
  guint8 *head = mtcp_out_frame_alloc_head (frame, cap);

  frame->type = MTCP_FRAME_REFUSE;
  frame->head_size = mtcp_write_refuse (head, cap, code, reason);
  return frame;
}

MtcpOutFrame *
mtcp_out_frame_new_welcome (const MtcpWelcome * welcome)
{
  MtcpOutFrame *frame = mtcp_out_frame_new ();
  frame->type = MTCP_FRAME_WELCOME;
  /* a stream id makes it longer than the inline head */
  frame->head_size = mtcp_write_welcome (mtcp_out_frame_alloc_head (frame,
          MTCP_WELCOME_FRAME_MAX), MTCP_WELCOME_FRAME_MAX, welcome);
  return frame;
}

MtcpOutFrame *
mtcp_out_frame_new_report (const MtcpReport * report)
{
  MtcpOutFrame *frame = mtcp_out_frame_new ();
  frame->type = MTCP_FRAME_REPORT;
  frame->head_size = mtcp_write_report (frame->head,
      sizeof (frame->head_inline), report);
  return frame;
}

MtcpOutFrame *
mtcp_out_frame_new_feedback (const MtcpFeedback * fb)
{
  MtcpOutFrame *frame = mtcp_out_frame_new ();
  frame->type = MTCP_FRAME_FEEDBACK;
  frame->head_size = mtcp_write_feedback (frame->head,
      sizeof (frame->head_inline), fb);
  return frame;
}

MtcpOutFrame *
mtcp_out_frame_new_padding (gsize size)
{
  static const guint8 zeros[MTCP_PADDING_MAX];
  MtcpOutFrame *frame = mtcp_out_frame_new ();
  gsize body;

  size = CLAMP (size, MTCP_HEADER_SIZE, MTCP_PADDING_MAX);
  body = size - MTCP_HEADER_SIZE;
  frame->type = MTCP_FRAME_PADDING;
  frame->head_size = mtcp_write_header (frame->head, MTCP_FRAME_PADDING, 0, body);
  if (body > 0)
    frame->payload = gst_buffer_new_wrapped_full (GST_MEMORY_FLAG_READONLY,
        (gpointer) zeros, sizeof (zeros), 0, body, NULL, NULL);
  return frame;
}

static const struct {
  GstBufferFlags gst;
  guint32 wire;
} flag_map[] = {
  {GST_BUFFER_FLAG_DELTA_UNIT, MTCP_BUF_DELTA},
  {GST_BUFFER_FLAG_HEADER, MTCP_BUF_HEADER},
  {GST_BUFFER_FLAG_DISCONT, MTCP_BUF_DISCONT},
  {GST_BUFFER_FLAG_GAP, MTCP_BUF_GAP},
  {GST_BUFFER_FLAG_DROPPABLE, MTCP_BUF_DROPPABLE},
  {GST_BUFFER_FLAG_MARKER, MTCP_BUF_MARKER},
  {GST_BUFFER_FLAG_RESYNC, MTCP_BUF_RESYNC},
};

guint32
mtcp_buffer_flags_to_wire (GstBufferFlags flags)
{
  guint32 wire = 0;
  guint i;
  for (i = 0; i < G_N_ELEMENTS (flag_map); i++)
    if (flags & flag_map[i].gst)
      wire |= flag_map[i].wire;
  return wire;
}

GstBufferFlags
mtcp_buffer_flags_from_wire (guint32 wire)
{
  GstBufferFlags flags = 0;
  guint i;
  for (i = 0; i < G_N_ELEMENTS (flag_map); i++)
    if (wire & flag_map[i].wire)
      flags |= flag_map[i].gst;
  return flags;
}

/* Most bytes one dispatch reads: a fast peer must not keep the I/O thread
 * reading while its timers (feedback, idle checks) wait. */
#define READ_PER_DISPATCH (256 * 1024)

/* What a TLS handshake in flight knows of its connection. */
struct _MtcpTlsPending {
  MtcpConnection *conn;         /* NULL once the connection is gone */
  gint *orphans;                /* the owner's count of such handshakes */
  GCancellable *cancellable;    /* cancelled when the connection is freed */
  GSocket *socket;              /* the freed connection's, shut down: closed
                                 * once GLib's worker is done with it */
};

/* ---- the connection's GSource: one fd, condition changed in place ---- */

typedef struct {
  GSource source;
  MtcpConnection *conn;
} MtcpConnectionSource;

static gboolean
connection_source_dispatch (GSource * source, GSourceFunc callback,
    gpointer user_data)
{
  MtcpConnectionSource *cs = (MtcpConnectionSource *) source;
  MtcpConnection *conn = cs->conn;
  GIOCondition cond = g_source_query_unix_fd (source, conn->fd_tag);

  if (conn->more_input) {
    conn->more_input = FALSE;
    g_source_set_ready_time (source, -1);
    cond |= G_IO_IN;
  }
  if (callback == NULL || cond == 0)
    return G_SOURCE_CONTINUE;
  ((MtcpConnectionFunc) (void (*)(void)) callback) (conn, cond, user_data);
  /* the callback detaches the source itself when it closes the connection */
  return G_SOURCE_CONTINUE;
}

static GSourceFuncs connection_source_funcs = {
  NULL, NULL, connection_source_dispatch, NULL, NULL, NULL
};

MtcpConnection *
mtcp_connection_new (GSocket * socket, guint32 max_body)
{
  MtcpConnection *conn = g_new0 (MtcpConnection, 1);
  GSocketAddress *addr;

  mtcp_connection_debug_init ();
  conn->socket = g_object_ref (socket);
  conn->reader = mtcp_frame_reader_new (max_body);
  g_queue_init (&conn->out);
  conn->waiting = g_sequence_new (NULL);
  conn->held_seqs = g_hash_table_new_full (g_int64_hash, g_int64_equal,
      NULL, g_free);
  conn->created_us = g_get_monotonic_time ();
  {
    MtcpTcpInfo info;
    /* counts a client's SYN; 0 where the socket is not TCP */
    if (mtcp_tcp_info_read (socket, &info))
      conn->tcp_acked_base = info.bytes_acked;
  }

  /* not while a connect is in flight: getpeername () would take its
   * error (a refusal), which g_socket_check_connect_result () then misses */
  addr = g_socket_is_connected (socket) ?
      g_socket_get_remote_address (socket, NULL) : NULL;
  if (addr && G_IS_INET_SOCKET_ADDRESS (addr)) {
    GInetSocketAddress *ia = G_INET_SOCKET_ADDRESS (addr);
    gchar *host = g_inet_address_to_string (g_inet_socket_address_get_address
        (ia));
    conn->peer = g_strdup_printf ("%s:%u", host,
        g_inet_socket_address_get_port (ia));
    g_free (host);
  } else {
    conn->peer = g_strdup ("unknown");
  }
  g_clear_object (&addr);
  return conn;
}

GSocket *
mtcp_connection_get_socket (MtcpConnection * conn)
{
  return conn->socket;
}

const gchar *
mtcp_connection_get_peer (MtcpConnection * conn)
{
  return conn->peer;
}

void
mtcp_connection_set_peer (MtcpConnection * conn, const gchar * peer)
{
  g_free (conn->peer);
  conn->peer = g_strdup (peer);
}

gpointer
mtcp_connection_get_user_data (MtcpConnection * conn)
{
  return conn->user_data;
}

void
mtcp_connection_set_user_data (MtcpConnection * conn, gpointer data)
{
  conn->user_data = data;
}

gint64
mtcp_connection_get_created_us (MtcpConnection * conn)
{
  return conn->created_us;
}

gboolean
mtcp_connection_is_tls (MtcpConnection * conn)
{
  return conn->tls != NULL;
}

void
mtcp_connection_set_tls_orphans (MtcpConnection * conn, gint * orphans)
{
  conn->tls_orphans = orphans;
}

void
mtcp_connection_set_keep_sent (MtcpConnection * conn, gboolean keep)
{
  conn->keep_sent = keep;
}

void
mtcp_connection_set_heads (MtcpConnection * conn, gboolean buffer_delta,
    gboolean compact)
{
  conn->buffer_delta = buffer_delta;
  conn->compact = buffer_delta && compact;
}

const gchar *
mtcp_connection_heads_name (MtcpConnection * conn)
{
  return conn->compact ? "compact" : conn->buffer_delta ? "delta" : "plain";
}

void
mtcp_connection_set_delay_acks (MtcpConnection * conn, gboolean delay)
{
  conn->delay_acks = delay;
}

MtcpBufferDeltaState *
mtcp_connection_delta_in (MtcpConnection * conn)
{
  return &conn->delta_in;
}

MtcpParseResult
mtcp_connection_next_frame (MtcpConnection * conn, MtcpFrameHeader * hdr,
    const guint8 ** body, gchar ** err)
{
  MtcpParseResult r = mtcp_frame_reader_next (conn->reader, hdr, body, err);

  if (r == MTCP_PARSE_OK)
    conn->frames_received++;
  return r;
}

void
mtcp_connection_set_max_body (MtcpConnection * conn, guint32 max_body)
{
  mtcp_frame_reader_set_max_body (conn->reader, max_body);
}

guint64
mtcp_connection_bytes_sent (MtcpConnection * conn)
{
  return conn->bytes_sent;
}

guint64
mtcp_connection_bytes_received (MtcpConnection * conn)
{
  return conn->bytes_received;
}

guint64
mtcp_connection_frames_sent (MtcpConnection * conn)
{
  return conn->frames_sent;
}

guint64
mtcp_connection_frames_received (MtcpConnection * conn)
{
  return conn->frames_received;
}

gsize
mtcp_connection_unsent_bytes (MtcpConnection * conn)
{
  return conn->out_bytes;
}

guint
mtcp_connection_unsent_frames (MtcpConnection * conn)
{
  return g_queue_get_length (&conn->out);
}

void
mtcp_connection_attach (MtcpConnection * conn, GMainContext * context,
    MtcpConnectionFunc func, gpointer user_data)
{
  MtcpConnectionSource *cs;

  g_return_if_fail (conn->source == NULL);
  g_socket_set_blocking (conn->socket, FALSE);
  conn->source = g_source_new (&connection_source_funcs,
      sizeof (MtcpConnectionSource));
  cs = (MtcpConnectionSource *) conn->source;
  cs->conn = conn;
  conn->fd_tag = g_source_add_unix_fd (conn->source,
      g_socket_get_fd (conn->socket), conn->tls_handshaking ? 0 :
      G_IO_IN | G_IO_ERR | G_IO_HUP);
  conn->want_write = FALSE;
  conn->func = func;
  conn->func_data = user_data;
  g_source_set_callback (conn->source, (GSourceFunc) (void (*)(void)) func,
      user_data, NULL);
  /* never re-entered (nothing here iterates the context), so GLib need not
   * take the fd out of the poll set while it dispatches */
  g_source_set_can_recurse (conn->source, TRUE);
  g_source_attach (conn->source, context);
}

void
mtcp_connection_detach (MtcpConnection * conn)
{
  if (conn->source) {
    g_source_destroy (conn->source);
    g_source_unref (conn->source);
    conn->source = NULL;
    conn->fd_tag = NULL;
  }
}

void
mtcp_connection_poke_input (MtcpConnection * conn)
{
  conn->more_input = TRUE;
  if (conn->source)
    g_source_set_ready_time (conn->source, 0);
}

void
mtcp_connection_want_write (MtcpConnection * conn, gboolean want)
{
  if (conn->source == NULL || conn->want_write == want)
    return;
  conn->want_write = want;
  if (conn->tls_handshaking)
    return;                     /* the handshake's end sets the condition */
  g_source_modify_unix_fd (conn->source, conn->fd_tag,
      G_IO_IN | G_IO_ERR | G_IO_HUP | (want ? G_IO_OUT : 0));
}

void
mtcp_connection_free (MtcpConnection * conn)
{
  if (conn == NULL)
    return;
  mtcp_connection_detach (conn);
  g_clear_object (&conn->tls);
  g_clear_error (&conn->tls_error);
  g_sequence_free (conn->waiting);
  g_hash_table_destroy (conn->held_seqs);
  g_queue_clear_full (&conn->out, (GDestroyNotify) mtcp_out_frame_free);
  g_queue_clear_full (&conn->sent, (GDestroyNotify) mtcp_out_frame_free);
  if (conn->tls_pending) {
    MtcpTlsPending *pending = conn->tls_pending;

    /* GLib's worker thread waits on the socket for a peer that may never
     * speak: cancel, and shut down so that it (and the peer) see the end
     * now; closing the fd under it could have it read a reused one, so the
     * handshake's callback closes it once the worker returned */
    pending->conn = NULL;
    pending->orphans = conn->tls_orphans;
    if (pending->orphans)
      g_atomic_int_inc (pending->orphans);
    g_cancellable_cancel (pending->cancellable);
    g_socket_shutdown (conn->socket, TRUE, TRUE, NULL);
    pending->socket = conn->socket;
  } else {
    /* unread input makes close () send a reset, which can destroy data
     * still on its way to the peer: read what is there first */
    gchar sink[16384];
    guint i;
    g_socket_set_blocking (conn->socket, FALSE);
    for (i = 0; i < 64; i++)
      if (g_socket_receive (conn->socket, sink, sizeof (sink), NULL, NULL) <= 0)
        break;
    g_socket_close (conn->socket, NULL);
    g_object_unref (conn->socket);
  }
  mtcp_frame_reader_free (conn->reader);
  g_free (conn->peer);
  g_free (conn);
}

/* ---- output ---- */

static gboolean
frame_waits_for_deadline (const MtcpOutFrame * f)
{
  return mtcp_frame_is_sequenced (f->type) && f->due_us != 0 && !f->copied;
}

static gint
compare_due (gconstpointer a, gconstpointer b, gpointer user_data)
{
  const MtcpOutFrame *fa = a, *fb = b;
  return fa->due_us < fb->due_us ? -1 : fa->due_us > fb->due_us ? 1 : 0;
}

/* A value of held_seqs, keyed by its own seq. */
typedef struct {
  guint64 seq;
  guint count;
} HeldSeq;

/* @f is now held (queued, then written and kept until acknowledged). */
static void
hold (MtcpConnection * conn, MtcpOutFrame * f)
{
  HeldSeq *held;

  if (!mtcp_frame_is_sequenced (f->type))
    return;
  held = g_hash_table_lookup (conn->held_seqs, &f->seq);
  if (held == NULL) {
    held = g_new0 (HeldSeq, 1);
    held->seq = f->seq;
    g_hash_table_insert (conn->held_seqs, &held->seq, held);
  }
  held->count++;
  g_warn_if_fail (f->wait_iter == NULL);
  if (frame_waits_for_deadline (f))
    f->wait_iter = g_sequence_insert_sorted (conn->waiting, f, compare_due,
        NULL);
}

/* @f no longer waits for its deadline here: copied, or no longer held. */
static void
stop_waiting (MtcpOutFrame * f)
{
  if (f->wait_iter) {
    g_sequence_remove (f->wait_iter);
    f->wait_iter = NULL;
  }
}

/* @f is no longer held: freed, or handed back. */
static void
release (MtcpConnection * conn, MtcpOutFrame * f)
{
  HeldSeq *held;

  if (!mtcp_frame_is_sequenced (f->type))
    return;
  stop_waiting (f);
  held = g_hash_table_lookup (conn->held_seqs, &f->seq);
  g_return_if_fail (held != NULL);
  if (--held->count == 0)
    g_hash_table_remove (conn->held_seqs, &f->seq);
}

/* The written frame at @link of `sent` is no longer kept. */
static MtcpOutFrame *
unlink_sent (MtcpConnection * conn, GList * link)
{
  MtcpOutFrame *f = link->data;

  g_queue_delete_link (&conn->sent, link);
  conn->sent_bytes -= mtcp_out_frame_size (f);
  if (f->due_us != 0)
    conn->sent_timed--;
  release (conn, f);
  return f;
}

void
mtcp_connection_queue (MtcpConnection * conn, MtcpOutFrame * frame)
{
  if (frame->type == MTCP_FRAME_BUFFER) {
    frame->head = frame->head_inline;
    frame->head_size = conn->buffer_delta ?
        mtcp_write_buffer_delta_head (frame->head_inline,
        sizeof (frame->head_inline), &frame->info, &conn->delta_out,
        conn->compact) :
        mtcp_write_buffer_head (frame->head_inline,
        sizeof (frame->head_inline), &frame->info);
  }
  conn->out_bytes += mtcp_out_frame_size (frame);
  g_queue_push_tail (&conn->out, frame);
  hold (conn, frame);
}

gboolean
mtcp_connection_is_idle (MtcpConnection * conn)
{
  return g_queue_is_empty (&conn->out);
}

gboolean
mtcp_connection_can_take (MtcpConnection * conn)
{
  if (!g_queue_is_empty (&conn->out) || conn->tls_handshaking)
    return FALSE;
  return (g_socket_condition_check (conn->socket, G_IO_OUT) & G_IO_OUT) != 0;
}

static gssize
send_vectors (MtcpConnection * conn, GOutputVector * vec, guint n_vec,
    GError ** error)
{
  gsize written = 0;

  if (conn->tls == NULL)
    return g_socket_send_message (conn->socket, NULL, vec, n_vec, NULL, 0,
        G_SOCKET_MSG_NONE, NULL, error);
  switch (g_pollable_output_stream_writev_nonblocking
      (G_POLLABLE_OUTPUT_STREAM (g_io_stream_get_output_stream (conn->tls)),
          vec, n_vec, &written, NULL, error)) {
    case G_POLLABLE_RETURN_OK:
      return written;
    case G_POLLABLE_RETURN_WOULD_BLOCK:
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_WOULD_BLOCK, "would block");
      return -1;
    default:
      return -1;
  }
}

/* frames written with one call: a REPORT and the buffers queued with it
 * leave in the same segments instead of one small segment each */
#define FLUSH_MAX_FRAMES 16

/* The written frame at the head of the queue is done with. */
static void
pop_written (MtcpConnection * conn, guint64 end_offset)
{
  MtcpOutFrame *frame = g_queue_pop_head (&conn->out);

  conn->out_offset = 0;
  frame->end_offset = end_offset;
  frame->written_us = g_get_monotonic_time ();
  conn->frames_sent++;
  GST_LOG ("%s: sent %s frame seq %" G_GUINT64_FORMAT " (%" G_GSIZE_FORMAT
      " bytes)", conn->peer, mtcp_frame_type_name (frame->type), frame->seq,
      mtcp_out_frame_size (frame));
  if (conn->keep_sent && mtcp_frame_is_sequenced (frame->type)) {
    g_queue_push_tail (&conn->sent, frame);
    conn->sent_bytes += mtcp_out_frame_size (frame);
    if (frame->due_us != 0)
      conn->sent_timed++;
  } else {
    release (conn, frame);
    mtcp_out_frame_free (frame);
  }
}

MtcpIoResult
mtcp_connection_flush (MtcpConnection * conn, GError ** error)
{
  if (conn->tls_error) {
    g_propagate_error (error, g_error_copy (conn->tls_error));
    return MTCP_IO_ERROR;
  }
  if (conn->tls_handshaking)
    return MTCP_IO_BLOCKED;
  while (!g_queue_is_empty (&conn->out)) {
    GOutputVector vec[2 * FLUSH_MAX_FRAMES];
    GstMapInfo maps[FLUSH_MAX_FRAMES];
    GstBuffer *mapped[FLUSH_MAX_FRAMES];
    guint n_vec = 0, n_mapped = 0, i;
    gsize off = conn->out_offset;
    gboolean map_failed = FALSE;
    GList *l;
    gssize sent;
    GError *err = NULL;

    for (l = conn->out.head; l && n_mapped < FLUSH_MAX_FRAMES &&
        n_vec + 2 <= G_N_ELEMENTS (vec); l = l->next, off = 0) {
      MtcpOutFrame *frame = l->data;

      if (off < frame->head_size) {
        vec[n_vec].buffer = frame->head + off;
        vec[n_vec].size = frame->head_size - off;
        n_vec++;
      }
      if (frame->payload) {
        gsize poff = off > frame->head_size ? off - frame->head_size : 0;
        GstMapInfo *map = &maps[n_mapped];
        if (!gst_buffer_map (frame->payload, map, GST_MAP_READ)) {
          map_failed = TRUE;
          break;
        }
        mapped[n_mapped++] = frame->payload;
        if (poff < map->size) {
          vec[n_vec].buffer = map->data + poff;
          vec[n_vec].size = map->size - poff;
          n_vec++;
        }
      }
    }

    sent = n_vec > 0 ? send_vectors (conn, vec, n_vec, &err) : 0;
    for (i = 0; i < n_mapped; i++)
      gst_buffer_unmap (mapped[i], &maps[i]);
    if (map_failed && n_vec == 0) {
      g_clear_error (&err);
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED,
          "cannot map buffer for sending");
      return MTCP_IO_ERROR;
    }

    if (sent < 0) {
      if (g_error_matches (err, G_IO_ERROR, G_IO_ERROR_WOULD_BLOCK)) {
        g_error_free (err);
        return MTCP_IO_BLOCKED;
      }
      if (g_error_matches (err, G_IO_ERROR, G_IO_ERROR_BROKEN_PIPE) ||
          g_error_matches (err, G_IO_ERROR, G_IO_ERROR_CONNECTION_CLOSED)) {
        g_propagate_error (error, err);
        return MTCP_IO_CLOSED;
      }
      g_propagate_error (error, err);
      return MTCP_IO_ERROR;
    }

    conn->bytes_sent += sent;
    conn->out_bytes -= sent;
    /* a partial write stops inside a frame: the next round starts there,
     * and the kernel says when to stop */
    while (!g_queue_is_empty (&conn->out)) {
      gsize left = mtcp_out_frame_size (g_queue_peek_head (&conn->out)) -
          conn->out_offset;
      if ((gsize) sent < left) {
        conn->out_offset += sent;
        break;
      }
      sent -= left;
      pop_written (conn, conn->bytes_sent - sent);
    }
  }
  return MTCP_IO_DONE;
}

gboolean
mtcp_frame_is_sequenced (guint8 type)
{
  return type == MTCP_FRAME_BUFFER || type == MTCP_FRAME_CAPS ||
      type == MTCP_FRAME_EOS || type == MTCP_FRAME_SKIP;
}

void
mtcp_connection_ack (MtcpConnection * conn, guint64 seq)
{
  MtcpOutFrame *f;

  while ((f = g_queue_peek_head (&conn->sent)) && f->seq <= seq)
    mtcp_out_frame_free (unlink_sent (conn, conn->sent.head));
}

gboolean
mtcp_connection_holds_frame (MtcpConnection * conn, guint64 seq)
{
  return g_hash_table_contains (conn->held_seqs, &seq);
}

static gboolean
kept_until_acked (const MtcpOutFrame * f)
{
  return f->type == MTCP_FRAME_CAPS || f->type == MTCP_FRAME_EOS;
}

/* The deadline part of mtcp_connection_expire_sent (). */
static guint
expire_due (MtcpConnection * conn, gint64 keep_due_after_us, gsize * bytes)
{
  GList *l, *next, *run = NULL;
  guint n = 0;

  if (keep_due_after_us == G_MININT64)
    return 0;
  for (l = conn->sent.head; l && conn->sent_timed > 0; l = next) {
    MtcpOutFrame *f = l->data;
    GList *r, *rnext;

    next = l->next;
    if (f->due_us == 0) {
      /* no deadline of its own: a later one's decides */
      if (run == NULL)
        run = l;
      continue;
    }
    if (f->due_us > keep_due_after_us)
      break;
    for (r = run, run = NULL; r && r != l; r = rnext) {
      MtcpOutFrame *u = r->data;
      rnext = r->next;
      if (kept_until_acked (u) || u->seq >= f->seq) {
        if (run == NULL)
          run = r;
        continue;
      }
      *bytes += mtcp_out_frame_size (u);
      n++;
      mtcp_out_frame_free (unlink_sent (conn, r));
    }
    *bytes += mtcp_out_frame_size (f);
    n++;
    mtcp_out_frame_free (unlink_sent (conn, l));
  }
  return n;
}

guint
mtcp_connection_expire_sent (MtcpConnection * conn, gint64 keep_due_after_us,
    gsize max_kept_bytes, gsize * bytes_out)
{
  GList *l, *next;
  gsize bytes = 0;
  guint n, n_bytes = 0;

  n = expire_due (conn, keep_due_after_us, &bytes);
  for (l = conn->sent.head; l && conn->sent_bytes > max_kept_bytes; l = next) {
    MtcpOutFrame *f = l->data;

    next = l->next;
    if (kept_until_acked (f))
      continue;
    bytes += mtcp_out_frame_size (f);
    n_bytes++;
    mtcp_out_frame_free (unlink_sent (conn, l));
  }
  /* the byte bound may have dropped the frame still due that the walk
   * stopped at: what waited behind it is walked now */
  if (n_bytes > 0)
    n += n_bytes + expire_due (conn, keep_due_after_us, &bytes);
  if (bytes_out)
    *bytes_out = bytes;
  return n;
}

gsize
mtcp_connection_kept_bytes (MtcpConnection * conn)
{
  return conn->sent_bytes;
}

static MtcpOutFrame *
copy_of (const MtcpOutFrame * f)
{
  MtcpOutFrame *copy = mtcp_out_frame_new ();

  copy->type = f->type;
  copy->seq = f->seq;
  copy->info = f->info;
  copy->resend = TRUE;
  copy->due_us = f->due_us;
  copy->copied = TRUE;
  if (f->payload)
    copy->payload = gst_buffer_ref (f->payload);
  /* a BUFFER's head is written again by the connection that queues it */
  copy->head_size = f->head_size;
  memcpy (mtcp_out_frame_alloc_head (copy, f->head_size), f->head,
      f->head_size);
  return copy;
}

GList *
mtcp_connection_copy_frames_from (MtcpConnection * conn, guint64 seq)
{
  GQueue *queues[] = { &conn->sent, &conn->out };
  GList *copies = NULL, *l;
  guint k;

  for (k = 0; k < G_N_ELEMENTS (queues); k++)
    for (l = queues[k]->head; l; l = l->next) {
      MtcpOutFrame *f = l->data;
      if (mtcp_frame_is_sequenced (f->type) && f->seq >= seq) {
        /* one copy is enough: not again when its deadline nears */
        f->copied = TRUE;
        stop_waiting (f);
        copies = g_list_prepend (copies, copy_of (f));
      }
    }
  return g_list_reverse (copies);
}

gint64
mtcp_connection_unacked_since (MtcpConnection * conn, guint64 tcp_bytes_acked)
{
  guint64 acked = tcp_bytes_acked > conn->tcp_acked_base ?
      tcp_bytes_acked - conn->tcp_acked_base : 0;
  GList *l;

  if (conn->tls)
    return G_MAXINT64;
  for (l = conn->sent.head; l; l = l->next) {
    MtcpOutFrame *f = l->data;
    if (f->end_offset > acked)
      return f->written_us;
  }
  return G_MAXINT64;
}

gint64
mtcp_connection_first_due (MtcpConnection * conn)
{
  GSequenceIter *first = g_sequence_get_begin_iter (conn->waiting);

  if (g_sequence_iter_is_end (first))
    return G_MAXINT64;
  return ((MtcpOutFrame *) g_sequence_get (first))->due_us;
}

GList *
mtcp_connection_copy_frames_due (MtcpConnection * conn,
    guint64 tcp_bytes_acked, gint64 stale_before_us, gint64 due_before_us)
{
  GQueue *queues[] = { &conn->sent, &conn->out };
  guint64 acked = tcp_bytes_acked > conn->tcp_acked_base ?
      tcp_bytes_acked - conn->tcp_acked_base : 0;
  GList *copies = NULL, *l;
  gboolean stuck = FALSE;
  guint k;

  if (conn->tls)
    return NULL;
  for (k = 0; k < G_N_ELEMENTS (queues); k++)
    for (l = queues[k]->head; l; l = l->next) {
      MtcpOutFrame *f = l->data;
      if (!stuck) {
        if (k == 1)
          return NULL;          /* everything written is acknowledged */
        if (f->end_offset <= acked)
          continue;             /* the peer's TCP has all of it */
        if (f->written_us >= stale_before_us)
          return NULL;          /* on its way: a copy would not be sooner */
        stuck = TRUE;
      }
      if (!frame_waits_for_deadline (f) || f->due_us >= due_before_us)
        continue;
      f->copied = TRUE;
      stop_waiting (f);
      copies = g_list_prepend (copies, copy_of (f));
    }
  return g_list_reverse (copies);
}

gint
mtcp_copy_target_pick (const MtcpCopyTarget * t, guint n)
{
  gint best = -1;
  guint i;

  for (i = 0; i < n; i++) {
    if (t[i].excluded)
      continue;
    if (best < 0 || t[best].repairing > t[i].repairing ||
        (t[best].repairing == t[i].repairing && (t[i].room > t[best].room ||
                (t[i].room == t[best].room && t[i].rtt_us < t[best].rtt_us))))
      best = i;
  }
  return best;
}

GList *
mtcp_connection_take_unacked (MtcpConnection * conn)
{
  GList *frames = NULL;
  MtcpOutFrame *f;

  while ((f = g_queue_pop_head (&conn->sent))) {
    f->wait_iter = NULL;
    frames = g_list_prepend (frames, f);
  }
  while ((f = g_queue_pop_head (&conn->out))) {
    f->wait_iter = NULL;
    if (mtcp_frame_is_sequenced (f->type))
      frames = g_list_prepend (frames, f);
    else
      mtcp_out_frame_free (f);
  }
  g_sequence_remove_range (g_sequence_get_begin_iter (conn->waiting),
      g_sequence_get_end_iter (conn->waiting));
  g_hash_table_remove_all (conn->held_seqs);
  conn->sent_bytes = 0;
  conn->sent_timed = 0;
  conn->out_offset = 0;
  conn->out_bytes = 0;
  return g_list_reverse (frames);
}

/* ---- input ---- */

static gssize
receive_some (MtcpConnection * conn, guint8 * dst, gsize space, GError ** error)
{
  if (conn->tls == NULL)
    return g_socket_receive (conn->socket, (gchar *) dst, space, NULL, error);
  return g_pollable_input_stream_read_nonblocking (G_POLLABLE_INPUT_STREAM
      (g_io_stream_get_input_stream (conn->tls)), dst, space, NULL, error);
}

MtcpIoResult
mtcp_connection_receive (MtcpConnection * conn, GError ** error)
{
  gsize total = 0;

  if (conn->tls_error) {
    g_propagate_error (error, g_error_copy (conn->tls_error));
    return MTCP_IO_ERROR;
  }
  if (conn->tls_handshaking)
    return MTCP_IO_DONE;
  for (;;) {
    gsize space;
    guint8 *dst = mtcp_frame_reader_space (conn->reader, &space);
    GError *err = NULL;
    gssize n = receive_some (conn, dst, space, &err);

    if (n < 0) {
      if (g_error_matches (err, G_IO_ERROR, G_IO_ERROR_WOULD_BLOCK)) {
        g_error_free (err);
        if (total > 0 && conn->delay_acks)
          mtcp_tcp_delay_acks (conn->socket);
        return MTCP_IO_DONE;
      }
      if (g_error_matches (err, G_IO_ERROR, G_IO_ERROR_CONNECTION_CLOSED)) {
        g_propagate_error (error, err);
        return MTCP_IO_CLOSED;
      }
      g_propagate_error (error, err);
      return MTCP_IO_ERROR;
    }
    if (n == 0)
      return MTCP_IO_CLOSED;
    mtcp_frame_reader_commit (conn->reader, n);
    conn->bytes_received += n;
    /* a short read means the socket is drained for now (TLS reads end at
     * a record: read on until it would block) */
    total += n;
    if ((gsize) n < space && conn->tls == NULL) {
      if (conn->delay_acks)
        mtcp_tcp_delay_acks (conn->socket);
      return MTCP_IO_DONE;
    }
    if (total >= READ_PER_DISPATCH) {
      /* let the rest of the loop run; come back at once (TLS may hold
       * decrypted bytes the socket's readiness does not show) */
      if (conn->tls)
        mtcp_connection_poke_input (conn);
      return MTCP_IO_DONE;
    }
  }
}

gboolean
mtcp_connection_send_all_blocking (MtcpConnection * conn, const guint8 * data,
    gsize size, GCancellable * cancellable, GError ** error)
{
  gsize done = 0;
  while (done < size) {
    gssize n = conn->tls ?
        g_output_stream_write (g_io_stream_get_output_stream (conn->tls),
        data + done, size - done, cancellable, error) :
        g_socket_send (conn->socket, (const gchar *) data + done,
        size - done, cancellable, error);
    if (n <= 0)
      return FALSE;
    done += n;
    conn->bytes_sent += n;
  }
  return TRUE;
}

gboolean
mtcp_connection_read_frame_blocking (MtcpConnection * conn,
    MtcpFrameHeader * hdr, const guint8 ** body, GCancellable * cancellable,
    GError ** error)
{
  for (;;) {
    gchar *perr = NULL;
    gsize space;
    guint8 *dst;
    gssize n;

    switch (mtcp_frame_reader_next (conn->reader, hdr, body, &perr)) {
      case MTCP_PARSE_OK:
        conn->frames_received++;
        return TRUE;
      case MTCP_PARSE_ERROR:
        g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA, "%s", perr);
        g_free (perr);
        return FALSE;
      case MTCP_PARSE_NEED_MORE:
        break;
    }
    dst = mtcp_frame_reader_space (conn->reader, &space);
    n = conn->tls ?
        g_input_stream_read (g_io_stream_get_input_stream (conn->tls), dst,
        space, cancellable, error) :
        g_socket_receive (conn->socket, (gchar *) dst, space, cancellable,
        error);
    if (n < 0)
      return FALSE;
    if (n == 0) {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_CONNECTION_CLOSED,
          "connection closed by %s", conn->peer);
      return FALSE;
    }
    mtcp_frame_reader_commit (conn->reader, n);
    conn->bytes_received += n;
  }
}

/* ---- TLS ---- */

static gboolean
accept_certificate (GTlsConnection * tls, GTlsCertificate * cert,
    GTlsCertificateFlags errors, gpointer user_data)
{
  GTlsCertificateFlags refused = GPOINTER_TO_UINT (user_data);

  /* called only when validation found @errors: accept those not checked */
  return (errors & refused) == 0;
}

static gboolean
wrap_tls (MtcpConnection * conn, const MtcpTlsConfig * tls, GError ** error)
{
  GSocketConnection *base =
      g_socket_connection_factory_create_connection (conn->socket);
  GIOStream *stream;

  if (tls->server) {
    stream = g_tls_server_connection_new (G_IO_STREAM (base),
        tls->certificate, error);
  } else {
    GSocketConnectable *identity = g_network_address_new (tls->server_name,
        tls->port);
    stream = g_tls_client_connection_new (G_IO_STREAM (base), identity, error);
    g_object_unref (identity);
    if (stream) {
      if (tls->database)
        g_tls_connection_set_database (G_TLS_CONNECTION (stream),
            tls->database);
      g_signal_connect (stream, "accept-certificate",
          G_CALLBACK (accept_certificate),
          GUINT_TO_POINTER (tls->validation_flags));
    }
  }
  g_object_unref (base);
  if (stream == NULL) {
    g_prefix_error (error, "TLS with %s: ", conn->peer);
    return FALSE;
  }
  conn->tls = stream;
  return TRUE;
}

static void
describe_tls_failure (MtcpConnection * conn, GError ** error)
{
  if (*error && g_error_matches (*error, G_TLS_ERROR,
          G_TLS_ERROR_BAD_CERTIFICATE))
    g_prefix_error (error, "TLS handshake with %s: the certificate was not "
        "accepted (tls-ca-file, tls-validation-flags): ", conn->peer);
  else
    g_prefix_error (error, "TLS handshake with %s failed: ", conn->peer);
}

void
mtcp_connection_wait_orphaned_handshakes (GMainContext * context,
    gint * orphans, gint64 timeout_us)
{
  gint64 until = g_get_monotonic_time () + timeout_us;

  while (g_atomic_int_get (orphans) > 0 && g_get_monotonic_time () < until)
    if (!g_main_context_iteration (context, FALSE))
      g_usleep (1000);
  if (g_atomic_int_get (orphans) > 0)
    GST_WARNING ("%d TLS handshakes did not end in %" G_GINT64_FORMAT " ms: "
        "their sockets stay open", g_atomic_int_get (orphans),
        timeout_us / 1000);
}

static void
on_handshake_done (GObject * object, GAsyncResult * result, gpointer user_data)
{
  MtcpTlsPending *pending = user_data;
  MtcpConnection *conn = pending->conn;
  GError *err = NULL;
  gboolean ok = g_tls_connection_handshake_finish (G_TLS_CONNECTION (object),
      result, &err);

  g_object_unref (pending->cancellable);
  if (conn == NULL) {
    /* the connection was freed meanwhile: GLib's worker is done with its
     * socket now */
    g_socket_close (pending->socket, NULL);
    g_object_unref (pending->socket);
    if (pending->orphans)
      g_atomic_int_add (pending->orphans, -1);
    g_free (pending);
    g_clear_error (&err);
    return;
  }
  g_free (pending);
  conn->tls_pending = NULL;
  conn->tls_handshaking = FALSE;
  if (ok) {
    GST_INFO ("%s: TLS handshake done (%s)", conn->peer,
        g_tls_connection_get_protocol_version (G_TLS_CONNECTION (object)) ==
        G_TLS_PROTOCOL_VERSION_TLS_1_3 ? "TLS 1.3" : "TLS");
    /* output queued meanwhile goes when the socket takes it; the
     * handshake may have read the peer's first frames already */
    if (conn->source)
      g_source_modify_unix_fd (conn->source, conn->fd_tag, G_IO_IN | G_IO_ERR
          | G_IO_HUP | (conn->want_write ? G_IO_OUT : 0));
    mtcp_connection_poke_input (conn);
  } else {
    describe_tls_failure (conn, &err);
    GST_WARNING ("%s", err->message);
    conn->tls_error = err;
    if (conn->source) {
      g_source_modify_unix_fd (conn->source, conn->fd_tag,
          G_IO_IN | G_IO_ERR | G_IO_HUP);
      /* the owner reads the error and closes the connection */
      conn->func (conn, G_IO_ERR, conn->func_data);
    }
  }
}

gboolean
mtcp_connection_start_tls (MtcpConnection * conn, const MtcpTlsConfig * tls,
    GError ** error)
{
  if (!wrap_tls (conn, tls, error))
    return FALSE;
  conn->tls_handshaking = TRUE;
  conn->tls_pending = g_new0 (MtcpTlsPending, 1);
  conn->tls_pending->conn = conn;
  conn->tls_pending->cancellable = g_cancellable_new ();
  if (conn->source)
    g_source_modify_unix_fd (conn->source, conn->fd_tag, 0);
  g_tls_connection_handshake_async (G_TLS_CONNECTION (conn->tls),
      G_PRIORITY_DEFAULT, conn->tls_pending->cancellable, on_handshake_done,
      conn->tls_pending);
  return TRUE;
}

gboolean
mtcp_connection_handshake_tls_blocking (MtcpConnection * conn,
    const MtcpTlsConfig * tls, GCancellable * cancellable, GError ** error)
{
  if (!wrap_tls (conn, tls, error))
    return FALSE;
  if (!g_tls_connection_handshake (G_TLS_CONNECTION (conn->tls), cancellable,
          error)) {
    describe_tls_failure (conn, error);
    return FALSE;
  }
  GST_INFO ("%s: TLS handshake done", conn->peer);
  return TRUE;
}

gboolean
mtcp_tls_error_is_fatal (const GError * error)
{
  return error && (g_error_matches (error, G_TLS_ERROR,
          G_TLS_ERROR_BAD_CERTIFICATE) || g_error_matches (error, G_TLS_ERROR,
          G_TLS_ERROR_NOT_TLS) || g_error_matches (error, G_TLS_ERROR,
          G_TLS_ERROR_CERTIFICATE_REQUIRED));
}

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "mtcpconnection.h"

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
  frame->head_size = mtcp_write_welcome (frame->head,
      sizeof (frame->head_inline), welcome);
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

  if (callback == NULL)
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
  conn->created_us = g_get_monotonic_time ();

  addr = g_socket_get_remote_address (socket, NULL);
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
      g_socket_get_fd (conn->socket), G_IO_IN | G_IO_ERR | G_IO_HUP);
  conn->want_write = FALSE;
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
mtcp_connection_want_write (MtcpConnection * conn, gboolean want)
{
  if (conn->source == NULL || conn->want_write == want)
    return;
  conn->want_write = want;
  g_source_modify_unix_fd (conn->source, conn->fd_tag,
      G_IO_IN | G_IO_ERR | G_IO_HUP | (want ? G_IO_OUT : 0));
}

void
mtcp_connection_free (MtcpConnection * conn)
{
  if (conn == NULL)
    return;
  mtcp_connection_detach (conn);
  g_queue_clear_full (&conn->out, (GDestroyNotify) mtcp_out_frame_free);
  g_queue_clear_full (&conn->sent, (GDestroyNotify) mtcp_out_frame_free);
  /* unread input makes close () send a reset, which can destroy data still
   * on its way to the peer: read what is there first */
  {
    gchar sink[16384];
    guint i;
    g_socket_set_blocking (conn->socket, FALSE);
    for (i = 0; i < 64; i++)
      if (g_socket_receive (conn->socket, sink, sizeof (sink), NULL, NULL) <= 0)
        break;
  }
  g_socket_close (conn->socket, NULL);
  g_object_unref (conn->socket);
  mtcp_frame_reader_free (conn->reader);
  g_free (conn->peer);
  g_free (conn);
}

/* ---- output ---- */

void
mtcp_connection_queue (MtcpConnection * conn, MtcpOutFrame * frame)
{
  conn->out_bytes += mtcp_out_frame_size (frame);
  g_queue_push_tail (&conn->out, frame);
}

gboolean
mtcp_connection_is_idle (MtcpConnection * conn)
{
  return g_queue_is_empty (&conn->out);
}

gboolean
mtcp_connection_can_take (MtcpConnection * conn)
{
  if (!g_queue_is_empty (&conn->out))
    return FALSE;
  return (g_socket_condition_check (conn->socket, G_IO_OUT) & G_IO_OUT) != 0;
}

MtcpIoResult
mtcp_connection_flush (MtcpConnection * conn, GError ** error)
{
  while (!g_queue_is_empty (&conn->out)) {
    MtcpOutFrame *frame = g_queue_peek_head (&conn->out);
    GOutputVector vec[2];
    guint n_vec = 0;
    GstMapInfo map = GST_MAP_INFO_INIT;
    gsize off = conn->out_offset;
    gsize total = mtcp_out_frame_size (frame);
    gssize sent;
    GError *err = NULL;

    if (off < frame->head_size) {
      vec[n_vec].buffer = frame->head + off;
      vec[n_vec].size = frame->head_size - off;
      n_vec++;
    }
    if (frame->payload) {
      gsize poff = off > frame->head_size ? off - frame->head_size : 0;
      if (!gst_buffer_map (frame->payload, &map, GST_MAP_READ)) {
        g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED,
            "cannot map buffer for sending");
        return MTCP_IO_ERROR;
      }
      if (poff < map.size) {
        vec[n_vec].buffer = map.data + poff;
        vec[n_vec].size = map.size - poff;
        n_vec++;
      }
    }

    sent = g_socket_send_message (conn->socket, NULL, vec, n_vec, NULL, 0,
        G_SOCKET_MSG_NONE, NULL, &err);
    if (frame->payload)
      gst_buffer_unmap (frame->payload, &map);

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
    conn->out_offset += sent;
    if (conn->out_offset < total)
      continue;                 /* partial: try again, the kernel says when to stop */
    g_queue_pop_head (&conn->out);
    conn->out_offset = 0;
    conn->frames_sent++;
    GST_LOG ("%s: sent %s frame seq %" G_GUINT64_FORMAT " (%" G_GSIZE_FORMAT
        " bytes)", conn->peer, mtcp_frame_type_name (frame->type), frame->seq,
        total);
    if (conn->keep_sent && mtcp_frame_is_sequenced (frame->type))
      g_queue_push_tail (&conn->sent, frame);
    else
      mtcp_out_frame_free (frame);
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
    mtcp_out_frame_free (g_queue_pop_head (&conn->sent));
}

GList *
mtcp_connection_take_unacked (MtcpConnection * conn)
{
  GList *frames = NULL;
  MtcpOutFrame *f;

  while ((f = g_queue_pop_head (&conn->sent)))
    frames = g_list_prepend (frames, f);
  while ((f = g_queue_pop_head (&conn->out))) {
    if (mtcp_frame_is_sequenced (f->type))
      frames = g_list_prepend (frames, f);
    else
      mtcp_out_frame_free (f);
  }
  conn->out_offset = 0;
  conn->out_bytes = 0;
  return g_list_reverse (frames);
}

/* ---- input ---- */

MtcpIoResult
mtcp_connection_receive (MtcpConnection * conn, GError ** error)
{
  for (;;) {
    gsize space;
    guint8 *dst = mtcp_frame_reader_space (conn->reader, &space);
    GError *err = NULL;
    gssize n = g_socket_receive (conn->socket, (gchar *) dst, space, NULL,
        &err);

    if (n < 0) {
      if (g_error_matches (err, G_IO_ERROR, G_IO_ERROR_WOULD_BLOCK)) {
        g_error_free (err);
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
    /* a short read means the socket is drained for now */
    if ((gsize) n < space)
      return MTCP_IO_DONE;
  }
}

gboolean
mtcp_connection_send_all_blocking (MtcpConnection * conn, const guint8 * data,
    gsize size, GCancellable * cancellable, GError ** error)
{
  gsize done = 0;
  while (done < size) {
    gssize n = g_socket_send (conn->socket, (const gchar *) data + done,
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
    n = g_socket_receive (conn->socket, (gchar *) dst, space, cancellable,
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

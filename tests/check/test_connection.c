/* multitcp
 * Copyright (C) 2026 the multitcp authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
/* Unit tests of what a connection keeps of the frames it was given: due
 * times from the send queue, where each written frame ends in the byte
 * stream, which frames go out again before their deadline, what stops
 * being kept, and a TLS handshake cancelled by freeing its connection. */
#include <gst/check/gstcheck.h>
#include <glib/gstdio.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <poll.h>
#include <errno.h>

#include "mtcpconnectionprivate.h"
#include "mtcpsendqueue.h"

static gint64 fake_now_us;

static gint64
fake_clock (void)
{
  return fake_now_us;
}

/* push buffer @tag of 1000 bytes at @ms running time */
static void
push (MtcpSendQueue * q, guint8 tag, gboolean delta, guint ms)
{
  GstBuffer *buf = gst_buffer_new_allocate (NULL, 1000, NULL);

  gst_buffer_memset (buf, 0, tag, 1000);
  if (delta)
    GST_BUFFER_FLAG_SET (buf, GST_BUFFER_FLAG_DELTA_UNIT);
  mtcp_send_queue_push_buffer (q, buf, ms * GST_MSECOND, ms * GST_MSECOND,
      33 * GST_MSECOND);
  gst_buffer_unref (buf);
}

/* One end of a stream socket pair in a connection that keeps what it
 * wrote; the other end in *peer_fd. */
static MtcpConnection *
connection_on_socketpair (gint * peer_fd)
{
  gint fds[2];
  GSocket *socket;
  MtcpConnection *conn;

  fail_unless (socketpair (AF_UNIX, SOCK_STREAM, 0, fds) == 0);
  socket = g_socket_new_from_fd (fds[0], NULL);
  fail_unless (socket != NULL);
  g_socket_set_blocking (socket, FALSE);
  conn = mtcp_connection_new (socket, 1 << 20);
  g_object_unref (socket);
  conn->keep_sent = TRUE;
  *peer_fd = fds[1];
  return conn;
}

static guint64
seq_of_only (GList * frames)
{
  guint64 seq;

  fail_unless_equals_int (g_list_length (frames), 1);
  seq = ((MtcpOutFrame *) frames->data)->seq;
  g_list_free_full (frames, (GDestroyNotify) mtcp_out_frame_free);
  return seq;
}

/* A probe's PADDING: the size asked for on the wire, header included, a
 * body of zeros a reader takes as one frame to skip; not sequenced, so
 * never kept, copied or resent; within bounds whatever is asked. */
GST_START_TEST (test_padding_frame)
{
  MtcpOutFrame *f = mtcp_out_frame_new_padding (1000);
  MtcpFrameHeader hdr;
  GstMapInfo map;
  gchar *err = NULL;
  gsize i;

  fail_unless_equals_uint64 (mtcp_out_frame_size (f), 1000);
  fail_unless_equals_int (mtcp_parse_header (f->head, f->head_size,
          MTCP_MAX_FRAME_DEFAULT, &hdr, &err), MTCP_PARSE_OK);
  fail_unless_equals_int (hdr.type, MTCP_FRAME_PADDING);
  fail_unless_equals_int (hdr.length, 1000 - MTCP_HEADER_SIZE);
  fail_unless (gst_buffer_map (f->payload, &map, GST_MAP_READ));
  fail_unless_equals_uint64 (map.size, hdr.length);
  for (i = 0; i < map.size; i++)
    fail_unless_equals_int (map.data[i], 0);
  gst_buffer_unmap (f->payload, &map);
  fail_if (mtcp_frame_is_sequenced (f->type));
  mtcp_out_frame_free (f);

  f = mtcp_out_frame_new_padding (2);
  fail_unless_equals_uint64 (mtcp_out_frame_size (f), MTCP_HEADER_SIZE);
  fail_unless (f->payload == NULL);
  mtcp_out_frame_free (f);
  /* no body beyond what the least max-frame-size takes */
  f = mtcp_out_frame_new_padding (1 << 20);
  fail_unless_equals_uint64 (mtcp_out_frame_size (f), MTCP_PADDING_MAX);
  fail_unless_equals_int (mtcp_parse_header (f->head, f->head_size,
          MTCP_MAX_FRAME_MIN, &hdr, &err), MTCP_PARSE_OK);
  mtcp_out_frame_free (f);
}

GST_END_TEST;

/* A receiver with latency maps its clock on the first buffer handed out:
 * each frame is due its running time after that one, by the sink's clock. */
GST_START_TEST (test_frames_carry_due_time)
{
  MtcpSendQueueLimits limits = { 0, GST_CLOCK_TIME_NONE };
  MtcpSendQueue *q = mtcp_send_queue_new (&limits);
  MtcpQueueSession *timed = mtcp_send_queue_add_session (q);
  MtcpQueueSession *untimed = mtcp_send_queue_add_session (q);
  MtcpOutFrame *f;

  mtcp_send_queue_set_clock (q, fake_clock);
  mtcp_send_queue_session_set_max_lag (q, timed, 500 * GST_MSECOND);
  push (q, 0, FALSE, 100);
  push (q, 1, TRUE, 133);
  fake_now_us = 7000000;
  f = mtcp_send_queue_take (q, timed);
  fail_unless_equals_int64 (f->due_us, 7000000);
  mtcp_out_frame_free (f);
  fake_now_us = 7100000;        /* handed out later: still due 33 ms after */
  f = mtcp_send_queue_take (q, timed);
  fail_unless_equals_int64 (f->due_us, 7033000);
  mtcp_out_frame_free (f);
  /* no latency known: no deadline */
  f = mtcp_send_queue_take (q, untimed);
  fail_unless_equals_int64 (f->due_us, 0);
  mtcp_out_frame_free (f);
  mtcp_send_queue_free (q);
}

GST_END_TEST;

/* A connection whose oldest write its peer's TCP has not acknowledged is
 * stuck once that write is older than the staleness bound: that frame and
 * the later ones, written or not, are copied once their due time is before
 * the bound; each once, never the ones the peer's TCP has whole, and
 * nothing while the oldest unacknowledged write is recent. */
GST_START_TEST (test_copies_what_tcp_has_not_delivered_near_deadline)
{
  MtcpSendQueueLimits limits = { 0, GST_CLOCK_TIME_NONE };
  MtcpSendQueue *q = mtcp_send_queue_new (&limits);
  MtcpQueueSession *s = mtcp_send_queue_add_session (q);
  MtcpConnection *conn;
  MtcpOutFrame *f;
  guint64 end[3];
  gint peer_fd, i;
  GList *copies;

  mtcp_send_queue_set_clock (q, fake_clock);
  mtcp_send_queue_session_set_max_lag (q, s, 500 * GST_MSECOND);
  fake_now_us = 1000000;
  for (i = 0; i < 5; i++)
    push (q, i, i > 0, i * 33);
  conn = connection_on_socketpair (&peer_fd);
  fail_unless_equals_int64 (mtcp_connection_first_due (conn), G_MAXINT64);
  for (i = 0; i < 3; i++)
    mtcp_connection_queue (conn, mtcp_send_queue_take (q, s));
  fail_unless_equals_int (mtcp_connection_flush (conn, NULL), MTCP_IO_DONE);
  /* each written frame knows where it ends in the connection's bytes */
  fail_unless_equals_int (g_queue_get_length (&conn->sent), 3);
  for (i = 0; i < 3; i++) {
    f = g_queue_peek_nth (&conn->sent, i);
    end[i] = f->end_offset;
    fail_unless (i == 0 ? end[0] > 1000 : end[i] > end[i - 1] + 1000);
  }
  fail_unless_equals_uint64 (end[2], conn->bytes_sent);
  /* the fourth is queued, not written */
  mtcp_connection_queue (conn, mtcp_send_queue_take (q, s));
  fail_unless_equals_int64 (mtcp_connection_first_due (conn), 1000000);

  /* nothing due before 1 s */
  fail_unless (mtcp_connection_copy_frames_due (conn, 0, G_MAXINT64,
          1000000) == NULL);
  /* all due, but written after the staleness bound: on their way */
  fail_unless (mtcp_connection_copy_frames_due (conn, 0, 0,
          G_MAXINT64) == NULL);
  /* seq 0 is whole at the peer's TCP, seq 1 one byte short: seq 1 only */
  copies = mtcp_connection_copy_frames_due (conn, end[1] - 1, G_MAXINT64,
      1040000);
  f = copies->data;
  fail_unless (f->resend && f->copied);
  fail_unless_equals_int64 (f->due_us, 1033000);
  fail_unless_equals_uint64 (seq_of_only (copies), 1);
  /* once only */
  fail_unless (mtcp_connection_copy_frames_due (conn, end[1] - 1,
          G_MAXINT64, 1040000) == NULL);
  /* a later bound: seq 2 (written) and seq 3 (not written) */
  copies = mtcp_connection_copy_frames_due (conn, end[0], G_MAXINT64,
      1100000);
  fail_unless_equals_int (g_list_length (copies), 2);
  fail_unless_equals_uint64 (((MtcpOutFrame *) copies->data)->seq, 2);
  fail_unless_equals_uint64 (((MtcpOutFrame *) copies->next->data)->seq, 3);
  g_list_free_full (copies, (GDestroyNotify) mtcp_out_frame_free);
  /* seq 4, queued: not stuck once the peer's TCP has everything written */
  mtcp_connection_queue (conn, mtcp_send_queue_take (q, s));
  fail_unless (mtcp_connection_copy_frames_due (conn, end[2], G_MAXINT64,
          G_MAXINT64) == NULL);
  copies = mtcp_connection_copy_frames_due (conn, end[2] - 1, G_MAXINT64,
      G_MAXINT64);
  fail_unless_equals_uint64 (seq_of_only (copies), 4);
  /* seq 0 was never copied: it waits for the receiver's acknowledgement */
  fail_unless_equals_int64 (mtcp_connection_first_due (conn), 1000000);
  mtcp_connection_ack (conn, 0);
  fail_unless_equals_int64 (mtcp_connection_first_due (conn), G_MAXINT64);

  mtcp_connection_free (conn);
  close (peer_fd);
  mtcp_send_queue_free (q);
}

GST_END_TEST;

/* A frame sent again because the receiver waits for it (the hedge) is not
 * copied a second time when its deadline nears; the ones before it are. */
GST_START_TEST (test_hedged_frames_not_copied_again)
{
  MtcpSendQueueLimits limits = { 0, GST_CLOCK_TIME_NONE };
  MtcpSendQueue *q = mtcp_send_queue_new (&limits);
  MtcpQueueSession *s = mtcp_send_queue_add_session (q);
  MtcpConnection *conn;
  gint peer_fd, i;
  GList *copies;

  mtcp_send_queue_set_clock (q, fake_clock);
  mtcp_send_queue_session_set_max_lag (q, s, 500 * GST_MSECOND);
  fake_now_us = 1000000;
  for (i = 0; i < 3; i++)
    push (q, i, i > 0, i * 33);
  conn = connection_on_socketpair (&peer_fd);
  for (i = 0; i < 3; i++)
    mtcp_connection_queue (conn, mtcp_send_queue_take (q, s));
  fail_unless_equals_int (mtcp_connection_flush (conn, NULL), MTCP_IO_DONE);
  copies = mtcp_connection_copy_frames_from (conn, 1);
  fail_unless_equals_int (g_list_length (copies), 2);
  g_list_free_full (copies, (GDestroyNotify) mtcp_out_frame_free);
  /* nothing acknowledged, all due and stale: only seq 0 is left to copy */
  fail_unless_equals_int64 (mtcp_connection_first_due (conn), 1000000);
  copies = mtcp_connection_copy_frames_due (conn, 0, G_MAXINT64, G_MAXINT64);
  fail_unless_equals_uint64 (seq_of_only (copies), 0);
  fail_unless_equals_int64 (mtcp_connection_first_due (conn), G_MAXINT64);

  mtcp_connection_free (conn);
  close (peer_fd);
  mtcp_send_queue_free (q);
}

GST_END_TEST;

/* Where copies go: the most room, a connection repairing a loss only when
 * every other is, never an excluded one; handing a copy out takes its size
 * from the room, so a run of copies spreads over the connections. */
GST_START_TEST (test_copy_target_most_room_not_repairing)
{
  MtcpCopyTarget t[4] = {
    {30000, 100000, FALSE, TRUE},       /* the holder */
    {8000, 100000, FALSE, FALSE},
    {12000, 120000, FALSE, FALSE},
    {50000, 90000, TRUE, FALSE},        /* most room, but repairing */
  };
  guint picks[4] = { 0 }, i;
  gint best;

  fail_unless_equals_int (mtcp_copy_target_pick (t, 4), 2);
  /* five 4 kB copies: 12 kB, 8 kB, 8 kB (the lower RTT), 4 kB, 4 kB */
  for (i = 0; i < 5; i++) {
    best = mtcp_copy_target_pick (t, 4);
    fail_unless (best == 1 || best == 2);
    picks[best]++;
    t[best].room -= 4000;
  }
  fail_unless_equals_int (picks[1], 2);
  fail_unless_equals_int (picks[2], 3);
  /* equal room: the shorter RTT */
  t[1].room = t[2].room = 0;
  fail_unless_equals_int (mtcp_copy_target_pick (t, 4), 1);
  /* every other one repairing: the repairing one with the most room */
  t[1].repairing = t[2].repairing = TRUE;
  fail_unless_equals_int (mtcp_copy_target_pick (t, 4), 3);
  /* every one excluded (each has the frame already): none */
  for (i = 0; i < 4; i++)
    t[i].excluded = TRUE;
  fail_unless_equals_int (mtcp_copy_target_pick (t, 4), -1);
  fail_unless_equals_int (mtcp_copy_target_pick (t, 0), -1);
}

GST_END_TEST;

/* A sequenced frame of @type, @seq, due at @due_us (0: none); a BUFFER
 * carries @size bytes. */
static MtcpOutFrame *
frame_new (guint8 type, guint64 seq, gint64 due_us, gsize size)
{
  MtcpOutFrame *f = mtcp_out_frame_new ();

  f->type = type;
  f->seq = seq;
  f->due_us = due_us;
  switch (type) {
    case MTCP_FRAME_BUFFER:
      f->payload = gst_buffer_new_allocate (NULL, size, NULL);
      gst_buffer_memset (f->payload, 0, 0x5a, size);
      f->info.seq = seq;
      f->info.pts = f->info.dts = f->info.duration = MTCP_TIME_NONE;
      f->info.payload_size = size;
      break;
    case MTCP_FRAME_SKIP:{
      MtcpSkip skip = { seq, seq + 1 };
      f->head_size = mtcp_write_skip (f->head, sizeof (f->head_inline),
          &skip);
      break;
    }
    case MTCP_FRAME_CAPS:{
      gsize cap = MTCP_HEADER_SIZE + 8 + 32;
      f->head_size = mtcp_write_caps (mtcp_out_frame_alloc_head (f, cap), cap,
          seq, "video/x-raw");
      break;
    }
    case MTCP_FRAME_EOS:
      f->head_size = mtcp_write_eos (f->head, sizeof (f->head_inline), seq);
      break;
    default:
      g_assert_not_reached ();
  }
  return f;
}

/* Read whatever the peer end has, so that writes never block. */
static void
drain (gint fd)
{
  gchar buf[65536];

  while (recv (fd, buf, sizeof (buf), MSG_DONTWAIT) > 0);
}

/* Queue @f, write it, and return its size on the wire. */
static gsize
write_one (MtcpConnection * conn, gint peer_fd, MtcpOutFrame * f)
{
  gsize size;

  mtcp_connection_queue (conn, f);
  size = mtcp_out_frame_size (f);
  fail_unless_equals_int (mtcp_connection_flush (conn, NULL), MTCP_IO_DONE);
  drain (peer_fd);
  return size;
}

/* Written, unacknowledged frames stop being kept once their deadline
 * passed (and the SKIPs and untimed buffers written before them with
 * lower seqs), oldest first beyond a byte bound; CAPS and EOS stay until
 * acknowledged; frames written after one still due wait for it. */
GST_START_TEST (test_expire_sent_by_deadline_and_bytes)
{
  MtcpConnection *conn;
  gsize sz[16], caps, eos, bytes, kept;
  gint peer_fd;
  GList *frames;

  conn = connection_on_socketpair (&peer_fd);
  fail_unless_equals_int (mtcp_connection_kept_bytes (conn), 0);
  caps = write_one (conn, peer_fd, frame_new (MTCP_FRAME_CAPS, 0, 0, 0));
  sz[1] = write_one (conn, peer_fd, frame_new (MTCP_FRAME_BUFFER, 1, 0, 500));
  sz[2] = write_one (conn, peer_fd, frame_new (MTCP_FRAME_BUFFER, 2, 1000,
          1000));
  sz[3] = write_one (conn, peer_fd, frame_new (MTCP_FRAME_SKIP, 3, 0, 0));
  sz[4] = write_one (conn, peer_fd, frame_new (MTCP_FRAME_BUFFER, 4, 2000,
          1000));
  sz[5] = write_one (conn, peer_fd, frame_new (MTCP_FRAME_BUFFER, 5, 3000,
          1000));
  kept = caps + sz[1] + sz[2] + sz[3] + sz[4] + sz[5];
  fail_unless_equals_int (mtcp_connection_kept_bytes (conn), kept);

  /* no bound, or nothing due yet: nothing goes */
  fail_unless_equals_int (mtcp_connection_expire_sent (conn, G_MININT64,
          G_MAXSIZE, &bytes), 0);
  fail_unless_equals_int (bytes, 0);
  fail_unless_equals_int (mtcp_connection_expire_sent (conn, 999, G_MAXSIZE,
          NULL), 0);
  fail_unless_equals_int (mtcp_connection_kept_bytes (conn), kept);
  fail_unless_equals_int64 (mtcp_connection_first_due (conn), 1000);

  /* seq 2's deadline passed: it goes, and the untimed buffer before it;
   * the caps stay */
  fail_unless_equals_int (mtcp_connection_expire_sent (conn, 1000,
          G_MAXSIZE, &bytes), 2);
  fail_unless_equals_int (bytes, sz[1] + sz[2]);
  kept -= bytes;
  fail_unless_equals_int (mtcp_connection_kept_bytes (conn), kept);
  fail_unless (mtcp_connection_holds_frame (conn, 0));
  fail_unless (!mtcp_connection_holds_frame (conn, 1));
  fail_unless (!mtcp_connection_holds_frame (conn, 2));
  fail_unless_equals_int64 (mtcp_connection_first_due (conn), 2000);
  /* seq 4's: the SKIP before it too; seq 5 is still due */
  fail_unless_equals_int (mtcp_connection_expire_sent (conn, 2500,
          G_MAXSIZE, &bytes), 2);
  fail_unless_equals_int (bytes, sz[3] + sz[4]);
  kept -= bytes;
  fail_unless_equals_int64 (mtcp_connection_first_due (conn), 3000);

  /* seq 2 again, handed over from a connection that closed, after seq 6:
   * it waits for seq 5 and 6, written before it, to be past due */
  sz[6] = write_one (conn, peer_fd, frame_new (MTCP_FRAME_BUFFER, 6, 5000,
          1000));
  sz[2] = write_one (conn, peer_fd, frame_new (MTCP_FRAME_BUFFER, 2, 1000,
          1000));
  kept += sz[6] + sz[2];
  fail_unless_equals_int64 (mtcp_connection_first_due (conn), 1000);
  fail_unless_equals_int (mtcp_connection_expire_sent (conn, 2500,
          G_MAXSIZE, NULL), 0);
  fail_unless_equals_int (mtcp_connection_expire_sent (conn, 3000,
          G_MAXSIZE, &bytes), 1);
  fail_unless_equals_int (bytes, sz[5]);
  fail_unless_equals_int (mtcp_connection_expire_sent (conn, 5000,
          G_MAXSIZE, &bytes), 2);
  fail_unless_equals_int (bytes, sz[6] + sz[2]);
  kept -= sz[5] + sz[6] + sz[2];
  fail_unless_equals_int (mtcp_connection_kept_bytes (conn), kept);
  fail_unless_equals_int (kept, caps);
  fail_unless_equals_int64 (mtcp_connection_first_due (conn), G_MAXINT64);

  /* by bytes, oldest first, never the caps nor the EOS */
  sz[7] = write_one (conn, peer_fd, frame_new (MTCP_FRAME_BUFFER, 7, 0, 700));
  sz[8] = write_one (conn, peer_fd, frame_new (MTCP_FRAME_BUFFER, 8, 0, 800));
  sz[9] = write_one (conn, peer_fd, frame_new (MTCP_FRAME_BUFFER, 9, 0, 900));
  eos = write_one (conn, peer_fd, frame_new (MTCP_FRAME_EOS, 10, 0, 0));
  kept = caps + sz[7] + sz[8] + sz[9] + eos;
  fail_unless_equals_int (mtcp_connection_kept_bytes (conn), kept);
  /* untimed: no deadline drops them */
  fail_unless_equals_int (mtcp_connection_expire_sent (conn, G_MAXINT64 - 1,
          G_MAXSIZE, NULL), 0);
  fail_unless_equals_int (mtcp_connection_expire_sent (conn, G_MININT64,
          kept, NULL), 0);
  fail_unless_equals_int (mtcp_connection_expire_sent (conn, G_MININT64,
          kept - 1, &bytes), 1);
  fail_unless_equals_int (bytes, sz[7]);
  fail_unless (!mtcp_connection_holds_frame (conn, 7));
  fail_unless (mtcp_connection_holds_frame (conn, 8));
  fail_unless_equals_int (mtcp_connection_expire_sent (conn, G_MININT64, 0,
          &bytes), 2);
  fail_unless_equals_int (bytes, sz[8] + sz[9]);
  fail_unless_equals_int (mtcp_connection_kept_bytes (conn), caps + eos);
  fail_unless_equals_int (mtcp_connection_expire_sent (conn, G_MAXINT64 - 1,
          0, NULL), 0);

  /* queued, not written: not touched */
  mtcp_connection_queue (conn, frame_new (MTCP_FRAME_BUFFER, 11, 100, 100));
  fail_unless_equals_int (mtcp_connection_expire_sent (conn, 1000, 0, NULL),
      0);
  fail_unless (mtcp_connection_holds_frame (conn, 11));
  fail_unless_equals_int64 (mtcp_connection_first_due (conn), 100);

  /* what a hand-over gets: the caps, the EOS, the queued one */
  frames = mtcp_connection_take_unacked (conn);
  fail_unless_equals_int (g_list_length (frames), 3);
  fail_unless_equals_uint64 (((MtcpOutFrame *) frames->data)->seq, 0);
  fail_unless_equals_uint64 (((MtcpOutFrame *) frames->next->data)->seq, 10);
  fail_unless_equals_int (mtcp_connection_kept_bytes (conn), 0);
  fail_unless_equals_int64 (mtcp_connection_first_due (conn), G_MAXINT64);
  fail_unless (!mtcp_connection_holds_frame (conn, 11));
  /* queued again elsewhere (here): held and waiting again */
  while (frames) {
    mtcp_connection_queue (conn, frames->data);
    frames = g_list_delete_link (frames, frames);
  }
  fail_unless (mtcp_connection_holds_frame (conn, 11));
  fail_unless_equals_int64 (mtcp_connection_first_due (conn), 100);
  fail_unless_equals_int (mtcp_connection_flush (conn, NULL), MTCP_IO_DONE);
  mtcp_connection_ack (conn, 11);
  fail_unless_equals_int (mtcp_connection_kept_bytes (conn), 0);
  fail_unless_equals_int64 (mtcp_connection_first_due (conn), G_MAXINT64);

  mtcp_connection_free (conn);
  close (peer_fd);
}

GST_END_TEST;

static gboolean
waits_brute (const MtcpOutFrame * f)
{
  return mtcp_frame_is_sequenced (f->type) && f->due_us != 0 && !f->copied;
}

/* states the model check met where the earliest due time was not the
 * first waiting frame's in the order the connection holds them */
static guint out_of_order_states;

/* What first_due, holds_frame and kept_bytes must answer, by scanning
 * everything the connection holds. */
static void
check_against_scan (MtcpConnection * conn, guint64 max_seq)
{
  GQueue *queues[] = { &conn->sent, &conn->out };
  gint64 first = G_MAXINT64, first_in_order = 0;
  gsize kept = 0;
  guint8 *held = g_new0 (guint8, max_seq + 1);
  guint64 s;
  GList *l;
  guint k;

  for (k = 0; k < 2; k++)
    for (l = queues[k]->head; l; l = l->next) {
      MtcpOutFrame *f = l->data;
      if (waits_brute (f) && first_in_order == 0)
        first_in_order = f->due_us;
      if (waits_brute (f) && f->due_us < first)
        first = f->due_us;
      if (mtcp_frame_is_sequenced (f->type))
        held[f->seq] = 1;
      if (k == 0)
        kept += mtcp_out_frame_size (f);
    }
  fail_unless_equals_int64 (mtcp_connection_first_due (conn), first);
  fail_unless_equals_int (mtcp_connection_kept_bytes (conn), kept);
  if (first_in_order != 0 && first_in_order != first)
    out_of_order_states++;
  /* (one assertion: each is a round trip to the test runner) */
  for (s = 0; s <= max_seq; s++)
    if (!mtcp_connection_holds_frame (conn, s) != !held[s])
      break;
  fail_unless (s > max_seq, "holds_frame (%" G_GUINT64_FORMAT ") is wrong", s);
  g_free (held);
}

/* A model check: over random runs of queueing (in order, copies, frames
 * handed over late), writing, acknowledging, expiring, copying and taking
 * back, first_due, holds_frame and kept_bytes answer what a scan of
 * everything held does, and expiry keeps its bounds. */
GST_START_TEST (test_kept_frames_model_check)
{
  static const guint8 types[] = { MTCP_FRAME_BUFFER, MTCP_FRAME_BUFFER,
    MTCP_FRAME_BUFFER, MTCP_FRAME_BUFFER, MTCP_FRAME_SKIP, MTCP_FRAME_CAPS,
    MTCP_FRAME_EOS
  };
  guint n_expired = 0;
  guint32 seed;

  for (seed = 1; seed <= 8; seed++) {
    GRand *rand = g_rand_new_with_seed (seed);
    MtcpConnection *conn;
    guint64 next_seq = 0, acked = 0, max_seq = 0;
    gint peer_fd, i;

    conn = connection_on_socketpair (&peer_fd);
    for (i = 0; i < 3000; i++) {
      guint op = g_rand_int_range (rand, 0, 100);
      GList *frames;

      if (op < 40) {
        /* a new frame, a copy, or one handed over from another connection */
        guint8 type = types[g_rand_int_range (rand, 0, G_N_ELEMENTS (types))];
        guint64 seq = next_seq;
        gint64 due = 0;
        MtcpOutFrame *f;

        if (g_rand_int_range (rand, 0, 5) == 0 && next_seq > 0)
          seq = g_rand_int_range (rand, 0, next_seq);
        else
          next_seq++;
        if (type == MTCP_FRAME_BUFFER && g_rand_int_range (rand, 0, 4) > 0)
          due = 1000 + seq * 100 + g_rand_int_range (rand, -300, 300);
        f = frame_new (type, seq, due, g_rand_int_range (rand, 0, 400));
        f->copied = g_rand_int_range (rand, 0, 6) == 0;
        mtcp_connection_queue (conn, f);
        max_seq = MAX (max_seq, seq);
      } else if (op < 60) {
        fail_unless_equals_int (mtcp_connection_flush (conn, NULL),
            MTCP_IO_DONE);
        drain (peer_fd);
      } else if (op < 70) {
        acked += g_rand_int_range (rand, 0, 4);
        mtcp_connection_ack (conn, acked);
      } else if (op < 82) {
        gint64 bound = g_rand_int_range (rand, 0, 4) == 0 ? G_MININT64 :
            1000 + (gint64) acked *100 + g_rand_int_range (rand, -500, 1500);
        gsize most = g_rand_int_range (rand, 0, 3) == 0 ? G_MAXSIZE :
            (gsize) g_rand_int_range (rand, 0, 6000);
        gsize before = mtcp_connection_kept_bytes (conn), bytes;
        guint n_before = g_queue_get_length (&conn->sent), n;
        GList *l;

        n = mtcp_connection_expire_sent (conn, bound, most, &bytes);
        n_expired += n;
        fail_unless_equals_int (g_queue_get_length (&conn->sent),
            n_before - n);
        fail_unless_equals_int (mtcp_connection_kept_bytes (conn),
            before - bytes);
        /* the byte bound holds unless only caps and EOS are left */
        if (mtcp_connection_kept_bytes (conn) > most)
          for (l = conn->sent.head; l; l = l->next)
            fail_unless (((MtcpOutFrame *) l->data)->type == MTCP_FRAME_CAPS
                || ((MtcpOutFrame *) l->data)->type == MTCP_FRAME_EOS);
        /* the oldest frame written with a due time is not past it */
        for (l = conn->sent.head; l; l = l->next) {
          MtcpOutFrame *f = l->data;
          if (f->due_us != 0) {
            fail_unless (f->due_us > bound);
            break;
          }
        }
      } else if (op < 88) {
        frames = mtcp_connection_copy_frames_from (conn,
            g_rand_int_range (rand, 0, next_seq + 1));
        g_list_free_full (frames, (GDestroyNotify) mtcp_out_frame_free);
      } else if (op < 96) {
        frames = mtcp_connection_copy_frames_due (conn,
            g_rand_int_range (rand, 0, conn->bytes_sent + 1), G_MAXINT64,
            1000 + (gint64) acked *100 + g_rand_int_range (rand, 0, 2000));
        g_list_free_full (frames, (GDestroyNotify) mtcp_out_frame_free);
      } else {
        /* a hand-over: taken back, some queued again */
        frames = mtcp_connection_take_unacked (conn);
        fail_unless_equals_int (mtcp_connection_kept_bytes (conn), 0);
        while (frames) {
          if (g_rand_boolean (rand))
            mtcp_connection_queue (conn, frames->data);
          else
            mtcp_out_frame_free (frames->data);
          frames = g_list_delete_link (frames, frames);
        }
      }
      check_against_scan (conn, max_seq);
    }
    mtcp_connection_free (conn);
    close (peer_fd);
    g_rand_free (rand);
  }
  /* the runs met what they are for */
  GST_INFO ("%u frames expired, %u states out of order", n_expired,
      out_of_order_states);
  fail_unless (n_expired > 1000);
  fail_unless (out_of_order_states > 100);
}

GST_END_TEST;

/* ---- TLS ---- */

/* A self-signed certificate with its key, made with openssl; NULL when
 * openssl is not installed. */
static GTlsCertificate *
make_certificate (void)
{
  gchar *openssl = g_find_program_in_path ("openssl");
  gchar *dir, *cmd, *cert_file, *key_file;
  GTlsCertificate *cert;
  GError *err = NULL;
  gint status = -1;

  if (openssl == NULL)
    return NULL;
  dir = g_dir_make_tmp ("multitcp-conn-tls-XXXXXX", NULL);
  fail_unless (dir != NULL);
  cert_file = g_build_filename (dir, "cert.pem", NULL);
  key_file = g_build_filename (dir, "key.pem", NULL);
  cmd = g_strdup_printf ("%s req -x509 -newkey rsa:2048 -nodes -days 1 "
      "-subj /CN=localhost -keyout %s -out %s", openssl, key_file, cert_file);
  fail_unless (g_spawn_command_line_sync (cmd, NULL, NULL, &status, NULL));
  fail_unless (g_spawn_check_wait_status (status, NULL), "%s failed", cmd);
  cert = g_tls_certificate_new_from_files (cert_file, key_file, &err);
  fail_unless (cert != NULL, "%s", err ? err->message : "");
  g_unlink (cert_file);
  g_unlink (key_file);
  g_rmdir (dir);
  g_free (cmd);
  g_free (cert_file);
  g_free (key_file);
  g_free (dir);
  g_free (openssl);
  return cert;
}

static guint
count_dir_entries (const gchar * path)
{
  GDir *dir = g_dir_open (path, 0, NULL);
  guint n = 0;

  fail_unless (dir != NULL);
  while (g_dir_read_name (dir))
    n++;
  g_dir_close (dir);
  return n;
}

static guint
thread_count (void)
{
  return count_dir_entries ("/proc/self/task");
}

/* Iterate the default context for @ms. */
static void
spin (guint ms)
{
  gint64 end = g_get_monotonic_time () + ms * 1000;

  while (g_get_monotonic_time () < end) {
    guint i;
    for (i = 0; i < 100 && g_main_context_iteration (NULL, FALSE); i++);
    g_usleep (5000);
  }
}

/* Iterate the default context until the process has at most @threads
 * threads, at most @ms; the count at the end. */
static guint
spin_until_threads (guint threads, guint ms)
{
  gint64 end = g_get_monotonic_time () + ms * 1000;

  while (thread_count () > threads && g_get_monotonic_time () < end)
    spin (20);
  return thread_count ();
}

/* A listening TCP socket on 127.0.0.1, any port. */
static GSocket *
listen_local (void)
{
  GInetAddress *lo = g_inet_address_new_loopback (G_SOCKET_FAMILY_IPV4);
  GSocketAddress *addr = g_inet_socket_address_new (lo, 0);
  GSocket *listener = g_socket_new (G_SOCKET_FAMILY_IPV4,
      G_SOCKET_TYPE_STREAM, G_SOCKET_PROTOCOL_TCP, NULL);

  fail_unless (listener != NULL);
  fail_unless (g_socket_bind (listener, addr, TRUE, NULL));
  fail_unless (g_socket_listen (listener, NULL));
  g_object_unref (addr);
  g_object_unref (lo);
  return listener;
}

/* A raw TCP client of @listener (a plain fd), and the accepted end. */
static gint
connect_raw (GSocket * listener, GSocket ** accepted)
{
  GSocketAddress *addr = g_socket_get_local_address (listener, NULL);
  struct sockaddr_in sin;
  gint fd = socket (AF_INET, SOCK_STREAM, 0);

  fail_unless (g_socket_address_to_native (addr, &sin, sizeof (sin), NULL));
  fail_unless (connect (fd, (struct sockaddr *) &sin, sizeof (sin)) == 0);
  *accepted = g_socket_accept (listener, NULL, NULL);
  fail_unless (*accepted != NULL);
  g_object_unref (addr);
  return fd;
}

/* The owner's callback: once the handshake failed, it stops listening. */
static gboolean
ignore_events (MtcpConnection * conn, GIOCondition cond, gpointer user_data)
{
  if (conn->tls_error == NULL)
    return TRUE;
  mtcp_connection_detach (conn);
  return FALSE;
}

/* Whether @fd shows the end (EOF or reset) within @ms. */
static gboolean
peer_sees_end (gint fd, guint ms)
{
  gint64 end = g_get_monotonic_time () + ms * 1000;

  while (g_get_monotonic_time () < end) {
    struct pollfd pfd = { fd, POLLIN, 0 };
    gchar buf[4096];
    gssize n;

    spin (1);
    if (poll (&pfd, 1, 20) <= 0)
      continue;
    n = recv (fd, buf, sizeof (buf), MSG_DONTWAIT);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
      return TRUE;
  }
  return FALSE;
}

#define SILENT_PEERS 4

/* Receivers that connect and never speak TLS: each holds one of GLib's
 * worker threads in its handshake. Freeing the connection ends it: the
 * peer sees the end at once, the worker threads go back (the thread count
 * is what it was), and the sockets are closed once the handshakes' callbacks
 * ran. */
GST_START_TEST (test_tls_silent_peer_freed_releases_thread_and_socket)
{
  GTlsCertificate *cert;
  MtcpTlsConfig tls = { 0, };
  MtcpConnection *conns[SILENT_PEERS];
  gint peers[SILENT_PEERS];
  GSocket *listener, *accepted;
  guint base_threads, base_fds, during, after, i;
  GError *err = NULL;

  if (!g_tls_backend_supports_tls (g_tls_backend_get_default ())) {
    g_print ("SKIP %s: no TLS backend (glib-networking)\n", __FUNCTION__);
    return;
  }
  cert = make_certificate ();
  if (cert == NULL) {
    g_print ("SKIP %s: openssl is not installed\n", __FUNCTION__);
    return;
  }
  tls.server = TRUE;
  tls.certificate = cert;
  listener = listen_local ();
  /* idle pool threads end at once instead of lingering for reuse */
  g_thread_pool_set_max_unused_threads (0);

  /* warm up (TLS backend, the task pool): a peer that hangs up at once */
  peers[0] = connect_raw (listener, &accepted);
  conns[0] = mtcp_connection_new (accepted, 1 << 20);
  g_object_unref (accepted);
  mtcp_connection_attach (conns[0], NULL, ignore_events, NULL);
  fail_unless (mtcp_connection_start_tls (conns[0], &tls, &err));
  close (peers[0]);
  for (i = 0; i < 300 && conns[0]->tls_handshaking; i++)
    spin (10);
  fail_unless (!conns[0]->tls_handshaking);
  fail_unless (conns[0]->tls_error != NULL);
  mtcp_connection_free (conns[0]);
  spin (1500);
  base_threads = thread_count ();
  base_fds = count_dir_entries ("/proc/self/fd");

  for (i = 0; i < SILENT_PEERS; i++) {
    peers[i] = connect_raw (listener, &accepted);
    conns[i] = mtcp_connection_new (accepted, 1 << 20);
    g_object_unref (accepted);
    mtcp_connection_attach (conns[i], NULL, ignore_events, NULL);
    fail_unless (mtcp_connection_start_tls (conns[i], &tls, &err));
  }
  spin (200);
  during = thread_count ();
  GST_INFO ("threads: %u, %u with %u silent TLS peers", base_threads, during,
      SILENT_PEERS);
  /* the handshakes hold worker threads: what is measured below */
  fail_unless (during > base_threads, "%u threads, %u before", during,
      base_threads);
  for (i = 0; i < SILENT_PEERS; i++) {
    fail_unless (conns[i]->tls_handshaking);
    mtcp_connection_free (conns[i]);
  }
  for (i = 0; i < SILENT_PEERS; i++) {
    fail_unless (peer_sees_end (peers[i], 2000),
        "peer %u still connected 2 s after its connection was freed", i);
  }
  after = spin_until_threads (base_threads, 4000);
  fail_unless (after <= base_threads, "%u threads 4 s after the connections "
      "were freed, %u before", after, base_threads);
  /* the callbacks ran and closed the sockets (the peers' fds aside) */
  spin (100);
  fail_unless_equals_int (count_dir_entries ("/proc/self/fd"),
      base_fds + SILENT_PEERS);
  for (i = 0; i < SILENT_PEERS; i++)
    close (peers[i]);
  g_object_unref (listener);
  g_object_unref (cert);
}

GST_END_TEST;

typedef struct {
  MtcpConnection *conn;
  MtcpTlsConfig tls;
  GCancellable *cancellable;
  gboolean ok;
  GError *err;
} BlockingHandshake;

static gpointer
blocking_handshake (gpointer data)
{
  BlockingHandshake *h = data;

  h->ok = mtcp_connection_handshake_tls_blocking (h->conn, &h->tls,
      h->cancellable, &h->err);
  return NULL;
}

/* The blocking handshake of a client whose server never speaks returns
 * when its cancellable is cancelled. */
GST_START_TEST (test_tls_blocking_handshake_cancelled)
{
  BlockingHandshake h = { 0, };
  GSocket *listener, *client, *accepted;
  GSocketAddress *addr;
  GThread *thread;
  gint64 start;

  if (!g_tls_backend_supports_tls (g_tls_backend_get_default ())) {
    g_print ("SKIP %s: no TLS backend (glib-networking)\n", __FUNCTION__);
    return;
  }
  /* idle pool threads end at once (LeakSanitizer trips on them at exit) */
  g_thread_pool_set_max_unused_threads (0);
  listener = listen_local ();
  addr = g_socket_get_local_address (listener, NULL);
  client = g_socket_new (G_SOCKET_FAMILY_IPV4, G_SOCKET_TYPE_STREAM,
      G_SOCKET_PROTOCOL_TCP, NULL);
  fail_unless (g_socket_connect (client, addr, NULL, NULL));
  accepted = g_socket_accept (listener, NULL, NULL);
  fail_unless (accepted != NULL);
  h.conn = mtcp_connection_new (client, 1 << 20);
  h.tls.server_name = "localhost";
  h.tls.port = 1;
  h.cancellable = g_cancellable_new ();
  thread = g_thread_new ("handshake", blocking_handshake, &h);
  /* its ClientHello is there: it waits for an answer that never comes
   * (loading the system's CAs first can take seconds under ASan) */
  fail_unless (g_socket_condition_timed_wait (accepted, G_IO_IN,
          20 * G_USEC_PER_SEC, NULL, NULL));
  g_usleep (200000);
  start = g_get_monotonic_time ();
  g_cancellable_cancel (h.cancellable);
  g_thread_join (thread);
  fail_unless (g_get_monotonic_time () - start < 2 * G_USEC_PER_SEC);
  fail_unless (!h.ok);
  fail_unless (h.err != NULL);
  GST_INFO ("cancelled: %s", h.err->message);
  g_clear_error (&h.err);
  mtcp_connection_free (h.conn);
  g_object_unref (h.cancellable);
  g_object_unref (accepted);
  g_object_unref (client);
  g_object_unref (addr);
  g_object_unref (listener);
  /* the handshake's worker thread ends (idle for half a second) */
  g_usleep (G_USEC_PER_SEC);
}

GST_END_TEST;

static Suite *
connection_suite (void)
{
  Suite *s = suite_create ("connection");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_padding_frame);
  tcase_add_test (tc, test_frames_carry_due_time);
  tcase_add_test (tc, test_copies_what_tcp_has_not_delivered_near_deadline);
  tcase_add_test (tc, test_hedged_frames_not_copied_again);
  tcase_add_test (tc, test_copy_target_most_room_not_repairing);
  tcase_add_test (tc, test_expire_sent_by_deadline_and_bytes);
  tcase_add_test (tc, test_kept_frames_model_check);
  tcase_add_test (tc, test_tls_silent_peer_freed_releases_thread_and_socket);
  tcase_add_test (tc, test_tls_blocking_handshake_cancelled);
  return s;
}

GST_CHECK_MAIN (connection);

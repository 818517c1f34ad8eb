/* Unit tests of what a connection keeps of the frames it was given: due
 * times from the send queue, where each written frame ends in the byte
 * stream, and which frames go out again before their deadline. */
#include <gst/check/gstcheck.h>
#include <sys/socket.h>

#include "mtcpconnection.h"
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

static Suite *
connection_suite (void)
{
  Suite *s = suite_create ("connection");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_frames_carry_due_time);
  tcase_add_test (tc, test_copies_what_tcp_has_not_delivered_near_deadline);
  tcase_add_test (tc, test_hedged_frames_not_copied_again);
  tcase_add_test (tc, test_copy_target_most_room_not_repairing);
  return s;
}

GST_CHECK_MAIN (connection);

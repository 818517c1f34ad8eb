/* multitcp
 * Copyright (C) 2026 the multitcp authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
/* What a bad network does to a session, over loopback: a receiver that
 * stops reading, a blocked or half-open connection, a frame stuck on one
 * connection (hedges, copies ahead of the deadline), connections killed
 * and every connection cut at once: bounded memory, nothing lost. */
#include <gst/check/gstcheck.h>
#include <gio/gio.h>
#include <glib/gstdio.h>
#include <sys/socket.h>
#include <unistd.h>
#include <gst/app/gstappsrc.h>
#include <gst/app/gstappsink.h>
#include <string.h>
#include <sys/resource.h>
#include <math.h>

#include "mtcpprotocol.h"
#include "mtcptestutil.h"
#include "mtcpserver.h"

/* A receiver with a small receive buffer that says HELLO and never reads:
 * the sink's one connection to it. */
static GSocket *
stalled_receiver_join (Sender * s)
{
  GSocket *sock = raw_connect (sender_port (s));
  guint8 frame[64];

  g_socket_set_option (sock, SOL_SOCKET, SO_RCVBUF, 4096, NULL);
  write_hello (frame, MTCP_MAGIC, MTCP_VERSION);
  raw_send (sock, frame, MTCP_HELLO_FRAME_SIZE);
  wait_for_connections (s->sink, 1);
  return sock;
}

/* A receiver that joins and never reads must not grow the sink's memory. */
GST_START_TEST (test_stalled_receiver_memory_bounded)
{
  Sender *s = sender_new ("max-session-bytes=2000000 max-session-lag=-1 "
      "notsent-lowat=16384 idle-timeout=0");
  GSocket *sock = stalled_receiver_join (s);
  guint i;
  guint64 max_queue = 0, dropped;
  GstCaps *caps = gst_caps_new_empty_simple ("application/x-test");

  gst_app_src_set_caps (GST_APP_SRC (s->appsrc), caps);
  /* 60 MB: 2000 buffers of 30 kB, a keyframe every 25 */
  for (i = 0; i < 2000; i++) {
    GstBuffer *buf = gst_buffer_new_allocate (NULL, 30000, NULL);
    GST_BUFFER_PTS (buf) = i * 10 * GST_MSECOND;
    if (i % 25 != 0)
      GST_BUFFER_FLAG_SET (buf, GST_BUFFER_FLAG_DELTA_UNIT);
    fail_unless_equals_int (gst_app_src_push_buffer (GST_APP_SRC (s->appsrc),
            buf), GST_FLOW_OK);
    if (i % 50 == 49) {
      /* let the sink's streaming thread catch up, then look */
      while (stats_uint64 (s->sink, "bytes-pushed") < (guint64) (i + 1) * 30000)
        g_usleep (1000);
      max_queue = MAX (max_queue, stats_uint64 (s->sink, "queue-bytes"));
    }
  }
  dropped = stats_uint64 (s->sink, "buffers-dropped");
  /* bound + one keyframe interval (25 x 30 kB) + what is in flight */
  fail_unless (max_queue <= 2000000 + 25 * 30000 + 200000,
      "queue reached %" G_GUINT64_FORMAT " bytes", max_queue);
  fail_unless (dropped > 1500, "only %" G_GUINT64_FORMAT " dropped", dropped);

  gst_caps_unref (caps);
  g_object_unref (sock);
  sender_free (s);
}

GST_END_TEST;

/* A connection that cannot send holds at most two unsent marks of frames
 * (what it had when it last took frames, and one take), not a 32 kB run:
 * the rest waits in the shared queue for the connections that can. Held:
 * written and not yet readable at the receiver, or queued in user space;
 * one more mark for bytes in flight (seen under ASan). */
/* Up to @most bytes of what waits on @rc into its frame reader; then
 * TRUE if an EOS frame is among the frames read (the others are dropped,
 * not acknowledged). */
static gboolean
raw_conn_read_some (RawConn * rc, gsize most)
{
  MtcpFrameHeader hdr;
  const guint8 *body;
  gboolean eos = FALSE;

  if (g_socket_condition_check (rc->sock, G_IO_IN)) {
    gsize space;
    guint8 *dst = mtcp_frame_reader_space (rc->reader, &space);
    gssize n = g_socket_receive (rc->sock, (gchar *) dst, MIN (space, most),
        NULL, NULL);
    if (n > 0)
      mtcp_frame_reader_commit (rc->reader, n);
  }
  while (mtcp_frame_reader_next (rc->reader, &hdr, &body, NULL) ==
      MTCP_PARSE_OK)
    eos |= hdr.type == MTCP_FRAME_EOS;
  return eos;
}

/* A live stream to a receiver that reads slowly (300 ms latency): the
 * frames that could only arrive late are held back and skipped; when the
 * stream ends (no buffer comes that would make the session skip) the EOS
 * still goes out, behind a SKIP, once the receiver reads again. */
GST_START_TEST (test_live_eos_not_stuck_behind_late_frames)
{
  Sender *s = sender_new ("max-session-lag=5000000000");
  GstCaps *caps = gst_caps_new_empty_simple ("application/x-test");
  GRand *rand = g_rand_new_with_seed (5);
  RawConn rc;
  guint8 sid[MTCP_SESSION_ID_SIZE];
  gboolean eos = FALSE;
  gint64 start, until;
  guint i;

  raw_conn_open_full (&rc, sender_port (s), NULL, 0, 300, 4096, sid);
  gst_app_src_set_caps (GST_APP_SRC (s->appsrc), caps);
  gst_caps_unref (caps);
  /* 2 s of 8 kB every 33 ms; the receiver takes 2 kB every 100 ms */
  start = g_get_monotonic_time ();
  for (i = 0; i < 60; i++) {
    GstBuffer *buf = make_payload (rand, i, 8000);
    GST_BUFFER_PTS (buf) = i * 33 * GST_MSECOND;
    GST_BUFFER_DURATION (buf) = 33 * GST_MSECOND;
    if (i % 30)
      GST_BUFFER_FLAG_SET (buf, GST_BUFFER_FLAG_DELTA_UNIT);
    pace_live (start, i, 33000);
    fail_unless_equals_int (gst_app_src_push_buffer (GST_APP_SRC (s->appsrc),
            buf), GST_FLOW_OK);
    if (i % 3 == 0)
      eos |= raw_conn_read_some (&rc, 2000);
  }
  gst_app_src_end_of_stream (GST_APP_SRC (s->appsrc));
  /* the stream has ended: whatever waits is past its deadline by now */
  g_usleep (G_USEC_PER_SEC);
  until = g_get_monotonic_time () + 5 * G_USEC_PER_SEC;
  while (!eos && g_get_monotonic_time () < until) {
    eos = raw_conn_read_some (&rc, G_MAXSIZE);
    g_usleep (20000);
  }
  fail_unless (eos, "no EOS within 5 s of the stream's end");
  fail_unless (sink_stats_sum (s->sink, FALSE, "skips") >= 1);
  raw_conn_close (&rc);
  g_rand_free (rand);
  sender_free (s);
}

GST_END_TEST;

GST_START_TEST (test_blocked_connection_holds_little)
{
  Sender *s = sender_new ("max-session-bytes=2000000 max-session-lag=-1 "
      "notsent-lowat=4096 idle-timeout=0");
  GSocket *sock = stalled_receiver_join (s);
  guint i;
  guint64 held = 0, previous = G_MAXUINT64, in_queue;
  gint tries;
  GstCaps *caps = gst_caps_new_empty_simple ("application/x-test");

  gst_app_src_set_caps (GST_APP_SRC (s->appsrc), caps);
  for (i = 0; i < 300; i++) {
    GstBuffer *buf = gst_buffer_new_allocate (NULL, 1000, NULL);
    GST_BUFFER_PTS (buf) = i * 10 * GST_MSECOND;
    fail_unless_equals_int (gst_app_src_push_buffer (GST_APP_SRC (s->appsrc),
            buf), GST_FLOW_OK);
  }
  /* until the receiver's kernel has taken what it will take */
  for (tries = 0; tries < 100 && held != previous; tries++) {
    previous = held;
    g_usleep (50000);
    held = sink_stats_sum (s->sink, TRUE, "bytes-sent") +
        sink_stats_sum (s->sink, TRUE, "bytes-queued") -
        g_socket_get_available_bytes (sock);
  }
  in_queue = stats_uint64 (s->sink, "queue-bytes");
  GST_INFO ("the blocked connection holds %" G_GUINT64_FORMAT " bytes, the "
      "queue %" G_GUINT64_FORMAT, held, in_queue);
  fail_unless (held <= 3 * 4096 + 1100, "it holds %" G_GUINT64_FORMAT
      " bytes", held);
  fail_unless (in_queue > 200000);

  gst_caps_unref (caps);
  g_object_unref (sock);
  sender_free (s);
}

GST_END_TEST;

/* A receiver that joins and then falls silent (a half-open connection) is
 * found by its missing feedback within the idle timeout. */
GST_START_TEST (test_half_open_connection_is_found)
{
  Sender *s = sender_new ("idle-timeout=1000 session-timeout=3000");
  guint8 sid[MTCP_SESSION_ID_SIZE], sid2[MTCP_SESSION_ID_SIZE];
  RawConn live, dead;
  gint64 start, gone;

  /* one connection silent while the receiver is heard on the other: a
   * half-open one, dropped after idle-timeout */
  raw_conn_open (&live, sender_port (s), NULL, 0, sid);
  raw_conn_open (&dead, sender_port (s), sid, 0, sid2);
  wait_for_connections (s->sink, 2);
  start = g_get_monotonic_time ();
  while (sink_connections (s->sink) > 1 &&
      g_get_monotonic_time () - start < 5 * G_USEC_PER_SEC) {
    raw_conn_feedback (&live, MTCP_TIME_NONE, 0);
    g_usleep (100000);
  }
  fail_unless_equals_int (sink_connections (s->sink), 1);
  /* found after the timeout, not before */
  fail_unless (g_get_monotonic_time () - start >= 900000);

  /* every connection silent: an outage of the path, not a dead
   * connection; it waits up to session-timeout, not idle-timeout */
  start = g_get_monotonic_time ();
  while (sink_connections (s->sink) > 0 &&
      g_get_monotonic_time () - start < 6 * G_USEC_PER_SEC)
    g_usleep (20000);
  gone = g_get_monotonic_time () - start;
  fail_unless_equals_int (sink_connections (s->sink), 0);
  fail_unless (gone >= 2500000, "closed after %" G_GINT64_FORMAT " ms",
      gone / 1000);
  raw_conn_close (&live);
  raw_conn_close (&dead);
  sender_free (s);
}

GST_END_TEST;

#define STUCK_SEQ 5

/* The receiver says it holds buffers behind seq 5 and seq 5 has not come:
 * after 200 ms the sink sends it again on the other connection, with every
 * later frame the same connection holds (stuck behind the same hole), and
 * nothing else twice. */
GST_START_TEST (test_stuck_frame_goes_out_on_another_connection)
{
  /* hedges are paid from copy-overhead: here up to the whole stream, as
   * most of these 20 frames are copied (test_hedges_within_copy_budget
   * checks the default's bound) */
  Sender *s = sender_new ("copy-overhead=100");
  gint port = sender_port (s);
  GHashTable *arrivals = g_hash_table_new (NULL, NULL);
  GstCaps *caps = gst_caps_new_empty_simple ("video/x-test");
  guint8 sid[MTCP_SESSION_ID_SIZE];
  RawConn rc[2];
  guint i, holder, held = 0, copies = 0, seq;
  guint brought_by[20];
  gint64 until;

  raw_conn_open (&rc[0], port, NULL, 0, sid);
  raw_conn_open (&rc[1], port, sid, 0, sid);
  wait_for_connections (s->sink, 2);
  gst_app_src_set_caps (GST_APP_SRC (s->appsrc), caps);
  gst_caps_unref (caps);
  for (i = 0; i < 20; i++) {
    GstBuffer *buf = gst_buffer_new_allocate (NULL, 1000, NULL);
    GST_BUFFER_PTS (buf) = i * 33 * GST_MSECOND;
    fail_unless_equals_int (gst_app_src_push_buffer (GST_APP_SRC (s->appsrc),
            buf), GST_FLOW_OK);
  }
  until = g_get_monotonic_time () + 5 * G_USEC_PER_SEC;
  while (g_hash_table_size (arrivals) < 20 && g_get_monotonic_time () < until)
    for (i = 0; i < 2; i++)
      raw_conn_read (&rc[i], i, arrivals, 20000);
  fail_unless_equals_int (g_hash_table_size (arrivals), 20);
  /* seq 0 is the caps: the buffers are 1..20 */
  for (seq = 1; seq <= 20; seq++)
    brought_by[seq - 1] = GPOINTER_TO_UINT (g_hash_table_lookup (arrivals,
            GUINT_TO_POINTER (seq + 1)));
  holder = brought_by[STUCK_SEQ - 1];
  fail_unless (holder == 1 || holder == 2);
  for (seq = STUCK_SEQ; seq <= 20; seq++)
    held += brought_by[seq - 1] == holder;

  /* "everything up to 4, and more behind a hole", every 100 ms, until the
   * holder's frames have come again */
  until = g_get_monotonic_time () + 3 * G_USEC_PER_SEC;
  while (copies < held && g_get_monotonic_time () < until) {
    raw_conn_feedback (&rc[0], STUCK_SEQ - 1, 19 * 1000);
    raw_conn_feedback (&rc[1], STUCK_SEQ - 1, 19 * 1000);
    for (i = 0; i < 2; i++)
      raw_conn_read (&rc[i], i, arrivals, 50000);
    copies = 0;
    for (seq = 1; seq <= 20; seq++)
      copies += GPOINTER_TO_UINT (g_hash_table_lookup (arrivals,
              GUINT_TO_POINTER (seq + 1))) == 3;
  }
  /* a little longer: nothing else comes twice */
  for (i = 0; i < 4; i++)
    raw_conn_read (&rc[i % 2], i % 2, arrivals, 50000);
  for (seq = 1; seq <= 20; seq++) {
    guint mask = GPOINTER_TO_UINT (g_hash_table_lookup (arrivals,
            GUINT_TO_POINTER (seq + 1)));
    gboolean stuck = seq >= STUCK_SEQ && brought_by[seq - 1] == holder;

    fail_unless_equals_int (mask, stuck ? 3 : brought_by[seq - 1]);
  }
  fail_unless (held >= 1);
  fail_unless (sink_stats_sum (s->sink, FALSE, "frames-hedged") >= held);

  for (i = 0; i < 2; i++)
    raw_conn_close (&rc[i]);
  g_hash_table_unref (arrivals);
  sender_free (s);
}

GST_END_TEST;

#define DEADLINE_FRAMES 60

#define DEADLINE_LATENCY_MS 300

/* Two connections of a receiver with 300 ms of latency; the first reads
 * nothing and takes little (the smallest receive buffer), so what the sink
 * writes to it beyond that stays unacknowledged by TCP. With copies
 * allowed, those frames reach the receiver on the second connection before
 * their deadline, without a word from the receiver (no FEEDBACK); with
 * copy-overhead=0 they do not come. */
static guint
frames_missing_on_second_connection (guint copy_overhead, guint64 * copied)
{
  gchar *props = g_strdup_printf ("idle-timeout=0 copy-overhead=%u",
      copy_overhead);
  Sender *s = sender_new (props);
  gint port = sender_port (s);
  GHashTable *arrivals = g_hash_table_new (NULL, NULL);
  GstCaps *caps = gst_caps_new_empty_simple ("video/x-test");
  guint8 sid[MTCP_SESSION_ID_SIZE];
  RawConn rc[2];
  guint i, missing = 0;
  gint64 start;

  raw_conn_open_full (&rc[0], port, NULL, 0, DEADLINE_LATENCY_MS, 1, sid);
  raw_conn_open_full (&rc[1], port, sid, 0, DEADLINE_LATENCY_MS, 0, sid);
  wait_for_connections (s->sink, 2);
  gst_app_src_set_caps (GST_APP_SRC (s->appsrc), caps);
  gst_caps_unref (caps);
  /* live: one 1 kB frame every 33 ms, read on the second connection only */
  start = g_get_monotonic_time ();
  for (i = 0; i < DEADLINE_FRAMES; i++) {
    GstBuffer *buf = gst_buffer_new_allocate (NULL, 1000, NULL);
    GST_BUFFER_PTS (buf) = i * 33 * GST_MSECOND;
    fail_unless_equals_int (gst_app_src_push_buffer (GST_APP_SRC (s->appsrc),
            buf), GST_FLOW_OK);
    raw_conn_read_until (&rc[1], 1, arrivals, start + (i + 1) * 33000);
  }
  /* until the last frame's deadline */
  raw_conn_read_until (&rc[1], 1, arrivals, g_get_monotonic_time () +
      DEADLINE_LATENCY_MS * 1000);
  /* seq 0 is the caps: the buffers are 1..DEADLINE_FRAMES (keys seq + 1) */
  for (i = 1; i <= DEADLINE_FRAMES; i++)
    missing += !g_hash_table_contains (arrivals, GUINT_TO_POINTER (i + 1));
  *copied = sink_stats_sum (s->sink, FALSE, "frames-copied");
  for (i = 0; i < 2; i++)
    raw_conn_close (&rc[i]);
  g_hash_table_unref (arrivals);
  sender_free (s);
  g_free (props);
  return missing;
}

GST_START_TEST (test_frames_near_deadline_copied_to_another_connection)
{
  guint64 copied, copied_off;
  guint missing = frames_missing_on_second_connection (100, &copied);
  guint missing_off = frames_missing_on_second_connection (0, &copied_off);

  GST_INFO ("missing on the second connection: %u with copies (%"
      G_GUINT64_FORMAT " copied), %u without", missing, copied, missing_off);
  /* without copies the first connection keeps what it took (5 of 60 here) */
  fail_unless (missing_off > 2);
  fail_unless_equals_uint64 (copied_off, 0);
  /* with them only what its receive buffer took (4 kB: part of a frame)
   * may be missing */
  fail_unless (missing <= 1);
  fail_unless (copied >= missing_off - 1);
}

GST_END_TEST;

/* ---- connections that die ---- */

typedef struct {
  gint port;
  guint kills;
  guint every_ms;
  gboolean all;                 /* every connection at once: an outage */
} Killer;

/* Aborts established connections to @port with ss -K (root only). */
static gboolean
kill_connections (gint port, gboolean all)
{
  gchar *cmd, *out = NULL;
  gint status = -1;
  gboolean ok;

  if (all) {
    cmd = g_strdup_printf ("ss -K -tn state established dst 127.0.0.1 "
        "dport = :%d", port);
  } else {
    /* one of them: the first source port ss lists */
    cmd = g_strdup_printf ("sh -c \"ss -K -tn state established dst "
        "127.0.0.1 dport = :%d sport = :$(ss -Htn state established dst "
        "127.0.0.1 dport = :%d | awk 'NR==1{n=split($3,a,\\\":\\\"); "
        "print a[n]}')\"", port, port);
  }
  ok = g_spawn_command_line_sync (cmd, &out, NULL, &status, NULL) &&
      status == 0;
  g_free (out);
  g_free (cmd);
  return ok;
}

static gpointer
killer_thread (gpointer data)
{
  Killer *k = data;
  guint i;
  for (i = 0; i < k->kills; i++) {
    g_usleep (k->every_ms * 1000);
    kill_connections (k->port, k->all);
  }
  return NULL;
}

static gboolean
can_kill_connections (void)
{
  gchar *ss = g_find_program_in_path ("ss");
  gboolean ok = geteuid () == 0 && ss != NULL;

  g_free (ss);
  if (!ok)
    g_printerr ("SKIP: killing connections needs root and ss (iproute2)\n");
  return ok;
}

static void
stream_while_killing (Killer * killer, guint n, guint connections)
{
  Sender *s = sender_new (NULL);
  Receiver *r = receiver_new (sender_port (s), connections, 5000);
  GThread *thread;
  GstStructure *st = NULL;
  gchar *session_before, *session_after;
  gint64 start;
  guint i;

  wait_for_connections (s->sink, connections);
  g_object_get (r->src, "stats", &st, NULL);
  session_before = g_strdup (gst_structure_get_string (st, "session-id"));
  gst_structure_free (st);
  killer->port = sender_port (s);
  thread = g_thread_new ("killer", killer_thread, killer);
  start = g_get_monotonic_time ();
  for (i = 0; i < n; i++) {
    pace_live (start, i, 10000);
    push_tagged (s, i, 4000, 0);
  }
  g_thread_join (thread);
  gst_app_src_end_of_stream (GST_APP_SRC (s->appsrc));
  expect_tagged (r, n);
  fail_unless (stats_uint64 (r->src, "connections-lost") >= killer->kills);
  g_object_get (r->src, "stats", &st, NULL);
  session_after = g_strdup (gst_structure_get_string (st, "session-id"));
  gst_structure_free (st);
  /* the same session all along: the sink kept it through the outage */
  fail_unless_equals_string (session_before, session_after);
  g_free (session_before);
  g_free (session_after);
  receiver_free (r);
  sender_free (s);
}

GST_START_TEST (test_killed_connections_lose_nothing)
{
  Killer k = { 0, 12, 200, FALSE };
  if (!can_kill_connections ())
    return;
  stream_while_killing (&k, 400, 4);
}

GST_END_TEST;

GST_START_TEST (test_outage_of_every_connection_loses_nothing)
{
  Killer k = { 0, 3, 1000, TRUE };
  if (!can_kill_connections ())
    return;
  stream_while_killing (&k, 400, 3);
}

GST_END_TEST;

static Suite *
repair_elements_suite (void)
{
  Suite *s = suite_create ("repair_elements");
  TCase *tc = tcase_create ("loopback");

  suite_add_tcase (s, tc);
  tcase_set_timeout (tc, 120);
  tcase_add_test (tc, test_stalled_receiver_memory_bounded);
  tcase_add_test (tc, test_blocked_connection_holds_little);
  tcase_add_test (tc, test_live_eos_not_stuck_behind_late_frames);
  tcase_add_test (tc, test_half_open_connection_is_found);
  tcase_add_test (tc, test_stuck_frame_goes_out_on_another_connection);
  tcase_add_test (tc, test_frames_near_deadline_copied_to_another_connection);
  tcase_add_test (tc, test_killed_connections_lose_nothing);
  tcase_add_test (tc, test_outage_of_every_connection_loses_nothing);
  return s;
}

GST_CHECK_MAIN (repair_elements);

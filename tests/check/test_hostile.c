/* multitcp
 * Copyright (C) 2026 the multitcp authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
/* Hostile peers and applications against multitcpsink: every path a peer
 * or an application can reach is bounded (issue 22). Raw sockets speak the
 * protocol byte by byte; a real multitcpsrc is the legitimate receiver. */
#include <gst/check/gstcheck.h>
#include <gio/gio.h>
#include <gst/app/gstappsrc.h>
#include <gst/app/gstappsink.h>
#include <sys/socket.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <fcntl.h>
#include <unistd.h>
#include <string.h>

#include "mtcpprotocol.h"
#include "mtcptestutil.h"

/* ---- helpers ---- */

/* Pushes buffers @first .. @first + @n - 1 of @size bytes tagged with
 * their index, 10 ms of PTS apart, a keyframe every 30; with @start_us
 * (not 0) paced on the clock from then, as a live source would. */
static void
push_buffers (Sender * s, guint first, guint n, gsize size, gint64 start_us)
{
  guint i;

  for (i = first; i < first + n; i++) {
    GstBuffer *buf = gst_buffer_new_allocate (NULL, size, NULL);

    gst_buffer_memset (buf, 0, (guint8) i, size);
    if (size >= 4) {
      guint8 tag[4];
      GST_WRITE_UINT32_BE (tag, i);
      gst_buffer_fill (buf, 0, tag, 4);
    }
    if (i % 30 != 0)
      GST_BUFFER_FLAG_SET (buf, GST_BUFFER_FLAG_DELTA_UNIT);
    GST_BUFFER_PTS (buf) = i * 10 * GST_MSECOND;
    GST_BUFFER_DURATION (buf) = 10 * GST_MSECOND;
    if (start_us)
      pace_live (start_us, i, 10000);
    fail_unless_equals_int (gst_app_src_push_buffer (GST_APP_SRC (s->appsrc),
            buf), GST_FLOW_OK);
  }
}

static void
set_caps (Sender * s)
{
  GstCaps *caps = gst_caps_new_empty_simple ("application/x-test");
  gst_app_src_set_caps (GST_APP_SRC (s->appsrc), caps);
  gst_caps_unref (caps);
}

/* Closes with a reset (SO_LINGER 0), not a FIN. */
static void
raw_reset (GSocket * sock)
{
  struct linger lg = { 1, 0 };
  setsockopt (g_socket_get_fd (sock), SOL_SOCKET, SO_LINGER, &lg,
      sizeof (lg));
  g_socket_close (sock, NULL);
}

/* TRUE once the peer closed @sock (EOF or error) within @timeout_us;
 * whatever it sends meanwhile is read and dropped. */
static gboolean
raw_wait_closed (GSocket * sock, gint64 timeout_us)
{
  gint64 until = g_get_monotonic_time () + timeout_us;
  gchar buf[16384];

  while (g_get_monotonic_time () < until) {
    gssize n;
    if (!g_socket_condition_timed_wait (sock, G_IO_IN,
            until - g_get_monotonic_time (), NULL, NULL))
      return FALSE;
    n = g_socket_receive (sock, buf, sizeof (buf), NULL, NULL);
    if (n <= 0)
      return TRUE;
  }
  return FALSE;
}

/* The first session's field of the sink's stats (a guint64 or guint). */
static guint64
session_stat (GstElement * sink, const gchar * field)
{
  return sink_stats_sum (sink, FALSE, field);
}

/* A stuck frame's hedge: connection A of a session holds the first frames
 * and is silent; connections B join and say the receiver waits behind a
 * hole (FEEDBACK, nothing acknowledged, bytes buffered), each then gone
 * with a reset (@reset) or left open. The sink hedges the frames A holds
 * onto B, whose write may find it reset. Returns frames-hedged. */
static guint64
hedge_attack (const gchar * sink_props, gboolean reset, guint rounds)
{
  Sender *s = sender_new (sink_props);
  gint port = sender_port (s);
  guint8 sid[MTCP_SESSION_ID_SIZE], sid2[MTCP_SESSION_ID_SIZE];
  RawConn a, b;
  GPtrArray *open = g_ptr_array_new ();
  guint64 hedged;
  guint i;

  set_caps (s);
  raw_conn_open (&a, port, NULL, 0, sid);
  push_buffers (s, 0, 40, 1000, 0);
  for (i = 0; i < rounds; i++) {
    /* past the hedge's wait (200 ms) since the last one */
    g_usleep (250 * 1000);
    raw_conn_open (&b, port, sid, 0, sid2);
    raw_conn_feedback (&b, MTCP_TIME_NONE, 20000);
    if (reset) {
      raw_reset (b.sock);
      raw_conn_close (&b);
    } else {
      g_ptr_array_add (open, g_memdup2 (&b, sizeof (b)));
    }
    /* earn the copy budget again */
    push_buffers (s, 40 + i * 20, 20, 1000, 0);
  }
  g_usleep (200 * 1000);
  hedged = session_stat (s->sink, "frames-hedged");
  for (i = 0; i < open->len; i++) {
    raw_conn_close (g_ptr_array_index (open, i));
    g_free (g_ptr_array_index (open, i));
  }
  g_ptr_array_unref (open);
  raw_conn_close (&a);
  sender_free (s);
  return hedged;
}

/* ---- item 1: a write that closes the connection being read ---- */

GST_START_TEST (test_feedback_then_reset_does_not_crash)
{
  /* today's main: SIGSEGV in handle_frames after the hedge closed the
   * connection it was reading */
  guint64 hedged = hedge_attack (NULL, TRUE, 10);

  GST_INFO ("%" G_GUINT64_FORMAT " frames hedged", hedged);
}

GST_END_TEST;

/* ---- item 9: hedges are paid from the copy budget ---- */

GST_START_TEST (test_hedges_within_copy_budget)
{
  guint64 with = hedge_attack ("copy-overhead=25", FALSE, 3);
  guint64 without = hedge_attack ("copy-overhead=0", FALSE, 3);

  /* the attack does make the sink hedge when it may ... */
  fail_unless (with > 0, "no hedge with copy-overhead=25");
  /* ... 25% of 100 frames of 1000 bytes: at most 25 copies */
  fail_unless (with <= 25 + 1, "%" G_GUINT64_FORMAT " hedged", with);
  /* ... and never beyond its budget */
  fail_unless_equals_uint64 (without, 0);
}

GST_END_TEST;

/* ---- item 2: no callout with the transport's lock held ---- */

static gint warnings_handled;

static GstBusSyncReply
read_stats_on_warning (GstBus * bus, GstMessage * msg, gpointer sink)
{
  if (GST_MESSAGE_TYPE (msg) == GST_MESSAGE_WARNING) {
    GstStructure *st = NULL;
    /* what an application may well do: look at the sink's state */
    g_object_get (sink, "stats", &st, NULL);
    gst_structure_free (st);
    g_atomic_int_inc (&warnings_handled);
  }
  return GST_BUS_PASS;
}

GST_START_TEST (test_warning_handler_may_read_stats)
{
  Sender *s = sender_new (NULL);
  GstBus *bus = gst_element_get_bus (s->pipeline);
  guint8 junk[64];
  GSocket *sock;
  gboolean closed;
  gint64 until;

  g_atomic_int_set (&warnings_handled, 0);
  gst_bus_set_sync_handler (bus, read_stats_on_warning, s->sink, NULL);
  memset (junk, 0x5a, sizeof (junk));
  sock = raw_connect (sender_port (s));
  raw_send (sock, junk, sizeof (junk));
  g_free (raw_read_refusal (sock, &closed));
  g_object_unref (sock);
  until = g_get_monotonic_time () + 5 * G_USEC_PER_SEC;
  while (g_atomic_int_get (&warnings_handled) == 0 &&
      g_get_monotonic_time () < until)
    g_usleep (10000);
  /* today's main: the I/O thread deadlocks on its own lock here */
  fail_unless (g_atomic_int_get (&warnings_handled) > 0,
      "the warning's handler did not return");
  /* and the sink still works */
  fail_unless (stats_uint64 (s->sink, "protocol-errors") >= 1);
  gst_bus_set_sync_handler (bus, NULL, NULL, NULL);
  gst_object_unref (bus);
  sender_free (s);
}

GST_END_TEST;

/* ---- item 3: a receiver that never acknowledges ---- */

typedef struct {
  RawConn rc;
  gint stop;
  guint64 bytes;
  GThread *thread;
  gboolean read;                /* FALSE: never reads, only FEEDBACK */
} Acker;

/* Reads everything (or nothing) and says every 200 ms that it has
 * nothing: alive to idle-timeout, never acknowledging. */
static gpointer
never_ack_thread (gpointer data)
{
  Acker *k = data;
  gint64 next_fb = 0;

  while (!g_atomic_int_get (&k->stop)) {
    gint64 now = g_get_monotonic_time ();
    if (now >= next_fb) {
      raw_conn_feedback (&k->rc, MTCP_TIME_NONE, 0);
      next_fb = now + 200 * 1000;
    }
    if (k->read && g_socket_condition_timed_wait (k->rc.sock, G_IO_IN,
            20 * 1000, NULL, NULL)) {
      gchar buf[65536];
      gssize n = g_socket_receive (k->rc.sock, buf, sizeof (buf), NULL, NULL);
      if (n <= 0)
        break;
      k->bytes += n;
    } else if (!k->read) {
      g_usleep (20 * 1000);
    }
  }
  return NULL;
}

static Acker *
acker_start (gint port, guint32 latency_ms, gboolean read, gint rcvbuf)
{
  Acker *k = g_new0 (Acker, 1);
  guint8 sid[MTCP_SESSION_ID_SIZE];

  k->read = read;
  /* refused (an attacker among many): it gives up at once */
  if (!raw_conn_try_open (&k->rc, port, NULL, 0, latency_ms, rcvbuf, sid))
    g_atomic_int_set (&k->stop, 1);
  k->thread = g_thread_new ("never-ack", never_ack_thread, k);
  return k;
}

static guint64
acker_stop (Acker * k)
{
  guint64 bytes;

  g_atomic_int_set (&k->stop, 1);
  g_thread_join (k->thread);
  raw_conn_close (&k->rc);
  bytes = k->bytes;
  g_free (k);
  return bytes;
}

/* No latency given (HELLO latency 0): the session's byte bound holds. */
GST_START_TEST (test_never_acknowledging_receiver_bounded_by_bytes)
{
  Sender *s = sender_new ("max-session-bytes=1000000");
  Acker *k;
  guint64 kept, expired, read;

  set_caps (s);
  k = acker_start (sender_port (s), 0, TRUE, 0);
  /* 4 MB, four times the bound, all read by the receiver */
  push_buffers (s, 0, 400, 10000, g_get_monotonic_time ());
  g_usleep (G_USEC_PER_SEC / 2);
  kept = session_stat (s->sink, "bytes-kept");
  expired = session_stat (s->sink, "frames-expired");
  read = acker_stop (k);
  GST_INFO ("read %" G_GUINT64_FORMAT ", kept %" G_GUINT64_FORMAT
      ", expired %" G_GUINT64_FORMAT, read, kept, expired);
  fail_unless (read >= 3000000, "the receiver read %" G_GUINT64_FORMAT, read);
  /* today's main: everything it sent, 4 MB */
  fail_unless (kept <= 1000000 + 16384, "kept %" G_GUINT64_FORMAT, kept);
  fail_unless (expired > 0);
  sender_free (s);
}

GST_END_TEST;

/* With the receiver's latency: nothing past its deadline is kept. */
GST_START_TEST (test_never_acknowledging_receiver_bounded_by_deadline)
{
  Sender *s = sender_new (NULL);
  Acker *k;
  guint64 kept, expired;

  set_caps (s);
  k = acker_start (sender_port (s), 200, TRUE, 0);
  /* 2 s of 1 MB/s; the deadline keeps about 0.2 s of it */
  push_buffers (s, 0, 200, 10000, g_get_monotonic_time ());
  g_usleep (G_USEC_PER_SEC / 2);
  kept = session_stat (s->sink, "bytes-kept");
  expired = session_stat (s->sink, "frames-expired");
  acker_stop (k);
  GST_INFO ("kept %" G_GUINT64_FORMAT ", expired %" G_GUINT64_FORMAT, kept,
      expired);
  /* today's main: 2 MB */
  fail_unless (kept < 1000000, "kept %" G_GUINT64_FORMAT, kept);
  fail_unless (expired >= 100, "expired %" G_GUINT64_FORMAT, expired);
  sender_free (s);
}

GST_END_TEST;

/* ---- item 11: REPORTs do not pile up behind output that does not leave */

static guint
sink_frames_queued (GstElement * sink)
{
  return (guint) sink_stats_sum (sink, TRUE, "frames-queued");
}

GST_START_TEST (test_reports_do_not_pile_up_on_a_stalled_connection)
{
  /* no unsent-bytes mark: the sink writes until the kernel takes no more */
  Sender *s = sender_new ("idle-timeout=0 notsent-lowat=0");
  Acker *k;
  guint most = 0, i;
  guint64 sent;

  set_caps (s);
  /* reads nothing, with the smallest receive buffer */
  k = acker_start (sender_port (s), 0, FALSE, 4096);
  push_buffers (s, 0, 600, 10000, 0);
  g_usleep (G_USEC_PER_SEC);
  /* a REPORT is due every 300 ms: 10 in 3 s, had they piled up in what
   * the connection holds (the kernel takes the first ones while it has
   * room; frames wait in the shared queue) */
  for (i = 0; i < 30; i++) {
    most = MAX (most, sink_frames_queued (s->sink));
    g_usleep (100 * 1000);
  }
  sent = session_stat (s->sink, "bytes-sent");
  acker_stop (k);
  GST_INFO ("at most %u frames queued; %" G_GUINT64_FORMAT " of 6000000 "
      "bytes handed out", most, sent);
  /* the connection did stall: most of the stream never left */
  fail_unless (sent < 6000000, "%" G_GUINT64_FORMAT " bytes sent", sent);
  fail_unless (most <= 2, "%u frames queued on a stalled connection", most);
  sender_free (s);
}

GST_END_TEST;

/* ---- item 11: what a receiver acknowledges is bounded by what was sent */

GST_START_TEST (test_acknowledgement_beyond_what_was_sent_is_clamped)
{
  Sender *s = sender_new (NULL);
  guint8 sid[MTCP_SESSION_ID_SIZE];
  RawConn rc;
  GstStructure *st = NULL;
  const GValue *sessions;
  gint64 highest = -1;

  set_caps (s);
  raw_conn_open (&rc, sender_port (s), NULL, 0, sid);
  push_buffers (s, 0, 10, 100, 0);
  g_usleep (200 * 1000);
  raw_conn_feedback (&rc, 1000000000, 0);
  g_usleep (300 * 1000);
  g_object_get (s->sink, "stats", &st, NULL);
  sessions = gst_structure_get_value (st, "sessions");
  fail_unless_equals_int (gst_value_array_get_size (sessions), 1);
  gst_structure_get_int64 (gst_value_get_structure (gst_value_array_get_value
          (sessions, 0)), "receiver-highest-seq", &highest);
  gst_structure_free (st);
  /* caps and 10 buffers were handed out: seq 0 .. 10 at most */
  fail_unless (highest >= 0 && highest <= 10, "highest %" G_GINT64_FORMAT,
      highest);
  raw_conn_close (&rc);
  sender_free (s);
}

GST_END_TEST;

/* ---- item 5: receivers send small frames ---- */

GST_START_TEST (test_large_frame_from_receiver_closes_it)
{
  /* no idle-timeout: only what the peer sends may close it */
  Sender *s = sender_new ("idle-timeout=0");
  guint8 sid[MTCP_SESSION_ID_SIZE], head[MTCP_HEADER_SIZE], body[100];
  RawConn ok, big;

  raw_conn_open (&ok, sender_port (s), NULL, 0, sid);
  raw_conn_open (&big, sender_port (s), NULL, 0, sid);
  wait_for_connections (s->sink, 2);

  /* a frame of a type we do not know, small: skipped, connection kept */
  memset (body, 0, sizeof (body));
  mtcp_write_header (head, 0x7e, 0, sizeof (body));
  raw_send (ok.sock, head, sizeof (head));
  raw_send (ok.sock, body, sizeof (body));
  /* 1 MiB of a type we do not know: today's main takes (and buffers)
   * frames up to 16 MiB from a receiver */
  mtcp_write_header (head, 0x7e, 0, 1 << 20);
  raw_send (big.sock, head, sizeof (head));
  raw_send (big.sock, body, sizeof (body));
  fail_unless (raw_wait_closed (big.sock, 5 * G_USEC_PER_SEC),
      "the sink kept a connection that announced a 1 MiB frame");
  fail_unless (stats_uint64 (s->sink, "protocol-errors") >= 1);
  wait_for_connections (s->sink, 1);
  raw_conn_close (&ok);
  raw_conn_close (&big);
  sender_free (s);
}

GST_END_TEST;

/* ---- item 6: accept () failing does not spin ---- */

static gdouble
cpu_seconds (void)
{
  struct rusage ru;
  getrusage (RUSAGE_SELF, &ru);
  return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
      ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
}

#define EMFILE_PEERS 4

GST_START_TEST (test_accept_failure_backs_off)
{
  Sender *s = sender_new (NULL);
  gint port = sender_port (s);
  GSocket *socks[EMFILE_PEERS];
  GInetAddress *lo = g_inet_address_new_loopback (G_SOCKET_FAMILY_IPV4);
  GSocketAddress *addr = g_inet_socket_address_new (lo, port);
  struct rlimit old, lim;
  guint64 accepted;
  gdouble cpu;
  gint lowest_free, i;
  gint64 until;

  /* the peers' sockets first: then no descriptor is left for accept () */
  for (i = 0; i < EMFILE_PEERS; i++)
    socks[i] = g_socket_new (G_SOCKET_FAMILY_IPV4, G_SOCKET_TYPE_STREAM,
        G_SOCKET_PROTOCOL_TCP, NULL);
  accepted = stats_uint64 (s->sink, "connections-accepted");
  for (lowest_free = 0; fcntl (lowest_free, F_GETFD) != -1; lowest_free++);
  fail_unless (getrlimit (RLIMIT_NOFILE, &old) == 0);
  lim = old;
  lim.rlim_cur = lowest_free;
  fail_unless (setrlimit (RLIMIT_NOFILE, &lim) == 0);
  for (i = 0; i < EMFILE_PEERS; i++)
    fail_unless (g_socket_connect (socks[i], addr, NULL, NULL));
  /* the listener stays readable and accept () fails with EMFILE */
  g_usleep (200 * 1000);
  cpu = cpu_seconds ();
  g_usleep (G_USEC_PER_SEC);
  cpu = cpu_seconds () - cpu;
  fail_unless (setrlimit (RLIMIT_NOFILE, &old) == 0);
  GST_INFO ("CPU while accept () fails: %.3f s in 1 s", cpu);
  /* today's main: the I/O thread spins, about 1 s */
  fail_unless (cpu < 0.3, "%.3f s of CPU in 1 s while accept () fails", cpu);
  fail_unless (stats_uint64 (s->sink, "accept-errors") >= 1);
  /* with descriptors again, the waiting peers are taken */
  until = g_get_monotonic_time () + 5 * G_USEC_PER_SEC;
  while (stats_uint64 (s->sink, "connections-accepted") < accepted +
      EMFILE_PEERS && g_get_monotonic_time () < until)
    g_usleep (20000);
  fail_unless_equals_uint64 (stats_uint64 (s->sink, "connections-accepted"),
      accepted + EMFILE_PEERS);
  for (i = 0; i < EMFILE_PEERS; i++)
    g_object_unref (socks[i]);
  g_object_unref (addr);
  g_object_unref (lo);
  sender_free (s);
}

GST_END_TEST;

/* ---- item 6: a bound on every connection the sink holds ---- */

#define RETIRE_ROUNDS 6

/* A receiver retires connections that then never read, and opens new
 * ones in their place: retired connections are outside the session's
 * limit, so without a bound of their own they pile up. */
GST_START_TEST (test_retired_connections_that_never_read_are_bounded)
{
  /* at most 1 x (2 + 1) + 2 = 5 connections open at once */
  Sender *s = sender_new ("max-sessions=1 max-connections=2 "
      "max-pending-handshakes=2 idle-timeout=0");
  gint port = sender_port (s);
  guint8 sid[MTCP_SESSION_ID_SIZE], sid2[MTCP_SESSION_ID_SIZE];
  guint8 retire[MTCP_HEADER_SIZE];
  RawConn rc[2 * RETIRE_ROUNDS];
  guint open_peak = 0, opened = 0, i, j;
  gint64 until;

  set_caps (s);
  mtcp_write_header (retire, MTCP_FRAME_RETIRE, 0, 0);
  for (i = 0; i < RETIRE_ROUNDS; i++) {
    for (j = 0; j < 2; j++) {
      RawConn *c = &rc[opened];
      gboolean joined = raw_conn_try_open (c, port, opened ? sid : NULL, 0,
          0, 4096, opened ? sid2 : sid);
      if (!joined) {
        raw_conn_close (c);
        continue;
      }
      opened++;
    }
    /* a stream they do not read, then both retire */
    push_buffers (s, i * 100, 100, 10000, 0);
    g_usleep (100 * 1000);
    for (j = opened >= 2 ? opened - 2 : 0; j < opened; j++)
      raw_send (rc[j].sock, retire, sizeof (retire));
    g_usleep (100 * 1000);
    open_peak = MAX (open_peak, stats_uint (s->sink, "open-connections"));
  }
  GST_INFO ("%u connections joined, at most %u open", opened, open_peak);
  /* today's main: every one of them, 12 */
  fail_unless (open_peak <= 5, "%u connections open", open_peak);
  /* and the retired ones that write nothing go after a while */
  until = g_get_monotonic_time () + 8 * G_USEC_PER_SEC;
  while (stats_uint (s->sink, "open-connections") > 0 &&
      g_get_monotonic_time () < until)
    g_usleep (50000);
  fail_unless_equals_int (stats_uint (s->sink, "open-connections"), 0);
  for (i = 0; i < opened; i++)
    raw_conn_close (&rc[i]);
  sender_free (s);
}

GST_END_TEST;

/* ---- item 10: the application reads stats while the element stops ---- */

typedef struct {
  GstElement *sink;
  gint stop;
  guint reads;
} StatsReader;

static gpointer
stats_reader_thread (gpointer data)
{
  StatsReader *sr = data;
  guint64 bytes = 1000000;

  while (!g_atomic_int_get (&sr->stop)) {
    GstStructure *st = NULL;
    g_object_get (sr->sink, "stats", &st, NULL);
    gst_structure_free (st);
    g_object_set (sr->sink, "max-session-bytes", bytes++, NULL);
    sr->reads++;
  }
  return NULL;
}

GST_START_TEST (test_stats_while_stopping)
{
  GstElement *pipeline = gst_parse_launch ("appsrc is-live=true ! "
      "multitcpsink name=sink host=127.0.0.1 port=0", NULL);
  StatsReader sr = { 0, };
  GThread *thread;
  guint i;

  sr.sink = gst_bin_get_by_name (GST_BIN (pipeline), "sink");
  thread = g_thread_new ("stats", stats_reader_thread, &sr);
  for (i = 0; i < 40; i++) {
    fail_if (gst_element_set_state (pipeline, GST_STATE_PAUSED) ==
        GST_STATE_CHANGE_FAILURE);
    g_usleep (2000);
    fail_unless_equals_int (gst_element_set_state (pipeline,
            GST_STATE_NULL), GST_STATE_CHANGE_SUCCESS);
  }
  g_atomic_int_set (&sr.stop, 1);
  g_thread_join (thread);
  GST_INFO ("%u reads of the stats", sr.reads);
  fail_unless (sr.reads > 0);
  gst_object_unref (sr.sink);
  gst_object_unref (pipeline);
}

GST_END_TEST;

/* ---- the soak: every kind of attacker at once, a receiver unharmed ---- */

#define SOAK_BUFFER_BYTES 4000
#define SOAK_SESSION_BYTES 4000000
/* what the sink may hold at once in its queue, the frames its sessions
 * keep unacknowledged and what its connections have queued, summed */
#define SOAK_HELD_BOUND (64 * 1024 * 1024)
/* growth of the process's resident memory, where it means something */
#define SOAK_RSS_BOUND_KB (160 * 1024)

typedef struct {
  gint port;
  gint stop;
  guint kind;
  guint64 attacks;
} Attacker;

static gint64
soak_seconds (void)
{
  const gchar *env = g_getenv ("MTCP_SOAK_SECONDS");
  return env ? g_ascii_strtoll (env, NULL, 10) : 40;
}

static void
attack_once (Attacker * at, GQueue * silent, GRand * rand)
{
  guint8 frame[256], sid[MTCP_SESSION_ID_SIZE], sid2[MTCP_SESSION_ID_SIZE];
  GSocket *sock;
  RawConn a, b;
  guint i;

  switch (at->kind) {
    case 0:                    /* garbage */
      sock = raw_connect (at->port);
      for (i = 0; i < sizeof (frame); i++)
        frame[i] = (guint8) g_rand_int (rand);
      raw_send (sock, frame, sizeof (frame));
      g_socket_close (sock, NULL);
      g_object_unref (sock);
      g_usleep (20 * 1000);
      break;
    case 1:                    /* silent, a hundred at a time */
      g_queue_push_tail (silent, raw_connect (at->port));
      while (g_queue_get_length (silent) > 100)
        g_object_unref (g_queue_pop_head (silent));
      g_usleep (10 * 1000);
      break;
    case 2:                    /* half a HELLO, a huge length, a reset */
      sock = raw_connect (at->port);
      write_hello (frame, MTCP_MAGIC, MTCP_VERSION);
      raw_send (sock, frame, MTCP_HELLO_FRAME_SIZE / 2);
      g_object_unref (sock);
      sock = raw_connect (at->port);
      mtcp_write_header (frame, MTCP_FRAME_HELLO, 0, 0xfffffff0u);
      raw_send (sock, frame, MTCP_HEADER_SIZE);
      raw_reset (sock);
      g_object_unref (sock);
      g_usleep (20 * 1000);
      break;
    case 3:{                   /* reads all, never acknowledges, 3 s each */
      Acker *k = acker_start (at->port, 0, TRUE, 0);
      for (i = 0; i < 30 && !g_atomic_int_get (&at->stop); i++)
        g_usleep (100 * 1000);
      acker_stop (k);
      break;
    }
    case 4:{                   /* never reads, 3 s each */
      Acker *k = acker_start (at->port, 0, FALSE, 4096);
      for (i = 0; i < 30 && !g_atomic_int_get (&at->stop); i++)
        g_usleep (100 * 1000);
      acker_stop (k);
      break;
    }
    case 5:                    /* a hole claimed, then a reset */
      if (raw_conn_try_open (&a, at->port, NULL, 0, 0, 0, sid)) {
        for (i = 0; i < 8 && !g_atomic_int_get (&at->stop); i++) {
          g_usleep (250 * 1000);
          if (raw_conn_try_open (&b, at->port, sid, 0, 0, 0, sid2)) {
            raw_conn_feedback (&b, MTCP_TIME_NONE, 20000);
            raw_reset (b.sock);
          }
          raw_conn_close (&b);
        }
      }
      raw_conn_close (&a);
      g_usleep (20 * 1000);
      break;
    case 6:                    /* admitted, then a 1 MiB frame */
      if (raw_conn_try_open (&a, at->port, NULL, 0, 0, 0, sid)) {
        mtcp_write_header (frame, 0x7e, 0, 1 << 20);
        raw_send (a.sock, frame, MTCP_HEADER_SIZE);
        raw_wait_closed (a.sock, 2 * G_USEC_PER_SEC);
      }
      raw_conn_close (&a);
      g_usleep (100 * 1000);
      break;
  }
  at->attacks++;
}

#define SOAK_KINDS 7

static gpointer
attacker_thread (gpointer data)
{
  Attacker *at = data;
  GQueue silent = G_QUEUE_INIT;
  GRand *rand = g_rand_new_with_seed (at->kind);

  while (!g_atomic_int_get (&at->stop))
    attack_once (at, &silent, rand);
  g_queue_clear_full (&silent, g_object_unref);
  g_rand_free (rand);
  return NULL;
}

typedef struct {
  GstElement *appsink;
  guint expected;
  guint got;
  guint out_of_order;
  gint done;
} SoakChecker;

static gpointer
soak_checker_thread (gpointer data)
{
  SoakChecker *c = data;

  for (;;) {
    GstSample *sample = gst_app_sink_try_pull_sample (GST_APP_SINK
        (c->appsink), 10 * GST_SECOND);
    GstBuffer *buf;
    guint8 tag[4];
    if (sample == NULL)
      break;
    buf = gst_sample_get_buffer (sample);
    gst_buffer_extract (buf, 0, tag, 4);
    if (c->got > 0 && GST_READ_UINT32_BE (tag) != c->expected)
      c->out_of_order++;
    c->expected = GST_READ_UINT32_BE (tag) + 1;
    c->got++;
    gst_sample_unref (sample);
  }
  g_atomic_int_set (&c->done, 1);
  return NULL;
}

static guint64
sink_held_bytes (GstElement * sink)
{
  return stats_uint64 (sink, "queue-bytes") +
      sink_stats_sum (sink, FALSE, "bytes-kept") +
      sink_stats_sum (sink, TRUE, "bytes-queued");
}

GST_START_TEST (test_soak_every_attacker_at_once)
{
  Sender *s = sender_new ("max-session-bytes=" G_STRINGIFY
      (SOAK_SESSION_BYTES));
  gint port = sender_port (s);
  Receiver *r = receiver_new (port, 3, 2000), *joiner = NULL;
  Attacker at[SOAK_KINDS];
  GThread *threads[SOAK_KINDS], *checker, *joiner_checker = NULL;
  SoakChecker c = { 0, }, cj = { 0, };
  guint64 rss_start, rss_peak = 0, held_peak = 0, attacks = 0;
  gint64 start, seconds = soak_seconds ();
  guint i, n, k;

  wait_for_connections (s->sink, 3);
  set_caps (s);
  c.appsink = r->appsink;
  checker = g_thread_new ("soak-check", soak_checker_thread, &c);
  rss_start = rss_kb ();
  for (k = 0; k < SOAK_KINDS; k++) {
    at[k].port = port;
    at[k].stop = 0;
    at[k].kind = k;
    at[k].attacks = 0;
    threads[k] = g_thread_new ("attacker", attacker_thread, &at[k]);
  }
  n = (guint) (seconds * 100);
  start = g_get_monotonic_time ();
  for (i = 0; i < n; i++) {
    push_buffers (s, i, 1, SOAK_BUFFER_BYTES, start);
    if (i == n / 2) {
      /* a new receiver finds room while the attack goes on */
      joiner = receiver_new (port, 2, 2000);
      cj.appsink = joiner->appsink;
      joiner_checker = g_thread_new ("soak-joiner", soak_checker_thread, &cj);
    }
    if (i % 50 == 0) {
      held_peak = MAX (held_peak, sink_held_bytes (s->sink));
      rss_peak = MAX (rss_peak, rss_kb ());
    }
  }
  for (k = 0; k < SOAK_KINDS; k++) {
    g_atomic_int_set (&at[k].stop, 1);
    g_thread_join (threads[k]);
    attacks += at[k].attacks;
  }
  gst_app_src_end_of_stream (GST_APP_SRC (s->appsrc));
  g_thread_join (checker);
  g_thread_join (joiner_checker);

  g_print ("soak: %" G_GINT64_FORMAT " s, %" G_GUINT64_FORMAT " attacks "
      "(garbage %" G_GUINT64_FORMAT ", silent %" G_GUINT64_FORMAT ", cut "
      "%" G_GUINT64_FORMAT ", never-ack %" G_GUINT64_FORMAT ", non-reading %"
      G_GUINT64_FORMAT ", hole+reset %" G_GUINT64_FORMAT ", oversized %"
      G_GUINT64_FORMAT "); receiver got %u of %u buffers, %u out of order; "
      "one joining half-way %u, %u out of order; "
      "sink held at most %" G_GUINT64_FORMAT " bytes (bound %u); RSS %"
      G_GUINT64_FORMAT " -> %" G_GUINT64_FORMAT " kB at most (bound +%u kB%s)\n",
      seconds, attacks, at[0].attacks, at[1].attacks, at[2].attacks,
      at[3].attacks, at[4].attacks, at[5].attacks, at[6].attacks, c.got, n,
      c.out_of_order, cj.got, cj.out_of_order, held_peak, SOAK_HELD_BOUND, rss_start, rss_peak,
      SOAK_RSS_BOUND_KB, RSS_IS_MEANINGFUL ? "" : ", not checked: ASan");
  fail_unless_equals_int (c.got, n);
  fail_unless_equals_int (c.out_of_order, 0);
  fail_unless_equals_uint64 (stats_uint64 (r->src, "buffers-late"), 0);
  fail_unless_equals_uint64 (stats_uint64 (r->src, "buffers-skipped"), 0);
  /* it starts at a keyframe, up to 30 buffers after it joined */
  fail_unless (cj.got >= n / 2 - 100, "the joiner got %u", cj.got);
  fail_unless_equals_int (cj.out_of_order, 0);
  fail_unless (held_peak <= SOAK_HELD_BOUND);
  if (RSS_IS_MEANINGFUL)
    fail_unless (rss_peak <= rss_start + SOAK_RSS_BOUND_KB);
  for (k = 0; k < SOAK_KINDS; k++)
    fail_unless (at[k].attacks > 0, "attacker %u never attacked", k);
  /* and it ends cleanly */
  fail_unless_equals_int (gst_element_set_state (r->pipeline, GST_STATE_NULL),
      GST_STATE_CHANGE_SUCCESS);
  fail_unless_equals_int (gst_element_set_state (joiner->pipeline,
          GST_STATE_NULL), GST_STATE_CHANGE_SUCCESS);
  receiver_free (joiner);
  fail_unless_equals_int (gst_element_set_state (s->pipeline, GST_STATE_NULL),
      GST_STATE_CHANGE_SUCCESS);
  receiver_free (r);
  sender_free (s);
}

GST_END_TEST;

static Suite *
hostile_suite (void)
{
  Suite *s = suite_create ("multitcp-hostile");
  TCase *tc = tcase_create ("hostile");

  suite_add_tcase (s, tc);
  tcase_set_timeout (tc, 300);
  tcase_add_test (tc, test_feedback_then_reset_does_not_crash);
  tcase_add_test (tc, test_hedges_within_copy_budget);
  tcase_add_test (tc, test_warning_handler_may_read_stats);
  tcase_add_test (tc, test_never_acknowledging_receiver_bounded_by_bytes);
  tcase_add_test (tc, test_never_acknowledging_receiver_bounded_by_deadline);
  tcase_add_test (tc, test_reports_do_not_pile_up_on_a_stalled_connection);
  tcase_add_test (tc, test_acknowledgement_beyond_what_was_sent_is_clamped);
  tcase_add_test (tc, test_large_frame_from_receiver_closes_it);
  tcase_add_test (tc, test_accept_failure_backs_off);
  tcase_add_test (tc, test_retired_connections_that_never_read_are_bounded);
  tcase_add_test (tc, test_stats_while_stopping);
  tcase_add_test (tc, test_soak_every_attacker_at_once);
  return s;
}

GST_CHECK_MAIN (hostile);

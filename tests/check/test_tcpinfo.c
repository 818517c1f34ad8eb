/* multitcp
 * Copyright (C) 2026 the multitcp authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
/* Unit tests of the TCP-info probe and the per-socket knobs, on a loopback
 * connection (Linux: the kernel answers; elsewhere they are skipped). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <gst/check/gstcheck.h>
#include <string.h>

#include "gst/mtcpconnection.h"
#include "gst/mtcptcpinfo.h"

#ifdef __linux__
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <linux/inet_diag.h>

typedef struct
{
  GSocket *client;              /* connect()ed */
  GSocket *server;              /* accept()ed */
} Pair;

static void
pair_open (Pair * p)
{
  GInetAddress *lo = g_inet_address_new_loopback (G_SOCKET_FAMILY_IPV4);
  GSocketAddress *any = g_inet_socket_address_new (lo, 0), *bound;
  GSocket *listener = g_socket_new (G_SOCKET_FAMILY_IPV4,
      G_SOCKET_TYPE_STREAM, G_SOCKET_PROTOCOL_TCP, NULL);

  fail_unless (g_socket_bind (listener, any, TRUE, NULL));
  fail_unless (g_socket_listen (listener, NULL));
  bound = g_socket_get_local_address (listener, NULL);
  p->client = g_socket_new (G_SOCKET_FAMILY_IPV4, G_SOCKET_TYPE_STREAM,
      G_SOCKET_PROTOCOL_TCP, NULL);
  fail_unless (g_socket_connect (p->client, bound, NULL, NULL));
  p->server = g_socket_accept (listener, NULL, NULL);
  fail_unless (p->server != NULL);
  g_object_unref (bound);
  g_object_unref (any);
  g_object_unref (lo);
  g_object_unref (listener);
}

static void
pair_close (Pair * p)
{
  g_object_unref (p->client);
  g_object_unref (p->server);
}

static int
int_option (GSocket * s, int name)
{
  int v = -1;
  socklen_t len = sizeof (v);

  fail_unless (getsockopt (g_socket_get_fd (s), IPPROTO_TCP, name, &v,
          &len) == 0);
  return v;
}

static void
send_exactly (GSocket * s, gsize n)
{
  gchar *data = g_malloc0 (n);
  gsize done = 0;

  while (done < n) {
    gssize w = g_socket_send (s, data + done, n - done, NULL, NULL);
    fail_unless (w > 0);
    done += w;
  }
  g_free (data);
}

/* @n bytes from the client to the server, and the client's @tx once
 * their last ACK is back (it may still be on its way). */
static void
transfer (Pair * p, gsize n, MtcpTcpInfo * tx)
{
  gchar buf[65536];
  gsize got = 0;
  gint tries;

  send_exactly (p->client, n);
  while (got < n) {
    gssize r = g_socket_receive (p->server, buf, sizeof (buf), NULL, NULL);
    fail_unless (r > 0);
    got += r;
  }
  for (tries = 0; tries < 200; tries++) {
    fail_unless (mtcp_tcp_info_read (p->client, tx));
    if (tx->bytes_acked >= n)
      break;
    g_usleep (5000);
  }
}

GST_START_TEST (test_info_follows_the_bytes)
{
  Pair p;
  MtcpTcpInfo tx, rx;

  pair_open (&p);
  transfer (&p, 200000, &tx);
  fail_unless (mtcp_tcp_info_read (p.server, &rx));
  fail_unless_equals_int (tx.state, 1);     /* TCP_ESTABLISHED */
  fail_unless (tx.bytes_acked >= 200000, "acked %" G_GUINT64_FORMAT,
      tx.bytes_acked);
  fail_unless_equals_uint64 (rx.bytes_received, 200000);
  fail_unless (tx.snd_mss > 0 && tx.snd_cwnd > 0);
  fail_unless (tx.rtt_us > 0 && tx.rtt_us < 1000000, "rtt %u us", tx.rtt_us);
  fail_unless_equals_int (tx.notsent_bytes, 0);
  /* loopback loses nothing */
  fail_unless_equals_int (tx.ca_state, MTCP_TCP_CA_OPEN);
  fail_if (mtcp_tcp_info_in_loss_recovery (&tx));
  fail_unless (tx.last_ack_recv_ms < 5000);
  pair_close (&p);
}

GST_END_TEST;

/* bbr's own state comes with the info on a bbr socket: a bandwidth once
 * data went, and not PROBE_RTT (which waits 10 s for a least RTT not seen
 * again); none on a loss-based socket. */
GST_START_TEST (test_bbr_state_is_read)
{
  Pair p;
  MtcpTcpInfo tx;
  GError *err = NULL;

  pair_open (&p);
  if (!mtcp_tcp_set_congestion (p.client, "bbr", &err)) {
    /* not in net.ipv4.tcp_allowed_congestion_control here */
    GST_INFO ("skipped: %s", err->message);
    g_clear_error (&err);
    pair_close (&p);
    return;
  }
  transfer (&p, 400000, &tx);
  fail_unless (mtcp_tcp_info_read_cc (p.client, &tx));
  fail_unless (tx.bbr_known);
  fail_unless (tx.bbr_bandwidth > 0);
  fail_if (tx.bbr_probing_rtt);
  fail_unless (mtcp_tcp_set_congestion (p.client, "reno", &err));
  fail_if (mtcp_tcp_info_read_cc (p.client, &tx));
  fail_if (tx.bbr_known);
  fail_unless_equals_uint64 (tx.bbr_bandwidth, 0);
  pair_close (&p);
}

GST_END_TEST;

/* bbr's answer decoded: PROBE_RTT where the window's gain is one (256),
 * not at PROBE_BW's two; the bandwidth from its two halves; answers of
 * other sizes (vegas' and dctcp's 16 bytes, cubic's none) are not bbr. */
GST_START_TEST (test_bbr_answer_decoded)
{
  struct tcp_bbr_info bbr = { 0, };
  MtcpTcpInfo info = { 0, };

  bbr.bbr_bw_lo = 5;
  bbr.bbr_bw_hi = 1;
  bbr.bbr_cwnd_gain = 256;
  fail_unless (mtcp_tcp_info_take_cc (&info, &bbr, sizeof (bbr)));
  fail_unless (info.bbr_known && info.bbr_probing_rtt);
  fail_unless_equals_uint64 (info.bbr_bandwidth,
      (G_GUINT64_CONSTANT (1) << 32) + 5);
  bbr.bbr_cwnd_gain = 512;
  fail_unless (mtcp_tcp_info_take_cc (&info, &bbr, sizeof (bbr)));
  fail_if (info.bbr_probing_rtt);
  bbr.bbr_cwnd_gain = 256;
  fail_if (mtcp_tcp_info_take_cc (&info, &bbr, 16));
  fail_if (info.bbr_known || info.bbr_probing_rtt);
  fail_unless_equals_uint64 (info.bbr_bandwidth, 0);
  fail_if (mtcp_tcp_info_take_cc (&info, &bbr, 0));
}

GST_END_TEST;

/* Repairing a loss: fast recovery, after a timeout, or segments marked
 * lost or retransmitted in flight; not SACKs alone, nor an ECN cut. */
GST_START_TEST (test_loss_recovery_states)
{
  MtcpTcpInfo info = { 0, };

  fail_if (mtcp_tcp_info_in_loss_recovery (&info));
  info.ca_state = MTCP_TCP_CA_DISORDER;
  fail_if (mtcp_tcp_info_in_loss_recovery (&info));
  info.ca_state = MTCP_TCP_CA_CWR;
  fail_if (mtcp_tcp_info_in_loss_recovery (&info));
  info.ca_state = MTCP_TCP_CA_RECOVERY;
  fail_unless (mtcp_tcp_info_in_loss_recovery (&info));
  info.ca_state = MTCP_TCP_CA_LOSS;
  fail_unless (mtcp_tcp_info_in_loss_recovery (&info));
  info.ca_state = MTCP_TCP_CA_OPEN;
  info.lost = 1;
  fail_unless (mtcp_tcp_info_in_loss_recovery (&info));
  info.lost = 0;
  info.retrans = 2;
  fail_unless (mtcp_tcp_info_in_loss_recovery (&info));
}

GST_END_TEST;

/* The path's queue: smoothed RTT over the least, never below 0, 0 while
 * either is unknown. */
GST_START_TEST (test_queue_from_rtts)
{
  MtcpTcpInfo info = { 0, };

  fail_unless_equals_int64 (mtcp_tcp_info_queue_us (&info), 0);
  info.rtt_us = 90000;
  fail_unless_equals_int64 (mtcp_tcp_info_queue_us (&info), 0);
  info.min_rtt_us = G_MAXUINT32;
  fail_unless_equals_int64 (mtcp_tcp_info_queue_us (&info), 0);
  info.min_rtt_us = 40000;
  fail_unless_equals_int64 (mtcp_tcp_info_queue_us (&info), 50000);
  info.rtt_us = 39000;
  fail_unless_equals_int64 (mtcp_tcp_info_queue_us (&info), 0);
}

GST_END_TEST;

GST_START_TEST (test_knobs_read_back)
{
  Pair p;
  GError *err = NULL;
  gchar *cc;

  pair_open (&p);
  fail_unless (mtcp_tcp_set_notsent_lowat (p.client, 32768));
  fail_unless_equals_int (int_option (p.client, TCP_NOTSENT_LOWAT), 32768);

  fail_unless (mtcp_tcp_set_congestion (p.client, "reno", &err));
  cc = mtcp_tcp_get_congestion (p.client);
  fail_unless_equals_string (cc, "reno");
  g_free (cc);
  fail_if (mtcp_tcp_set_congestion (p.client, "no-such-algorithm", &err));
  fail_unless (err != NULL && strstr (err->message, "no-such-algorithm"),
      "%s", err ? err->message : "no error");
  g_clear_error (&err);
  /* empty keeps what the socket has */
  fail_unless (mtcp_tcp_set_congestion (p.client, "", &err));
  cc = mtcp_tcp_get_congestion (p.client);
  fail_unless_equals_string (cc, "reno");
  g_free (cc);
  /* the loss-based ones halve on loss; bbr's rate comes from its model */
  fail_if (mtcp_tcp_congestion_ignores_loss ("reno"));
  fail_if (mtcp_tcp_congestion_ignores_loss ("cubic"));
  fail_if (mtcp_tcp_congestion_ignores_loss ("unknown"));
  fail_if (mtcp_tcp_congestion_ignores_loss (NULL));
  fail_unless (mtcp_tcp_congestion_ignores_loss ("bbr"));

  fail_unless (mtcp_tcp_set_window_clamp (p.server, 20000));
  fail_unless_equals_int (int_option (p.server, TCP_WINDOW_CLAMP), 20000);

  mtcp_tcp_set_nodelay (p.client, TRUE);
  fail_unless_equals_int (int_option (p.client, TCP_NODELAY), 1);

  /* no cap until pacing is asked for; then a cap that never binds */
  fail_unless_equals_uint64 (mtcp_tcp_get_max_pacing_rate (p.client),
      G_MAXUINT64);
  fail_unless (mtcp_tcp_set_pacing (p.client));
  fail_unless (mtcp_tcp_get_max_pacing_rate (p.client) != G_MAXUINT64);
  fail_unless (mtcp_tcp_get_max_pacing_rate (p.client) >= G_MAXUINT32);
  pair_close (&p);
}

GST_END_TEST;

/* The stream's receiver leaves quick-ACK mode after every read; a
 * connection without delay_acks is left as the kernel has it. Linux
 * reports TCP_QUICKACK 0 while it delays ACKs. */
GST_START_TEST (test_receiver_delays_acks_after_each_read)
{
  Pair p;
  MtcpConnection *rx;
  gint round;

  pair_open (&p);
  rx = mtcp_connection_new (p.server, MTCP_MAX_FRAME_DEFAULT);
  g_socket_set_blocking (p.server, FALSE);
  for (round = 0; round < 4; round++) {
    gint tries = 0;

    mtcp_connection_set_delay_acks (rx, round > 0);
    send_exactly (p.client, 3000);
    while (g_socket_get_available_bytes (p.server) < 3000 && tries++ < 200)
      g_usleep (5000);
    fail_unless_equals_int (mtcp_connection_receive (rx, NULL),
        MTCP_IO_DONE);
    fail_unless_equals_uint64 (mtcp_connection_bytes_received (rx), 3000 * (round + 1));
    fail_unless_equals_int (int_option (p.server, TCP_QUICKACK),
        round > 0 ? 0 : 1);
    /* a delayed ACK's timer, if one is pending, puts the kernel back in
     * quick-ACK mode: the next read must leave it again */
    g_usleep (60000);
  }
  mtcp_connection_free (rx);
  pair_close (&p);
}

GST_END_TEST;
#endif

static Suite *
tcpinfo_suite (void)
{
  Suite *s = suite_create ("mtcp-tcpinfo");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
#ifdef __linux__
  tcase_add_test (tc, test_info_follows_the_bytes);
  tcase_add_test (tc, test_bbr_state_is_read);
  tcase_add_test (tc, test_bbr_answer_decoded);
  tcase_add_test (tc, test_loss_recovery_states);
  tcase_add_test (tc, test_queue_from_rtts);
  tcase_add_test (tc, test_knobs_read_back);
  tcase_add_test (tc, test_receiver_delays_acks_after_each_read);
#endif
  return s;
}

GST_CHECK_MAIN (tcpinfo);

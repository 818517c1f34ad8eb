/* multitcp
 * Copyright (C) 2026 the multitcp authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "mtcptcpinfo.h"

#include <errno.h>
#include <string.h>
#ifdef __linux__
#include <netinet/in.h>
#include <sys/socket.h>
/* the kernel's header: glibc's struct tcp_info lacks the newer fields */
#include <linux/tcp.h>
#include <linux/inet_diag.h>
#endif

gboolean
mtcp_tcp_info_read (GSocket * socket, MtcpTcpInfo * info)
{
  memset (info, 0, sizeof (*info));
#ifdef __linux__
  {
    struct tcp_info ti;
    socklen_t len = sizeof (ti);

    memset (&ti, 0, sizeof (ti));
    if (getsockopt (g_socket_get_fd (socket), IPPROTO_TCP, TCP_INFO, &ti,
            &len) != 0)
      return FALSE;
    info->state = ti.tcpi_state;
    info->rtt_us = ti.tcpi_rtt;
    info->rttvar_us = ti.tcpi_rttvar;
    info->rto_us = ti.tcpi_rto;
    info->snd_cwnd = ti.tcpi_snd_cwnd;
    info->snd_ssthresh = ti.tcpi_snd_ssthresh;
    info->snd_mss = ti.tcpi_snd_mss;
    info->rcv_mss = ti.tcpi_rcv_mss;
    info->total_retrans = ti.tcpi_total_retrans;
    info->lost = ti.tcpi_lost;
    info->unacked = ti.tcpi_unacked;
    info->last_ack_recv_ms = ti.tcpi_last_ack_recv;
    info->last_data_sent_ms = ti.tcpi_last_data_sent;
    info->retrans = ti.tcpi_retrans;
    info->ca_state = ti.tcpi_ca_state;
    /* kernels before 4.9 leave 0 */
    info->delivery_rate_app_limited = ti.tcpi_delivery_rate_app_limited;
    /* fields after tcpi_total_retrans exist only on newer kernels: len says */
    if (len >= G_STRUCT_OFFSET (struct tcp_info, tcpi_bytes_acked) + 8)
      info->bytes_acked = ti.tcpi_bytes_acked;
    if (len >= G_STRUCT_OFFSET (struct tcp_info, tcpi_bytes_received) + 8)
      info->bytes_received = ti.tcpi_bytes_received;
    if (len >= G_STRUCT_OFFSET (struct tcp_info, tcpi_min_rtt) + 4)
      info->min_rtt_us = ti.tcpi_min_rtt;
    if (len >= G_STRUCT_OFFSET (struct tcp_info, tcpi_notsent_bytes) + 4)
      info->notsent_bytes = ti.tcpi_notsent_bytes;
    if (len >= G_STRUCT_OFFSET (struct tcp_info, tcpi_delivery_rate) + 8)
      info->delivery_rate = ti.tcpi_delivery_rate;
    if (len >= G_STRUCT_OFFSET (struct tcp_info, tcpi_pacing_rate) + 8)
      info->pacing_rate = ti.tcpi_pacing_rate;
    if (len >= G_STRUCT_OFFSET (struct tcp_info, tcpi_rwnd_limited) + 8)
      info->rwnd_limited_us = ti.tcpi_rwnd_limited;
    info->snd_wnd_known =
        len >= G_STRUCT_OFFSET (struct tcp_info, tcpi_snd_wnd) + 4;
    if (info->snd_wnd_known)
      info->snd_wnd = ti.tcpi_snd_wnd;
    return TRUE;
  }
#else
  return FALSE;
#endif
}

/* bbr's gains are in units of 1/256: the window's at one only in
 * PROBE_RTT (STARTUP and DRAIN keep it at 2.89, PROBE_BW at 2) */
#define BBR_UNIT_GAIN 256

gboolean
mtcp_tcp_info_take_cc (MtcpTcpInfo * info, gconstpointer cc, gsize len)
{
#if defined(__linux__) && defined(TCP_CC_INFO)
  struct tcp_bbr_info bbr;

  info->bbr_known = FALSE;
  info->bbr_bandwidth = 0;
  info->bbr_probing_rtt = FALSE;
  /* other algorithms answer with nothing (cubic, reno) or a shorter
   * struct (vegas, dctcp: 16 bytes) */
  if (len < G_STRUCT_OFFSET (struct tcp_bbr_info, bbr_cwnd_gain) +
      sizeof (bbr.bbr_cwnd_gain))
    return FALSE;
  memcpy (&bbr, cc, sizeof (bbr));
  info->bbr_known = TRUE;
  info->bbr_bandwidth = (guint64) bbr.bbr_bw_hi << 32 | bbr.bbr_bw_lo;
  info->bbr_probing_rtt = bbr.bbr_cwnd_gain == BBR_UNIT_GAIN;
  return TRUE;
#else
  (void) cc;
  (void) len;
  info->bbr_known = info->bbr_probing_rtt = FALSE;
  info->bbr_bandwidth = 0;
  return FALSE;
#endif
}

gboolean
mtcp_tcp_info_read_cc (GSocket * socket, MtcpTcpInfo * info)
{
#if defined(__linux__) && defined(TCP_CC_INFO)
  union tcp_cc_info cc;
  socklen_t len = sizeof (cc);

  memset (&cc, 0, sizeof (cc));
  if (getsockopt (g_socket_get_fd (socket), IPPROTO_TCP, TCP_CC_INFO, &cc,
          &len) != 0)
    len = 0;
  return mtcp_tcp_info_take_cc (info, &cc, MIN (len, sizeof (cc)));
#else
  (void) socket;
  return mtcp_tcp_info_take_cc (info, NULL, 0);
#endif
}

gboolean
mtcp_tcp_info_in_loss_recovery (const MtcpTcpInfo * info)
{
  return info->ca_state >= MTCP_TCP_CA_RECOVERY || info->lost > 0 ||
      info->retrans > 0;
}

gint64
mtcp_tcp_info_queue_us (const MtcpTcpInfo * info)
{
  if (info->rtt_us == 0 || info->min_rtt_us == 0 ||
      info->min_rtt_us == G_MAXUINT32)
    return 0;
  return MAX ((gint64) info->rtt_us - info->min_rtt_us, 0);
}

gboolean
mtcp_tcp_set_notsent_lowat (GSocket * socket, guint32 bytes)
{
#if defined(__linux__) && defined(TCP_NOTSENT_LOWAT)
  return g_socket_set_option (socket, IPPROTO_TCP, TCP_NOTSENT_LOWAT, bytes,
      NULL);
#else
  return FALSE;
#endif
}

gboolean
mtcp_tcp_set_congestion (GSocket * socket, const gchar * name, GError ** error)
{
  if (name == NULL || *name == '\0')
    return TRUE;
#if defined(__linux__) && defined(TCP_CONGESTION)
  if (setsockopt (g_socket_get_fd (socket), IPPROTO_TCP, TCP_CONGESTION, name,
          strlen (name)) != 0) {
    int errsv = errno;
    g_set_error (error, G_IO_ERROR, g_io_error_from_errno (errsv),
        "cannot use TCP congestion control '%s': %s (see "
        "net.ipv4.tcp_allowed_congestion_control)", name, g_strerror (errsv));
    return FALSE;
  }
  return TRUE;
#else
  g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED,
      "TCP_CONGESTION is not supported on this system");
  return FALSE;
#endif
}

gchar *
mtcp_tcp_get_congestion (GSocket * socket)
{
#if defined(__linux__) && defined(TCP_CONGESTION)
  char name[32];
  socklen_t len = sizeof (name) - 1;

  memset (name, 0, sizeof (name));
  if (getsockopt (g_socket_get_fd (socket), IPPROTO_TCP, TCP_CONGESTION, name,
          &len) == 0)
    return g_strndup (name, len);
#endif
  return g_strdup ("unknown");
}

gboolean
mtcp_tcp_congestion_ignores_loss (const gchar * name)
{
  /* Linux's bbr, and the bbr2/bbr3 of patched kernels */
  return name != NULL && g_str_has_prefix (name, "bbr");
}

gboolean
mtcp_tcp_set_window_clamp (GSocket * socket, guint32 bytes)
{
#if defined(__linux__) && defined(TCP_WINDOW_CLAMP)
  int fd = g_socket_get_fd (socket);
  int buf = bytes;

  /* On an established socket the clamp alone does not shrink what the
   * kernel advertises (measured on 6.x with tcp_shrink_window=0): bound the
   * receive buffer too (the kernel doubles it for overhead). FORCE passes
   * rmem_max when we may. */
  if (setsockopt (fd, SOL_SOCKET, SO_RCVBUFFORCE, &buf, sizeof (buf)) != 0)
    setsockopt (fd, SOL_SOCKET, SO_RCVBUF, &buf, sizeof (buf));
  return g_socket_set_option (socket, IPPROTO_TCP, TCP_WINDOW_CLAMP, bytes,
      NULL);
#else
  return FALSE;
#endif
}

void
mtcp_tcp_set_nodelay (GSocket * socket, gboolean nodelay)
{
  g_socket_set_option (socket, IPPROTO_TCP, TCP_NODELAY, nodelay ? 1 : 0,
      NULL);
}

gboolean
mtcp_tcp_set_pacing (GSocket * socket)
{
#if defined(__linux__) && defined(SO_MAX_PACING_RATE)
  /* Any cap other than "unlimited" (~0) turns on TCP's internal pacing
   * when no fq qdisc paces the socket; a cap this high never binds. */
  guint64 cap = G_MAXUINT64 - 1;

  return setsockopt (g_socket_get_fd (socket), SOL_SOCKET, SO_MAX_PACING_RATE,
      &cap, sizeof (cap)) == 0;
#else
  return FALSE;
#endif
}

guint64
mtcp_tcp_get_max_pacing_rate (GSocket * socket)
{
#if defined(__linux__) && defined(SO_MAX_PACING_RATE)
  guint64 cap = 0;
  socklen_t len = sizeof (cap);

  if (getsockopt (g_socket_get_fd (socket), SOL_SOCKET, SO_MAX_PACING_RATE,
          &cap, &len) == 0)
    return len == sizeof (guint32) && (guint32) cap == G_MAXUINT32 ?
        G_MAXUINT64 : cap;
#endif
  return G_MAXUINT64;
}

void
mtcp_tcp_delay_acks (GSocket * socket)
{
#if defined(__linux__) && defined(TCP_QUICKACK)
  /* Linux acknowledges every segment for a while after any pause longer
   * than the RTO, which a connection of a striped live stream has between
   * most bursts; the setting does not stick (the delayed-ACK timer clears
   * it), so the receiver sets it again after each read. */
  g_socket_set_option (socket, IPPROTO_TCP, TCP_QUICKACK, 0, NULL);
#endif
}

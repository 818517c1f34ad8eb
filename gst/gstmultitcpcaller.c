/* multitcp
 * Copyright (C) 2026 the multitcp authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstmultitcpcaller.h"

#include <string.h>

void
gst_multi_tcp_caller_install_signals (GType type, guint * signals)
{
  /**
   * GstMultiTcpSink::caller-added:
   * GstMultiTcpSrc::caller-added:
   * @session_id: the session
   * @address: (nullable): the address its first connection came from
   *
   * A peer's session began (as srtsink's caller-added): a receiver's at a
   * sink, a calling sink's at a listening source. Emitted from the
   * element's I/O thread.
   */
  signals[GST_MULTI_TCP_CALLER_ADDED] = g_signal_new ("caller-added", type,
      G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL, G_TYPE_NONE, 2, G_TYPE_STRING,
      G_TYPE_SOCKET_ADDRESS);
  /**
   * GstMultiTcpSink::caller-removed:
   * GstMultiTcpSrc::caller-removed:
   * @session_id: the session
   * @address: (nullable): the address its first connection came from
   *
   * A peer's session ended: at a sink, no connection for session-timeout
   * (or evicted for another); at a listening source, its sender left (end
   * of stream, or no connection for `timeout`). Emitted from the
   * element's I/O thread.
   */
  signals[GST_MULTI_TCP_CALLER_REMOVED] = g_signal_new ("caller-removed",
      type, G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL, G_TYPE_NONE, 2,
      G_TYPE_STRING, G_TYPE_SOCKET_ADDRESS);
  /**
   * GstMultiTcpSink::caller-rejected:
   * GstMultiTcpSrc::caller-rejected:
   * @address: (nullable): where the connection came from
   * @reason: why (what the refusal said)
   *
   * A connection was turned away: wrong passphrase or stream-id, a limit,
   * a protocol error, the application (caller-connecting). At most 32
   * between two passes of the I/O thread (a flood is counted in stats).
   * Emitted from the element's I/O thread.
   */
  signals[GST_MULTI_TCP_CALLER_REJECTED] = g_signal_new ("caller-rejected",
      type, G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL, G_TYPE_NONE, 2,
      G_TYPE_SOCKET_ADDRESS, G_TYPE_STRING);
  /**
   * GstMultiTcpSink::caller-connecting:
   * GstMultiTcpSrc::caller-connecting:
   * @address: (nullable): where the call came from
   * @stream_id: the stream id it named ("" for none)
   *
   * A peer that called would start a new session (its passphrase and
   * stream-id already checked): return FALSE to turn it away (as
   * srtsink's caller-connecting). Its further connections to the same
   * session are not asked about. Without a handler every caller is taken.
   * Emitted from the element's I/O thread, which waits for the answer.
   *
   * Returns: TRUE to take the caller
   */
  signals[GST_MULTI_TCP_CALLER_CONNECTING] =
      g_signal_new ("caller-connecting", type, G_SIGNAL_RUN_LAST, 0,
      g_signal_accumulator_first_wins, NULL, NULL, G_TYPE_BOOLEAN, 2,
      G_TYPE_SOCKET_ADDRESS, G_TYPE_STRING);
}

/* "host:port" of @address, or NULL */
static gchar *
address_string (GSocketAddress * address)
{
  gchar *ip, *s;

  if (address == NULL || !G_IS_INET_SOCKET_ADDRESS (address))
    return NULL;
  ip = g_inet_address_to_string (g_inet_socket_address_get_address
      (G_INET_SOCKET_ADDRESS (address)));
  s = g_strdup_printf (strchr (ip, ':') ? "[%s]:%u" : "%s:%u", ip,
      g_inet_socket_address_get_port (G_INET_SOCKET_ADDRESS (address)));
  g_free (ip);
  return s;
}

void
gst_multi_tcp_caller_tell (GstElement * element, GstMultiTcpCallers * callers,
    MtcpCallerEvent event, const gchar * session_id, GSocketAddress * address,
    const gchar * reason, const gchar * kind, guint attempt)
{
  switch (event) {
    case MTCP_CALLER_ADDED:
      g_signal_emit (element, callers->signals[GST_MULTI_TCP_CALLER_ADDED], 0,
          session_id, address);
      break;
    case MTCP_CALLER_REMOVED:
      g_signal_emit (element, callers->signals[GST_MULTI_TCP_CALLER_REMOVED],
          0, session_id, address);
      break;
    case MTCP_CALLER_REJECTED:
      g_signal_emit (element, callers->signals[GST_MULTI_TCP_CALLER_REJECTED],
          0, address, reason);
      break;
    case MTCP_CALLER_DIAL_FAILED:{
      /* the reason as data, for applications that tell "wrong passphrase"
       * from "nobody there"; one a second at most on the bus */
      gint64 now = g_get_monotonic_time ();
      gchar *to;

      if (now - callers->last_warning_us < G_USEC_PER_SEC)
        break;
      callers->last_warning_us = now;
      to = address_string (address);
      GST_ELEMENT_WARNING_WITH_DETAILS (element, RESOURCE, OPEN_READ_WRITE,
          ("Could not reach the %s at %s (%s), trying again", callers->peer,
              to ? to : "?", kind), ("%s", reason ? reason : ""),
          ("kind", G_TYPE_STRING, kind, "address", G_TYPE_STRING,
              to ? to : "", "attempt", G_TYPE_UINT, attempt, "reason",
              G_TYPE_STRING, reason ? reason : "", NULL));
      g_free (to);
      break;
    }
  }
}

gboolean
gst_multi_tcp_caller_accept (GstElement * element,
    GstMultiTcpCallers * callers, GSocketAddress * address,
    const gchar * stream_id)
{
  guint id = callers->signals[GST_MULTI_TCP_CALLER_CONNECTING];
  gboolean take = TRUE;

  if (!g_signal_has_handler_pending (element, id, 0, FALSE))
    return TRUE;
  g_signal_emit (element, id, 0, address, stream_id ? stream_id : "", &take);
  return take;
}

/* multitcp
 * Copyright (C) 2026 the multitcp authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
/* What both elements share about who calls them, as srtsink and srtsrc
 * do: the caller-added, caller-removed, caller-rejected and
 * caller-connecting signals, and a failed dial or reconnect told on the
 * bus as a warning whose details say why. */
#ifndef __GST_MULTI_TCP_CALLER_H__
#define __GST_MULTI_TCP_CALLER_H__

#include <gst/gst.h>
#include <gio/gio.h>

#include "mtcpcallers.h"

G_BEGIN_DECLS

enum {
  GST_MULTI_TCP_CALLER_ADDED,
  GST_MULTI_TCP_CALLER_REMOVED,
  GST_MULTI_TCP_CALLER_REJECTED,
  GST_MULTI_TCP_CALLER_CONNECTING,
  GST_MULTI_TCP_CALLER_N_SIGNALS
};

/* What an element keeps for them. */
typedef struct {
  const guint *signals;         /* the class's, by the enum above */
  const gchar *peer;            /* "receiver" or "sink": in messages */
  gint64 last_warning_us;       /* the I/O thread's only */
} GstMultiTcpCallers;

/* In class_init: the four signals on @type, ids into @signals. @peer
 * names who calls in their documentation. */
void gst_multi_tcp_caller_install_signals (GType type, guint * signals);

/* An MtcpCallerFunc for the transports (@user_data: the element, whose
 * instance struct starts its GstMultiTcpCallers at @callers): emits the
 * signal, or posts the warning of a failed dial, one a second at most. */
void gst_multi_tcp_caller_tell (GstElement * element,
    GstMultiTcpCallers * callers, MtcpCallerEvent event,
    const gchar * session_id, GSocketAddress * address, const gchar * reason,
    const gchar * kind, guint attempt);

/* An MtcpCallerAcceptFunc's body: caller-connecting's answer, TRUE when no
 * handler is connected. */
gboolean gst_multi_tcp_caller_accept (GstElement * element,
    GstMultiTcpCallers * callers, GSocketAddress * address,
    const gchar * stream_id);

G_END_DECLS

#endif

/* multitcp
 * Copyright (C) 2026 the multitcp authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
/* MtcpConnection's fields: mtcpconnection.c's own, and its unit test's
 * (tests/check/test_connection.c looks inside); nothing else includes
 * this. */
#ifndef __MTCP_CONNECTION_PRIVATE_H__
#define __MTCP_CONNECTION_PRIVATE_H__

#include "mtcpconnection.h"

G_BEGIN_DECLS

struct _MtcpConnection {
  GSocket *socket;
  gchar *peer;                  /* "host:port" for messages */
  MtcpFrameReader *reader;

  GQueue out;                   /* MtcpOutFrame, head of queue being written */
  gsize out_offset;             /* bytes of the head frame already written */
  gsize out_bytes;              /* bytes queued and not yet written */
  gboolean keep_sent;           /* keep written sequenced frames in `sent` */
  gboolean buffer_delta;        /* the peer reads BUFFER_DELTA: send those */
  gboolean compact;             /* ... with short headers and SAME heads */
  gboolean delay_acks;          /* the stream's receiver: fewer pure ACKs */
  MtcpBufferDeltaState delta_out;       /* of the last BUFFER_DELTA queued */
  MtcpBufferDeltaState delta_in;        /* of the last BUFFER_DELTA read */
  GQueue sent;                  /* MtcpOutFrame written, not yet acknowledged */
  gsize sent_bytes;             /* their bytes (mtcp_out_frame_size) */
  guint sent_timed;             /* how many of them have a due time */
  GSequence *waiting;           /* MtcpOutFrame held (sent, out) with a due time
                                 * and not copied, by due time */
  GHashTable *held_seqs;        /* guint64 seq -> how many sequenced frames
                                 * with it are held (sent, out) */

  GSource *source;
  gpointer fd_tag;
  gboolean want_write;

  guint64 bytes_sent;
  guint64 bytes_received;
  guint64 tcp_acked_base;       /* TCP_INFO's bytes_acked before our first byte */
  guint64 frames_sent;
  guint64 frames_received;
  gint64 created_us;

  gpointer user_data;           /* owner's per-connection state */

  GIOStream *tls;               /* GTlsConnection over the socket, or NULL */
  gboolean tls_handshaking;     /* no events, no output until it is done */
  GError *tls_error;            /* the handshake failed: every I/O fails so */
  MtcpTlsPending *tls_pending;
  gint *tls_orphans;            /* the owner's count, see
                                 * mtcp_connection_wait_orphaned_handshakes */
  gboolean more_input;          /* TLS may hold input the fd does not show */
  MtcpConnectionFunc func;      /* what mtcp_connection_attach () was given */
  gpointer func_data;
};

G_END_DECLS

#endif

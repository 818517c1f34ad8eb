/* multitcp
 * Copyright (C) 2026 the multitcp authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
/* The source's transport: opens a session of N TCP connections to a
 * multitcpsink, reads frames on an I/O thread, puts them into the reorder
 * buffer with a playback deadline, sends feedback, and hands items out in
 * order. multitcpsrc is a thin element over it.
 *
 * Local times are CLOCK_MONOTONIC in ns (mtcp_client_now); a buffer's PTS
 * and DTS leave here as the local time the sender's running time maps to,
 * so the element only shifts them into running time. */
#ifndef __MTCP_CLIENT_H__
#define __MTCP_CLIENT_H__

#include <gst/gst.h>
#include <gio/gio.h>

#include "mtcpcontrol.h"
#include "mtcpcallers.h"

G_BEGIN_DECLS

typedef struct _MtcpClient MtcpClient;

typedef struct {
  gboolean listener;            /* listen on host:port for the sink's calls
                                 * (it dials); else dial the sink there */
  gchar *host;
  guint port;
  guint connections;            /* 0 = from ParS's model once RTT and loss are known */
  MtcpControlConfig control;
  GstClockTime latency;         /* playback deadline after the mapped time */
  guint timeout_s;              /* connect and idle timeout, 0 = none */
  guint32 max_frame;
  guint feedback_interval_ms;
  guint retry;                  /* failed reconnects in a row before giving up; 0 = never reconnect */
  guint idle_timeout_ms;        /* a ready connection silent this long is dead */
  gchar *passphrase;            /* proven to the sink when it asks; NULL = none */
  gchar *local_addresses;       /* comma-separated IPs to spread over; NULL = any */
  gboolean tls;                 /* TLS on every connection */
  gchar *tls_ca_file;           /* PEM of the CAs to trust; NULL = the system's */
  GTlsCertificateFlags tls_validation_flags;    /* what refuses the sink */
  gchar *tls_server_name;       /* NULL = host */
  gchar *stream_id;             /* caller: named in HELLO; listener: the
                                 * one a calling sink must name; NULL */
  gboolean keep_listening;      /* listener: after the sender leaves (its
                                 * EOS, or no call for timeout_s), wait for
                                 * the next one; else the stream ends */
  guint stats_interval_ms;      /* 0 = no periodic stats callback */
  gboolean drift_correction;    /* the mapping follows the sender's clock rate */
} MtcpClientConfig;

typedef enum {
  MTCP_ITEM_BUFFER,
  MTCP_ITEM_CAPS,
  MTCP_ITEM_EOS,
} MtcpItemKind;

typedef struct {
  MtcpItemKind kind;
  guint64 seq;
  GstBuffer *buffer;            /* BUFFER: owned; PTS/DTS in local time */
  GstCaps *caps;                /* CAPS: owned */
  gboolean discont;             /* sequence numbers were skipped before it */
} MtcpItem;

void mtcp_item_clear (MtcpItem * item);

typedef enum {
  MTCP_POP_OK,
  MTCP_POP_FLUSHING,
  MTCP_POP_ERROR,
} MtcpPopResult;

/* Periodic stats, from the I/O thread; takes ownership of @stats. */
typedef void (*MtcpClientStatsFunc) (GstStructure * stats, gpointer user_data);

MtcpClient *mtcp_client_new (const MtcpClientConfig * config,
    MtcpClientStatsFunc stats_func, gpointer user_data);
/* Before start. Listener: calling sinks' sessions as they come and go,
 * calls turned away; caller: failed reconnects (mtcpcallers.h). */
void mtcp_client_set_caller_func (MtcpClient * client, MtcpCallerFunc func,
    gpointer user_data);
/* Before start. Listener: asked when a calling sink would start a new
 * session (its passphrase and stream-id checked); FALSE closes the call. */
void mtcp_client_set_accept_func (MtcpClient * client,
    MtcpCallerAcceptFunc func, gpointer user_data);
void mtcp_client_free (MtcpClient * client);

/* Caller: connects the first connection and joins a new session
 * (blocking, honours @cancellable and the timeout), then opens the others
 * in the background. Listener: binds and listens, and returns; the sink's
 * first call opens the session, and the receiver asks it (WANT) to dial
 * the others. */
gboolean mtcp_client_start (MtcpClient * client, GCancellable * cancellable,
    GError ** error);
/* The port listened on (listener; 0 asked: the one the kernel gave), or
 * dialed. */
guint mtcp_client_get_port (MtcpClient * client);
void mtcp_client_stop (MtcpClient * client);

/* Blocks until the next item is due, flushing, or a fatal error. */
MtcpPopResult mtcp_client_pop (MtcpClient * client, MtcpItem * item,
    GError ** error);
void mtcp_client_set_flushing (MtcpClient * client, gboolean flushing);

GstStructure *mtcp_client_get_stats (MtcpClient * client);
/* Change the count while running (fixed connection control): connections
 * open and join the session, or retire without losing what they hold. */
void mtcp_client_set_connections (MtcpClient * client, guint connections);
const gchar *mtcp_client_get_session_id (MtcpClient * client);

GstClockTime mtcp_client_now (void);

G_END_DECLS

#endif

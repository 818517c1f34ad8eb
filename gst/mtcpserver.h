/* multitcp
 * Copyright (C) 2026 the multitcp authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
/* The sink's transport: a listening socket (or, as a caller, connections it
 * dials to a listening receiver), sessions of TCP connections
 * and an I/O thread that hands frames from the shared send queue to
 * whichever connection can take them. multitcpsink is a thin element over
 * it; everything here runs without a pipeline. */
#ifndef __MTCP_SERVER_H__
#define __MTCP_SERVER_H__

#include <gst/gst.h>

#include "mtcpfriendly.h"
#include "mtcpburst.h"
#include <gio/gio.h>

#include "mtcpsendqueue.h"
#include "mtcpcallers.h"

G_BEGIN_DECLS

typedef struct _MtcpServer MtcpServer;

/* How a session fed by a non-live upstream paces its transfer (seed 004) */
typedef enum {
  MTCP_TRANSFER_GREEDY,         /* as fast as the sockets take it */
  MTCP_TRANSFER_NETWORK_FRIENDLY,       /* Eqs. 1-8: enough for playback */
  MTCP_TRANSFER_BURST,          /* YouTube-like (i): a burst, then blocks */
} MtcpTransferControl;

typedef struct {
  gboolean caller;              /* dial host:port, where the receiver
                                 * listens; else listen there */
  gchar *host;                  /* listener: bind address, NULL = all;
                                 * caller: the receiver's host */
  guint port;                   /* listener: 0 = any free port */
  guint retry;                  /* caller: failed dials in a row before
                                 * giving up (0: the first failure) */
  MtcpScheduler scheduler;
  MtcpSendQueueLimits limits;
  guint32 notsent_lowat;        /* bytes; 0 = leave the kernel default */
  gchar *congestion_control;    /* NULL/"" = system default */
  gboolean congestion_control_optional; /* refused: the system's, no
                                         * warning */
  gboolean pacing;              /* TCP paces each connection */
  guint32 max_frame;            /* largest frame body accepted/sent */
  guint max_sessions;
  guint max_connections;        /* per session */
  guint handshake_timeout_ms;
  guint max_pending_handshakes; /* accepted, no WELCOME yet; over it the
                                 * oldest of them is closed */
  guint report_interval_ms;
  guint session_timeout_ms;     /* keep a session with no connection this long */
  guint idle_timeout_ms;        /* close a connection silent this long, 0 = never */
  guint copy_overhead_percent;  /* copies of frames near their deadline: at
                                 * most this % of the stream, 0 = none */
  gchar *passphrase;            /* receivers must prove it; NULL/"" = open */
  gchar *stream_id;             /* listener: receivers must name it (NULL:
                                 * any); caller: named in WELCOME */
  gchar *local_addresses;       /* caller: uplinks to dial from, comma- */
  gchar *interfaces;            /* separated (see mtcpconnector.h); NULL */
  GTlsCertificate *tls_certificate;     /* TLS on every connection; NULL = none */
  MtcpTransferControl transfer; /* non-live upstreams only */
  MtcpFriendlyParams friendly;
  MtcpBurstParams burst;
} MtcpServerConfig;

/* Called from the I/O thread when a peer misbehaves (the connection is
 * closed, the rest goes on), with no lock of the server held: it may read
 * stats. It must not stop the server (that joins the I/O thread). */
typedef void (*MtcpServerWarningFunc) (const gchar * message,
    gpointer user_data);

/* Called from the I/O thread with no lock held, with a session's bandwidth
 * estimate ("multitcpsink-estimate": session, estimated-bitrate,
 * path-limited, stream-bitrate, n-connections), to keep, when it moved by
 * a fifth and at least once a second. The function takes @estimate. */
typedef void (*MtcpServerEstimateFunc) (GstStructure * estimate,
    gpointer user_data);

/* Called from the I/O thread with no lock held after every tick
 * (report_interval_ms), whether or not an estimate was told: a controller
 * that follows the estimates (mtcp_server_get_estimate) acts on each
 * measurement, not only on those that moved by a fifth. */
typedef void (*MtcpServerTickFunc) (gpointer user_data);

MtcpServer *mtcp_server_new (const MtcpServerConfig * config,
    MtcpServerWarningFunc warning, gpointer user_data);
/* Before start. */
void mtcp_server_set_estimate_func (MtcpServer * server,
    MtcpServerEstimateFunc func, gpointer user_data);
/* Before start. */
void mtcp_server_set_tick_func (MtcpServer * server, MtcpServerTickFunc func,
    gpointer user_data);
/* Before start. The receivers' sessions as they come and go, refusals,
 * and (caller) failed dials (mtcpcallers.h); at most
 * MTCP_CALLER_QUEUE_MAX between two releases of the lock. */
void mtcp_server_set_caller_func (MtcpServer * server,
    MtcpCallerFunc func, gpointer user_data);
/* Before start. Listener: asked before a receiver's new session is made
 * (after its stream id and passphrase were checked); FALSE refuses it
 * (REFUSE code 9). Joins of a session it took are not asked again. */
void mtcp_server_set_accept_func (MtcpServer * server,
    MtcpCallerAcceptFunc func, gpointer user_data);
/* Reference counted: whoever reads stats or sets limits from another
 * thread holds a reference while it does; the last unref stops and frees. */
MtcpServer *mtcp_server_ref (MtcpServer * server);
void mtcp_server_unref (MtcpServer * server);

gboolean mtcp_server_start (MtcpServer * server, GError ** error);
void mtcp_server_stop (MtcpServer * server);
guint mtcp_server_get_port (MtcpServer * server);
/* Caller: why it gave up reaching the receiver (newly allocated), NULL
 * while it has not. */
gchar *mtcp_server_gave_up (MtcpServer * server);

/* Producer side, from the streaming thread. A non-live producer waits while
 * a session is over its bound; a live one makes that session skip ahead.
 * Returns FALSE when flushing. */
void mtcp_server_push_caps (MtcpServer * server, GstCaps * caps);
gboolean mtcp_server_push_buffer (MtcpServer * server, GstBuffer * buffer,
    GstClockTime pts, GstClockTime dts, GstClockTime duration,
    gboolean live);
void mtcp_server_push_eos (MtcpServer * server);
/* Blocks until a receiver has a connection; FALSE when flushing or when a
 * caller gave up dialing. */
gboolean mtcp_server_wait_receiver (MtcpServer * server);
/* Wait until every session has written all it was given (EOS), at most
 * @timeout_us. */
gboolean mtcp_server_wait_drained (MtcpServer * server, gint64 timeout_us);
void mtcp_server_set_flushing (MtcpServer * server, gboolean flushing);

void mtcp_server_set_scheduler (MtcpServer * server, MtcpScheduler scheduler);
void mtcp_server_set_limits (MtcpServer * server,
    const MtcpSendQueueLimits * limits);

/* Any thread, no lock held. The most the stream may grow to, bits/s (0:
 * what it is): the sink sets its encoder's bitrate from the network
 * (bitrate-control), and the receivers size their connections for the
 * stream it would send, not for the one the path holds it at now (one
 * cubic connection at 3% loss carries about 1 Mbit/s, and ParS's count
 * for the stream's start kept the encoder there). */
void mtcp_server_set_stream_ceiling (MtcpServer * server, guint64 bps);

GstStructure *mtcp_server_get_stats (MtcpServer * server);
/* One session's bandwidth estimate (mtcpestimate.h) and its receiver. */
typedef struct {
  guint64 bps;                  /* 0: none, or dark */
  gboolean path_limited;
  guint64 delivered_bps;        /* over its last span */
  gint64 waited_us;             /* mtcp_rate_estimate_waited_us */
  gint64 latency_us;            /* the receiver's latency (HELLO), 0: unknown */
} MtcpServerEstimate;

/* The weakest (@strongest: the strongest) bandwidth estimate of the
 * sessions that have connections and a measured span, and the skips of
 * every session so far, ended ones too. FALSE: no session measured
 * (@estimate->bps 0 is no outage). Any thread, no lock held (takes the
 * server's). */
gboolean mtcp_server_get_estimate (MtcpServer * server, gboolean strongest,
    MtcpServerEstimate * estimate, guint64 * skips);
/* Any thread, no lock held. Each session whose path carries the whole
 * stream (a known estimate, not the path's limit) adds padding for a
 * while (mtcpprobe.h), so that the stream and it make @total_bps, and
 * stops early once its path queues: what the path then delivers is in
 * the estimate. @total_bps 0: every probe stops. */
void mtcp_server_probe (MtcpServer * server, guint64 total_bps);

G_END_DECLS

#endif

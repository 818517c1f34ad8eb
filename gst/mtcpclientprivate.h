/* multitcp
 * Copyright (C) 2026 the multitcp authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
/* The source transport's insides, shared by its files (the list is at
 * the top of mtcpclient.c); nothing else includes this.
 *
 * Locking: client->lock guards everything in these structures. Every
 * function declared here runs with it held unless its group says
 * otherwise; only the I/O thread opens, reads, writes and closes
 * connections, so a ClientConn stays valid while that thread runs a
 * callback even where the lock is dropped (a key derivation). Local times
 * are monotonic: microseconds in names ending _us, else ns
 * (mtcp_client_now). */
#ifndef __MTCP_CLIENT_PRIVATE_H__
#define __MTCP_CLIENT_PRIVATE_H__

#include "mtcpclient.h"
#include "mtcpconnection.h"
#include "mtcpprotocol.h"
#include "mtcpauth.h"
#include "mtcppars.h"
#include "mtcpplayout.h"
#include "mtcpreorder.h"
#include "mtcpiothread.h"
#include "mtcpconnector.h"
#include "mtcptimemap.h"

G_BEGIN_DECLS

GST_DEBUG_CATEGORY_EXTERN (mtcp_client_debug);
GST_DEBUG_CATEGORY_EXTERN (mtcp_client_frames_debug);
GST_DEBUG_CATEGORY_EXTERN (mtcp_client_connect_debug);
GST_DEBUG_CATEGORY_EXTERN (mtcp_client_control_debug);

/* a silence longer than this starts a new run of hearing from the peer */
#define HEARING_GAP_US (G_USEC_PER_SEC)

typedef enum {
  CONN_CONNECTING,
  CONN_HANDSHAKE,
  CONN_READY,
  CONN_RETIRING,                /* asked the sink to stop; reads until EOF */
} ConnState;

typedef struct {
  MtcpClient *client;
  MtcpConnection *conn;
  ConnState state;
  guint32 id;                   /* the sink's connection id */
  guint index;                  /* ours, for messages */
  MtcpReport report;            /* last REPORT from the sink */
  gint64 report_us;             /* when it arrived, 0 = never */
  MtcpParsFirstRecovery first_recovery; /* where its loss after the start
                                         * counts from */
  gint64 heard_us;              /* last time anything arrived on it */
  gint64 heard_since_us;        /* since when it arrives without a silence
                                 * longer than HEARING_GAP_US */
  gint64 feedback_us;           /* last FEEDBACK sent on it, 0 = never */
  guint64 buffers_received;
  guint window_bytes;           /* TCP_WINDOW_CLAMP we set, 0 = none */
  gboolean fresh;               /* asks for a new session: the old one is
                                 * gone */
  gboolean accepted;            /* the sink dialed it (we listen) */
  gboolean probe;               /* opened while every other one was silent */
  gint local;                   /* index into client->locals, -1 = any */
  guint path;                   /* its path: the local address, or the
                                 * calling sink's uplink (WELCOME) */
  /* the passphrase handshake on this connection */
  gboolean challenged;          /* answered a CHALLENGE, no PROOF yet */
  gboolean sink_proven;         /* the sink's PROOF was right */
  MtcpHello auth_hello;         /* the HELLO sent: both proofs cover it */
  MtcpAuthKey proof_key;        /* the key the AUTH was made with: the
                                 * PROOF is checked with it, whatever
                                 * another connection derives meanwhile */
  guint8 sink_nonce[MTCP_NONCE_SIZE];
  guint8 own_nonce[MTCP_NONCE_SIZE];
} ClientConn;

struct _MtcpClient {
  MtcpClientConfig config;
  MtcpClientStatsFunc stats_func;
  gpointer stats_data;

  GSocketAddress *address;      /* caller: the sink's */
  MtcpConnector *connector;     /* listener: accepts the sink's calls */
  guint want_told;              /* listener: the count the sink was asked */
  guint path_want_told[MTCP_MAX_PATHS];
  gint64 want_told_us;          /* for, and when */
  guint8 session_id[MTCP_SESSION_ID_SIZE];
  gchar *session_str;

  GMutex lock;
  GCond cond;                   /* new item, flushing, error */
  MtcpReorder *reorder;
  MtcpPlayout *playout;         /* released downstream, not yet due */
  GList *conns;                 /* ClientConn* */
  GList *closed;                /* freed after the dispatch that closed them */
  guint next_index;
  gboolean flushing;
  GError *error;                /* fatal, reported by pop */
  gboolean all_closed;          /* no connection left at the moment, */
  gint64 all_closed_us;         /* since when */
  gboolean sender_left;         /* listener: the stream ended without EOS */
  GSocketAddress *sender_address;       /* listener: the session's caller */
  MtcpCallerQueue *callers;     /* told after the lock (client_unlock) */
  MtcpCallerFunc caller;
  gpointer caller_data;
  MtcpCallerAcceptFunc accept;
  gpointer accept_data;
  guint64 senders_left;         /* listener: senders that came and went */
  gboolean gave_up;             /* and no more reconnects: gaps are final */
  guint failures;               /* connection losses and failed opens in a
                                 * row, until one carries a buffer */
  gchar *last_failure;          /* why the last of them failed */
  gint64 next_open_us;          /* backoff: no new connection before this */
  GPtrArray *locals;            /* GSocketAddress to bind to, spread evenly */
  /* paths: this end's local addresses, or a calling sink's uplinks; the
   * count is split over them by what each delivers (mtcp_control_split) */
  guint n_paths;                /* 0 or 1: no paths to tell apart */
  guint64 path_bytes[MTCP_MAX_PATHS];   /* received on each */
  guint64 path_bytes_mark[MTCP_MAX_PATHS];
  gdouble path_rate[MTCP_MAX_PATHS];    /* bytes/s, smoothed */
  gint64 path_rate_us;
  guint path_want[MTCP_MAX_PATHS];
  MtcpTlsConfig tls;            /* .server_name set: TLS on */
  /* the passphrase's key for the salt and rounds the sink asked for last:
   * derived once, not per connection */
  MtcpAuthKey auth_key;
  gboolean session_gone;        /* the sink no longer knows our session */
  gboolean reset_discont;       /* the next release starts a new stream */
  guint64 reconnects;
  guint64 outage_probes;        /* connections opened to find the path back */
  gint64 next_probe_us;
  guint64 sessions_started;

  MtcpTimeMap *time_map;        /* sender running time -> local deadline */

  /* counters */
  guint64 bytes_received;
  guint64 payload_received;     /* BUFFER payload, duplicates not counted */
  guint64 buffers_received;
  guint64 buffers_pushed;
  guint64 bytes_pushed;
  guint64 late;
  guint64 duplicates;
  guint64 padding_bytes;        /* PADDING the sink probed the path with */
  guint64 protocol_errors;
  guint64 connections_lost;
  guint64 dials_dropped;        /* dials closed before ready: count fell */
  gint64 last_data_us;
  guint64 rate_bytes_mark;
  gint64 rate_since_us;
  guint64 bitrate;
  gint64 stats_posted_us;

  /* receiver-driven control: the count and windows (mtcpcontrol.c) */
  MtcpControl *control;
  guint wanted;                 /* connections the control wants now */
  guint sink_limit;             /* the sink refused a join for its limit:
                                 * dials stop here; 0 = none known */
  gint64 sink_limit_us;         /* when it last refused one */
  guint sink_max_connections;   /* the sink's per session, as its WELCOME
                                 * said; 0 = not said */

  MtcpIoThread io;
  gboolean running;
  /* see mtcp_connection_wait_orphaned_handshakes */
  gint tls_orphans;
};

/* mtcpclient.c. client_close_conn closes at once and frees at
 * client_reap (): callers up the stack may still hold the connection.
 * client_note_caller queues what client_unlock () (the I/O thread's way
 * out of the lock) tells the owner once the lock is released.
 * client_on_conn_event: the I/O thread, no lock held (it takes it). */
void client_item_free (MtcpItem * item);
void client_fail (MtcpClient * client, GError * error);
void client_note_failure (MtcpClient * client, const GError * error,
    const gchar * why);
void client_note_caller (MtcpClient * client, MtcpCallerEvent event,
    GSocketAddress * address, const gchar * reason);
void client_unlock (MtcpClient * client);
void client_close_conn (MtcpClient * client, ClientConn * cc,
    const gchar * why);
void client_reap (MtcpClient * client);
gboolean client_on_conn_event (MtcpConnection * conn, GIOCondition cond,
    gpointer user_data);
void client_start_io (MtcpClient * client);

/* mtcpclientframes.c. client_handle_data_frame returns FALSE with *err
 * on a protocol error (the caller closes the connection). */
gboolean client_handle_data_frame (MtcpClient * client, ClientConn * cc,
    const MtcpFrameHeader * hdr, const guint8 * body, GstClockTime now,
    gchar ** err);
void client_send_feedback (MtcpClient * client, ClientConn * cc, gint64 now_us);
ClientConn *client_feedback_carrier (MtcpClient * client);

/* mtcpclientconnect.c. client_setup_tls, client_parse_local_addresses,
 * client_connect_first and client_start_listening: no lock, before the
 * I/O thread runs (client_connect_first blocks). client_handle_welcome
 * returns FALSE with *err when the connection is to close. */
gboolean client_handle_welcome (MtcpClient * client, ClientConn * cc,
    const MtcpFrameHeader * hdr, const guint8 * body, gchar ** err);
void client_send_hello (ClientConn * cc, MtcpClient * client, gboolean join);
gboolean client_setup_tls (MtcpClient * client, GError ** error);
gboolean client_parse_local_addresses (MtcpClient * client, GError ** error);
ClientConn *client_open_connection (MtcpClient * client);
ClientConn *client_connect_first (MtcpClient * client,
    GCancellable * cancellable, GError ** error);
gboolean client_start_listening (MtcpClient * client, GError ** error);

/* mtcpclientcontrol.c. client_open_more_connections: an idle callback
 * on the I/O thread, no lock held (it takes it). */
guint client_count_conns (MtcpClient * client, gboolean ready_only);
guint client_dial_cap (MtcpClient * client, gint64 now);
void client_note_sink_limit (MtcpClient * client, gboolean refused,
    gint64 now);
gint64 client_conn_silence (ClientConn * cc, gint64 now);
void client_tell_want (MtcpClient * client, gint64 now);
gboolean client_open_more_connections (gpointer data);
void client_keep_connection_count (MtcpClient * client, gint64 now);
MtcpControlConn *client_control_snapshot (MtcpClient * client, gint64 now,
    MtcpControlSnapshot * snap);
void client_controller_tick (MtcpClient * client, gint64 now);
void client_probe_dark_path (MtcpClient * client, gint64 now);
/* Every second: each path's rate, and the count split over the paths. */
void client_measure_paths (MtcpClient * client, gint64 now);
/* The path a new connection should go out on (most short of its share). */
gint client_path_to_open (MtcpClient * client);

G_END_DECLS

#endif

/* multitcp
 * Copyright (C) 2026 the multitcp authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
/* The sink transport's insides, shared by its files (the list is at the
 * top of mtcpserver.c); nothing else includes this.
 *
 * Locking: server->lock guards everything in these structures. Every
 * function declared here runs with it held unless its group says
 * otherwise; the I/O thread's callbacks (server_on_connected,
 * server_on_connect_failed, server_on_conn_event, the tick, the deadline
 * watch, the pump) take it and release it with server_unlock (), which
 * then passes on what was said meanwhile: nothing calls out with it held.
 * Times are monotonic microseconds (g_get_monotonic_time) unless a name
 * says otherwise. */
#ifndef __MTCP_SERVER_PRIVATE_H__
#define __MTCP_SERVER_PRIVATE_H__

#include "mtcpserver.h"
#include "mtcpfriendly.h"
#include "mtcpburst.h"
#include "mtcpconnection.h"
#include "mtcpiothread.h"
#include "mtcprepair.h"
#include "mtcpestimate.h"
#include "mtcpprobe.h"
#include "mtcptransit.h"
#include "mtcpauth.h"
#include "mtcpconnector.h"
#include "mtcptcpinfo.h"

G_BEGIN_DECLS

GST_DEBUG_CATEGORY_EXTERN (mtcp_server_debug);
GST_DEBUG_CATEGORY_EXTERN (mtcp_server_admission_debug);
GST_DEBUG_CATEGORY_EXTERN (mtcp_server_schedule_debug);
GST_DEBUG_CATEGORY_EXTERN (mtcp_server_repair_debug);
GST_DEBUG_CATEGORY_EXTERN (mtcp_server_path_debug);
GST_DEBUG_CATEGORY_EXTERN (mtcp_server_dial_debug);
GST_DEBUG_CATEGORY_EXTERN (mtcp_server_transfer_debug);

/* warnings waiting for the lock to be released: a flood of bad peers
 * costs a count beyond this, not memory */
#define MAX_QUEUED_WARNINGS 32

typedef struct _ServerSession ServerSession;

/* A calling sink's uplink (a modem): dialed with a backoff of its own, so
 * one that is down does not hold the others back. */
typedef struct {
  guint failures;               /* dials from it failed in a row */
  gint64 next_dial_us;          /* not before (backoff) */
  gint64 next_probe_us;
  guint want;                   /* the receiver's count for it; 0: not said */
  guint64 dials;
  guint64 dial_failures;
  guint64 outage_probes;
  guint64 closed_sent;          /* bytes_sent, retransmits of its */
  guint64 closed_retrans;       /* connections that closed */
} ServerPath;

typedef struct {
  MtcpServer *server;
  MtcpConnection *conn;
  ServerSession *session;       /* NULL until the handshake is done */
  guint32 id;
  gint64 accepted_us;
  MtcpFeedback feedback;
  gint64 feedback_us;           /* when the last FEEDBACK came, 0 = never */
  gint64 heard_since_us;        /* since when FEEDBACK comes without a
                                 * silence longer than HEARING_GAP_US */
  gint64 report_us;             /* when the last REPORT was queued, 0 = never */
  guint32 lowat;                /* TCP_NOTSENT_LOWAT in force, 0 = not set */
  guint path;                   /* caller: the uplink it was dialed from */
  guint32 echo_rtt_us;          /* from REPORT echoes */
  MtcpTcpInfo info;
  gint64 watch_read_us;         /* when info was last read between ticks */
  MtcpDrainRate drain;          /* what its receiver acknowledged lately */
  MtcpHeldReading held_reading; /* what it would carry, from before its
                                 * last loss repair (the estimate) */
  gint64 probe_queue_us;        /* its path's queue when a probe began */
  gboolean silent;              /* as last seen (mtcpserverschedule.c) */
  guint32 rtt_before_silence_us;        /* its smoothed RTT then */
  gint64 heard_again_us;        /* when the last silence ended, 0 = none */
  MtcpFriendly *friendly;       /* transfer-control=network-friendly */
  gint64 transfer_read_us;      /* when it last read info */
  gchar *congestion;
  gboolean retiring;            /* in sess->retiring: sends what it holds, then closes */
  guint64 retiring_sent;        /* its bytes_sent when it last made progress, */
  gint64 retiring_progress_us;  /* and when */
  gboolean challenged;          /* waits for AUTH to the CHALLENGE it got */
  gboolean pending;             /* accepted, handshake not done: counted in
                                 * server->pending_handshakes */
  MtcpHello hello;              /* what it asked for, until it proves itself */
  guint8 nonce[MTCP_NONCE_SIZE];        /* the sink's, in its CHALLENGE */
} ServerConn;

struct _ServerSession {
  guint8 id[MTCP_SESSION_ID_SIZE];
  gchar *id_str;
  MtcpQueueSession *qs;
  GPtrArray *conns;             /* ServerConn* the schedulers use, not owned */
  GPtrArray *retiring;          /* ServerConn* the receiver retired, not owned */
  guint rr_next;
  guint32 next_conn_id;
  gint64 created_us;
  gboolean ended;               /* no connection left: freed by reap () */
  gint64 orphaned_us;           /* when its last connection went, 0 = has some */
  gboolean requeued;            /* frames to send again: pump at the end */
  gboolean eos_sent;
  guint64 eos_seq;
  guint64 acked;                /* highest in-order seq the receiver has, or NONE */
  gint64 acked_us;              /* when that last moved */
  guint64 hedged_seq;           /* the last frame sent again on a second */
  gint64 hedged_us;             /* connection because it was stuck, and when */
  guint64 frames_hedged;
  gint64 latency_us;            /* the receiver's, from HELLO; 0 = unknown */
  MtcpRepairBudget *repair;     /* pays for hedges and copies */
  MtcpRateEstimate *estimate;   /* what its connections can carry now */
  MtcpRateProbe *probe;         /* padding that measures the room above the
                                 * stream (mtcpserverpath.c) */
  guint64 frames_copied;        /* copied because their deadline was near */
  guint64 gated;                /* times a connection could take a frame
                                 * but would have delivered it late */
  guint64 gate_margin_waived;   /* times a connection took frames though
                                 * within its gate's margin (uplinks: no
                                 * other connection had the margin) */
  guint64 passed_to_sooner;     /* times a connection could take a frame
                                 * but another would deliver it sooner */
  guint64 held_silent;          /* times a connection fell silent (it is
                                 * given no frame until heard again) */
  guint64 bytes_copied;
  guint64 frames_expired;       /* unacknowledged, no longer kept */
  gsize bytes_kept;             /* unacknowledged, kept, at the last tick */
  guint64 closed_acked;         /* bytes the receiver's TCP acknowledged on */
  guint64 closed_written;       /* bytes_sent, bytes_received of its */
  guint64 closed_read;          /* connections that closed */
  GSocketAddress *peer_address; /* of the connection that opened it */
  MtcpBurst *burst;             /* transfer-control=burst */
  /* the receiver's playout buffer by its last FEEDBACK, and what the
   * session handed its connections by then (transfer control) */
  guint64 playout_bytes;
  gboolean playout_known;
  gint64 playout_us;
  guint64 handed_bytes;         /* to its connections, in all */
  guint64 handed_at_playout;
  guint64 transfer_held;        /* times a connection had no room in its
                                 * round (transfer control) */
};

struct _MtcpServer {
  gint refcount;                /* atomic */
  MtcpServerConfig config;
  MtcpServerWarningFunc warning;
  gpointer warning_data;

  GMutex lock;                  /* queue, sessions, connections, flags */
  GPtrArray *warnings;          /* gchar*: said under the lock, passed on
                                 * after it (server_unlock) */
  guint64 warnings_dropped;     /* more than MAX_QUEUED_WARNINGS at once */
  GPtrArray *estimates;         /* GstStructure*: as warnings */
  guint64 skips_ended;          /* skips of sessions freed */
  MtcpServerEstimateFunc estimate;
  gpointer estimate_data;
  MtcpServerTickFunc tick;
  gpointer tick_data;
  MtcpCallerQueue *callers;     /* as warnings */
  MtcpCallerFunc caller;
  gpointer caller_data;
  MtcpCallerAcceptFunc accept;  /* listener: may a new receiver join */
  gpointer accept_data;
  guint n_conns;                /* length of conns */
  MtcpConnector *connector;     /* listens, or dials the receiver */
  guint64 accept_errors;
  /* dialing (caller): connections the receiver wants, failures in a row
   * (any uplink), each uplink's state; gave_up once every uplink failed
   * `retry` times in a row */
  guint dial_wanted;
  guint dial_failures;
  ServerPath paths[MTCP_MAX_UPLINKS];
  guint n_paths;                /* 1 without uplinks */
  guint opener;                 /* the uplink the session's first call tries */
  guint64 dials;
  guint64 outage_probes;
  gboolean gave_up;
  gchar *gave_up_reason;
  gint tls_orphans;             /* see mtcp_connection_wait_orphaned_handshakes */
  GCond cond;                   /* room in the queue, drained */
  MtcpSendQueue *queue;
  GList *sessions;              /* ServerSession* */
  GList *conns;                 /* ServerConn*, all of them, newest first */
  GList *closed;                /* ServerConn* closed during this dispatch */
  gboolean flushing;
  gboolean running;

  guint bound_port;
  MtcpIoThread io;
  gint wake_pending;            /* atomic: a pump is already scheduled */
  gboolean probe_timer;         /* a probe's timer runs (mtcpserverpath.c) */

  gboolean live;                /* the last buffer came from a live upstream:
                                 * sessions may skip what would arrive late */
  /* stream rate measured at the input */
  guint64 rate_bytes;
  gint64 rate_since_us;
  guint64 stream_bitrate;
  guint64 stream_ceiling_bps;   /* the most the sink's encoder may be given
                                 * (bitrate-control), 0: none */
  /* the playback rate, bytes per second of PTS (mtcpservertransfer.c) */
  GstClockTime media_pts0;
  guint64 media_bytes;
  gdouble media_rate_Bps;
  gboolean transfer_held;       /* a connection waits for its next round */
  gboolean transfer_warned;     /* said once why there is no control */

  guint64 protocol_errors;
  guint64 refused;
  guint64 connections_accepted;
  guint pending_handshakes;     /* connections with pending set */
  guint pending_handshakes_peak;
  guint64 connections_rejected; /* closed for max_pending_handshakes */
  guint64 handshakes_timed_out;
  gint64 rejected_warned_us;    /* last warning about rejections */
  guint64 rejected_unwarned;

  /* derived once at start from the passphrase and a random salt: a
   * stranger's HELLO costs an HMAC, never a key derivation */
  MtcpAuthKey auth_key;
};

/* mtcpserver.c. server_warn and server_note_caller* queue what they say
 * until server_unlock (), which releases the lock and then tells the
 * owner: its handlers may post on a bus whose sync handler reads our
 * stats. server_close_conn closes at once and frees at server_reap ():
 * callers up the stack may still hold the connection or its session. */
void server_note_caller_full (MtcpServer * server, MtcpCallerEvent event,
    const gchar * session_id, GSocketAddress * address, const gchar * reason,
    const gchar * kind, guint attempt);
void server_note_caller (MtcpServer * server, MtcpCallerEvent event,
    const gchar * session_id, GSocketAddress * address, const gchar * reason);
void server_warn (MtcpServer * server, const gchar * format, ...)
    G_GNUC_PRINTF (2, 3);
void server_unlock (MtcpServer * server);
void server_close_conn (MtcpServer * server, ServerConn * sc,
    const gchar * why);
void server_reap (MtcpServer * server);
gboolean server_on_conn_event (MtcpConnection * conn, GIOCondition cond,
    gpointer user_data);
void server_send_report (MtcpServer * server, ServerConn * sc, gint64 now);

/* mtcpserveradmission.c. server_on_connected: the I/O thread, no lock
 * held (it takes it). server_derive_auth_key: no lock, before the I/O
 * thread runs. The handlers return FALSE when the connection was closed. */
void server_session_free (MtcpServer * server, ServerSession * sess);
void server_refuse (MtcpServer * server, ServerConn * sc, MtcpRefuseCode code,
    const gchar * reason);
gboolean server_handle_hello (MtcpServer * server, ServerConn * sc,
    const guint8 * body, gsize size);
gboolean server_handle_auth (MtcpServer * server, ServerConn * sc,
    const guint8 * body, gsize size);
void server_on_connected (GSocket * sock, guint uplink, gpointer user_data);
gboolean server_derive_auth_key (MtcpServer * server, GError ** error);

/* mtcpserverschedule.c. server_conn_flush returns FALSE when the write
 * closed the connection. server_wake: any thread, no lock held (it
 * schedules server_pump_all on the I/O thread). */
gboolean server_conn_flush (MtcpServer * server, ServerConn * sc,
    MtcpIoResult * result);
void server_conn_hand (MtcpServer * server, ServerConn * sc, MtcpOutFrame * f);
void server_pump_session (MtcpServer * server, ServerSession * sess);
void server_pump_all (MtcpServer * server);
void server_wake (MtcpServer * server);
void server_follow_cwnd_with_lowat (MtcpServer * server, ServerConn * sc);
gint64 server_session_transit_us (ServerSession * sess);
gboolean server_conn_note_silence (MtcpServer * server, ServerConn * sc,
    gint64 now);
void server_session_note_silence (MtcpServer * server, ServerSession * sess,
    gint64 now);

/* mtcpservertransfer.c, server->lock held but the timer's (no lock, it
 * takes it). server_transfer_room: what @sc may pass to TCP now under the
 * transfer control (G_MAXSIZE: no control; @now 0: read the clock only
 * if a control is on); server_note_media: a buffer's PTS and size, for the
 * playback rate; server_transfer_stream_bitrate: the stream's rate the
 * receiver plans its connections for (REPORT); server_transfer_paces: the
 * control paces the stream at its playback rate; server_transfer_report_
 * flags: REPORT's PACED flags for a session. */
gsize server_transfer_room (MtcpServer * server, ServerConn * sc, gint64 now);
void server_transfer_sent (MtcpServer * server, ServerConn * sc, gsize bytes);
gboolean server_on_transfer_timer (gpointer data);
void server_transfer_note_feedback (MtcpServer * server,
    ServerSession * sess, const MtcpFeedback * fb, gint64 now);
void server_note_media (MtcpServer * server, GstClockTime pts, gsize bytes);
guint64 server_transfer_stream_bitrate (MtcpServer * server);
gboolean server_transfer_paces (MtcpServer * server);
guint32 server_transfer_report_flags (MtcpServer * server,
    ServerSession * sess, gint64 now);

/* mtcpserverrepair.c. server_on_deadline_watch: the I/O thread's timer,
 * no lock held (it takes it). A hedge writes to the session's connections
 * and may close any of them. */
void server_hedge_stuck_frame (MtcpServer * server, ServerSession * sess,
    const MtcpFeedback * fb, gint64 now);
gboolean server_on_deadline_watch (gpointer data);
/* No ACK, with data in flight, for two RTTs and four variations (200 ms at
 * least), by the TCP_INFO last read. */
gboolean server_conn_silent (const ServerConn * sc);
/* @sc has gone silent while another connection of @sess is heard: its
 * path is gone for now; by the TCP_INFO last read. */
gboolean server_conn_dark (ServerSession * sess, const ServerConn * sc);

/* mtcpserverstats.c: the uplinks' stats, a GST_TYPE_ARRAY of "path"
 * structures into @array (uninitialised). */
void server_paths_value (MtcpServer * server, GValue * array);

/* mtcpserverpath.c: reads TCP_INFO of every connection of @sess. */
void server_session_measure_path (MtcpServer * server, ServerSession * sess);
/* What @sc has not sent yet: its own queue and the socket's unsent bytes
 * by the TCP_INFO last read; backlogged when that is not 0. */
guint64 server_conn_unsent_bytes (const ServerConn * sc);
gboolean server_conn_backlogged (const ServerConn * sc);
/* server->lock held. Reads @sc's TCP_INFO into sc->info and notes it in
 * its drain rate at @now_us. */
void server_conn_read_info (ServerConn * sc, gint64 now_us);
/* The queue in @sc's path grew by MTCP_PROBE_QUEUE_US since the session's
 * probe began (by the TCP_INFO last read): no padding for it. */
gboolean server_conn_probe_queued (const ServerConn * sc);

/* mtcpserverdial.c. server_on_connect_failed: the I/O thread, no lock
 * held (it takes it). */
void server_note_dial_failure (MtcpServer * server, guint path,
    const GError * error, const gchar * why);
void server_on_connect_failed (const GError * error, gboolean exhausted,
    guint backoff_ms, guint uplink, gpointer user_data);
/* A dialed connection on @path was taken by the receiver. */
void server_note_dial_success (MtcpServer * server, guint path);
void server_keep_dialing (MtcpServer * server, gint64 now);

G_END_DECLS

#endif

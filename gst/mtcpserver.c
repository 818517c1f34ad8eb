#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "mtcpserver.h"
#include "mtcptcpinfo.h"
#include "mtcpiothread.h"
#include "mtcprepair.h"
#include "mtcpestimate.h"
#include "mtcpauth.h"
#include "mtcpconnector.h"

#include <errno.h>
#include <string.h>
#include <sys/random.h>

GST_DEBUG_CATEGORY_STATIC (mtcp_server_debug);
#define GST_CAT_DEFAULT mtcp_server_debug

/* Locking: server->lock guards everything below. The static functions run
 * with it held unless their comment says otherwise; the I/O thread's
 * callbacks (on_accept, on_conn_event, on_tick, on_deadline_watch,
 * pump_all_cb) take it and release it with server_unlock (), which then
 * passes on the warnings said meanwhile: nothing calls out with it held. */

typedef struct _ServerSession ServerSession;

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
  guint32 echo_rtt_us;          /* from REPORT echoes */
  MtcpTcpInfo info;
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
  guint64 frames_copied;        /* copied because their deadline was near */
  guint64 gated;                /* times a connection could take a frame
                                 * but would have delivered it late */
  guint64 bytes_copied;
  guint64 frames_expired;       /* unacknowledged, no longer kept */
  gsize bytes_kept;             /* unacknowledged, kept, at the last tick */
  guint64 closed_acked;         /* bytes the receiver's TCP acknowledged on */
  guint64 closed_written;       /* bytes_sent, bytes_received of its */
  guint64 closed_read;          /* connections that closed */
  GSocketAddress *peer_address; /* of the connection that opened it */
};

/* a caller event said under the lock, told after it (server_unlock) */
typedef struct {
  MtcpCallerEvent event;
  gchar *session_id;
  GSocketAddress *address;
  gchar *reason;
  const gchar *kind;            /* static */
  guint attempt;
} CallerNote;

static void
caller_note_free (CallerNote * note)
{
  g_free (note->session_id);
  g_clear_object (&note->address);
  g_free (note->reason);
  g_free (note);
}

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
  GPtrArray *callers;           /* CallerNote*: as warnings */
  MtcpServerCallerFunc caller;
  gpointer caller_data;
  guint n_conns;                /* length of conns */
  MtcpConnector *connector;     /* listens, or dials the receiver */
  guint64 accept_errors;
  /* dialing (caller): connections the receiver wants, failures in a row,
   * when the next dial may go; gave_up after `retry` failures */
  guint dial_wanted;
  guint dial_failures;
  gint64 next_dial_us;
  guint64 dials;
  guint64 outage_probes;
  gint64 next_probe_us;
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

  gboolean live;                /* the last buffer came from a live upstream:
                                 * sessions may skip what would arrive late */
  /* stream rate measured at the input */
  guint64 rate_bytes;
  gint64 rate_since_us;
  guint64 stream_bitrate;

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

/* a frame the receiver waits for goes out again on another connection after
 * this long, or two RTTs of the connection that holds it if longer */
#define HEDGE_MIN_WAIT_US (200 * G_TIME_SPAN_MILLISECOND)
/* how often the sink looks for frames about to miss the receiver's
 * deadline, and how long before it a copy leaves on another connection
 * (beyond half that connection's RTT, the path's one-way delay) */
#define DEADLINE_WATCH_MS 10
#define DEADLINE_COPY_SLACK_US (60 * G_TIME_SPAN_MILLISECOND)
/* RTT plus four RTT variations, this at least (delayed ACKs): how long
 * without an ACK, and since the oldest unacknowledged write, makes a
 * connection stuck */
#define STUCK_MIN_VAR_US (50 * G_TIME_SPAN_MILLISECOND)
/* warnings waiting for the lock to be released: a flood of bad peers
 * costs a count beyond this, not memory */
#define MAX_QUEUED_WARNINGS 32
/* dialing the receiver failed: the next try after this, doubling (with
 * jitter) up to the most */
#define DIAL_BACKOFF_MIN_MS 100
#define DIAL_BACKOFF_MAX_MS 5000
/* dials in progress at once */
#define DIALS_AT_ONCE 4
/* caller: nothing heard on any connection this long is an outage; one
 * more connection is dialed each PROBE_INTERVAL_US while it lasts (the
 * old ones sit in TCP's backed-off retransmissions when the path comes
 * back, a new SYN is on a fresh timer); the receiver retires the silent
 * ones once the probe carries the stream */
#define PROBE_AFTER_US (1500 * G_TIME_SPAN_MILLISECOND)
#define PROBE_INTERVAL_US G_USEC_PER_SEC
/* the least unsent data a connection may hold (notsent-lowat is the most):
 * about three segments, so that one in RTO backoff sits on few frames */
#define LOWAT_MIN (4 * 1024)
/* what a connection takes at a time before it writes (dynamic scheduler),
 * and never more than its unsent mark */
#define PUMP_RUN_BYTES (32 * 1024)
/* a silence longer than this starts a new run of hearing from the peer */
#define HEARING_GAP_US (G_USEC_PER_SEC)
/* no ACK this long (or 2 RTT + 4 RTTVAR) on a connection with data in
 * flight: silent; all of them silent: the path is dark */
#define DARK_MIN_US (G_USEC_PER_SEC)
/* how long stopping waits for cancelled TLS handshakes to end */
#define STOP_HANDSHAKES_WAIT_US (500 * G_TIME_SPAN_MILLISECOND)
/* a retired connection that writes nothing this long (or idle-timeout if
 * longer) is closed, what it holds handed over */
#define RETIRE_STALL_MIN_MS 3000
/* what a session keeps unacknowledged when max-session-bytes is 0 */
#define MAX_KEPT_BYTES_DEFAULT (32 * 1024 * 1024)

static void server_close_conn (MtcpServer * server, ServerConn * sc,
    const gchar * why);
static void pump_session (MtcpServer * server, ServerSession * sess);
static void send_report (MtcpServer * server, ServerConn * sc, gint64 now);
static void reap (MtcpServer * server);
static void note_dial_failure (MtcpServer * server, const GError * error,
    const gchar * why);
static void keep_dialing (MtcpServer * server, gint64 now);

MtcpServer *
mtcp_server_new (const MtcpServerConfig * config,
    MtcpServerWarningFunc warning, gpointer user_data)
{
  MtcpServer *server = g_new0 (MtcpServer, 1);
  static gsize done = 0;

  server->refcount = 1;
  server->warnings = g_ptr_array_new_with_free_func (g_free);
  server->estimates = g_ptr_array_new_with_free_func ((GDestroyNotify)
      gst_structure_free);
  server->callers = g_ptr_array_new_with_free_func ((GDestroyNotify)
      caller_note_free);

  if (g_once_init_enter (&done)) {
    GST_DEBUG_CATEGORY_INIT (mtcp_server_debug, "multitcpserver", 0,
        "multitcp sink transport");
    g_once_init_leave (&done, 1);
  }
  server->config = *config;
  server->config.host = g_strdup (config->host);
  server->config.congestion_control = g_strdup (config->congestion_control);
  server->config.passphrase = g_strdup (config->passphrase);
  server->config.stream_id = g_strdup (config->stream_id);
  if (config->tls_certificate)
    g_object_ref (config->tls_certificate);
  server->warning = warning;
  server->warning_data = user_data;
  g_mutex_init (&server->lock);
  g_cond_init (&server->cond);
  server->queue = mtcp_send_queue_new (&config->limits);
  return server;
}

void
mtcp_server_set_caller_func (MtcpServer * server, MtcpServerCallerFunc func,
    gpointer user_data)
{
  server->caller = func;
  server->caller_data = user_data;
}

/* server->lock held. Told after the lock (server_unlock). */
static void
note_caller_full (MtcpServer * server, MtcpCallerEvent event,
    const gchar * session_id, GSocketAddress * address, const gchar * reason,
    const gchar * kind, guint attempt)
{
  CallerNote *note;

  if (server->caller == NULL || server->callers->len >= MAX_QUEUED_WARNINGS)
    return;
  note = g_new0 (CallerNote, 1);
  note->event = event;
  note->session_id = g_strdup (session_id);
  note->address = address ? g_object_ref (address) : NULL;
  note->reason = g_strdup (reason);
  note->kind = kind;
  note->attempt = attempt;
  g_ptr_array_add (server->callers, note);
}

/* server->lock held. */
static void
note_caller (MtcpServer * server, MtcpCallerEvent event,
    const gchar * session_id, GSocketAddress * address, const gchar * reason)
{
  note_caller_full (server, event, session_id, address, reason, NULL, 0);
}

void
mtcp_server_set_estimate_func (MtcpServer * server,
    MtcpServerEstimateFunc func, gpointer user_data)
{
  server->estimate = func;
  server->estimate_data = user_data;
}

MtcpServer *
mtcp_server_ref (MtcpServer * server)
{
  g_atomic_int_inc (&server->refcount);
  return server;
}

void
mtcp_server_unref (MtcpServer * server)
{
  if (!g_atomic_int_dec_and_test (&server->refcount))
    return;
  mtcp_server_stop (server);
  mtcp_send_queue_free (server->queue);
  g_ptr_array_unref (server->warnings);
  g_ptr_array_unref (server->estimates);
  g_ptr_array_unref (server->callers);
  mtcp_auth_key_clear (&server->auth_key);
  g_mutex_clear (&server->lock);
  g_cond_clear (&server->cond);
  mtcp_connector_free (server->connector);
  g_free (server->gave_up_reason);
  g_free (server->config.host);
  g_free (server->config.congestion_control);
  g_free (server->config.passphrase);
  g_free (server->config.stream_id);
  g_clear_object (&server->config.tls_certificate);
  g_free (server);
}

static void
server_warn (MtcpServer * server, const gchar * format, ...)
    G_GNUC_PRINTF (2, 3);

/* server->lock held. The warning reaches the owner once the lock is
 * released (server_unlock): its handler may post on a bus whose sync
 * handler reads our stats, which takes the lock. */
static void
server_warn (MtcpServer * server, const gchar * format, ...)
{
  va_list args;
  gchar *msg;

  va_start (args, format);
  msg = g_strdup_vprintf (format, args);
  va_end (args);
  GST_WARNING ("%s", msg);
  if (server->warnings->len < MAX_QUEUED_WARNINGS)
    g_ptr_array_add (server->warnings, msg);
  else {
    server->warnings_dropped++;
    g_free (msg);
  }
}

/* Releases server->lock, then passes on the warnings said while it was
 * held. Only from the I/O thread: the owner's handler runs there. */
static void
server_unlock (MtcpServer * server)
{
  GPtrArray *warnings = NULL, *estimates = NULL, *callers = NULL;
  guint i;

  if (server->warnings->len > 0) {
    warnings = server->warnings;
    server->warnings = g_ptr_array_new_with_free_func (g_free);
  }
  if (server->estimates->len > 0) {
    estimates = server->estimates;
    server->estimates = g_ptr_array_new_with_free_func ((GDestroyNotify)
        gst_structure_free);
  }
  if (server->callers->len > 0) {
    callers = server->callers;
    server->callers = g_ptr_array_new_with_free_func ((GDestroyNotify)
        caller_note_free);
  }
  g_mutex_unlock (&server->lock);
  if (callers) {
    for (i = 0; i < callers->len; i++) {
      CallerNote *n = g_ptr_array_index (callers, i);
      server->caller (n->event, n->session_id, n->address, n->reason,
          n->kind, n->attempt, server->caller_data);
    }
    g_ptr_array_unref (callers);
  }
  if (warnings) {
    for (i = 0; i < warnings->len && server->warning; i++)
      server->warning (g_ptr_array_index (warnings, i), server->warning_data);
    g_ptr_array_unref (warnings);
  }
  if (estimates) {
    /* the handler takes each one */
    g_ptr_array_set_free_func (estimates, NULL);
    for (i = 0; i < estimates->len; i++) {
      GstStructure *st = g_ptr_array_index (estimates, i);
      if (server->estimate)
        server->estimate (st, server->estimate_data);
      else
        gst_structure_free (st);
    }
    g_ptr_array_unref (estimates);
  }
}

/* ---- sessions ---- */

/* server->lock held. NULL when the kernel gives no random bytes: a
 * session id anyone could guess would let strangers join it. */
static ServerSession *
session_new (MtcpServer * server)
{
  ServerSession *sess = g_new0 (ServerSession, 1);
  gssize got;

  do
    got = getrandom (sess->id, sizeof (sess->id), 0);
  while (got < 0 && errno == EINTR);
  if (got != sizeof (sess->id)) {
    GST_ERROR ("no random bytes for a session id: %s", g_strerror (errno));
    g_free (sess);
    return NULL;
  }
  sess->id_str = mtcp_session_id_to_string (sess->id);
  sess->qs = mtcp_send_queue_add_session (server->queue);
  sess->repair = mtcp_repair_budget_new (server->config.copy_overhead_percent);
  sess->estimate = mtcp_rate_estimate_new ();
  sess->conns = g_ptr_array_new ();
  sess->retiring = g_ptr_array_new ();
  sess->created_us = g_get_monotonic_time ();
  sess->acked = MTCP_TIME_NONE;
  sess->acked_us = sess->created_us;
  sess->hedged_seq = MTCP_TIME_NONE;
  server->sessions = g_list_append (server->sessions, sess);
  GST_INFO ("new session %s", sess->id_str);
  return sess;
}

static void
session_free (MtcpServer * server, ServerSession * sess)
{
  MtcpQueueSessionStats qst;

  GST_INFO ("session %s ends", sess->id_str);
  note_caller (server, MTCP_CALLER_REMOVED, sess->id_str, sess->peer_address,
      NULL);
  server->sessions = g_list_remove (server->sessions, sess);
  mtcp_send_queue_session_stats (server->queue, sess->qs, &qst);
  server->skips_ended += qst.skips;
  mtcp_send_queue_remove_session (server->queue, sess->qs);
  mtcp_repair_budget_free (sess->repair);
  mtcp_rate_estimate_free (sess->estimate);
  g_ptr_array_unref (sess->conns);
  g_ptr_array_unref (sess->retiring);
  g_clear_object (&sess->peer_address);
  g_free (sess->id_str);
  g_free (sess);
}

static ServerSession *
session_find (MtcpServer * server, const guint8 * id)
{
  GList *l;
  for (l = server->sessions; l; l = l->next) {
    ServerSession *sess = l->data;
    /* in constant time: how far a guess matched must not show */
    if (mtcp_bytes_equal_ct (sess->id, id, MTCP_SESSION_ID_SIZE))
      return sess;
  }
  return NULL;
}

/* ---- the scheduler: which connection gets the next frame ---- */

/* Write what the connection holds; FALSE if it was closed. */
static gboolean
conn_flush (MtcpServer * server, ServerConn * sc, MtcpIoResult * result)
{
  GError *err = NULL;

  *result = mtcp_connection_flush (sc->conn, &err);
  if (*result == MTCP_IO_CLOSED || *result == MTCP_IO_ERROR) {
    gchar *why = g_strdup_printf ("write failed: %s",
        err ? err->message : "closed");
    server_close_conn (server, sc, why);
    g_free (why);
    g_clear_error (&err);
    return FALSE;
  }
  mtcp_connection_want_write (sc->conn, *result == MTCP_IO_BLOCKED);
  return TRUE;
}

/* server->lock held. How much later than the session's first frame a
 * frame handed to @sc now reaches the receiver (whose clock that frame
 * set): what waits before it in the socket, at the rate the connection
 * delivers, and the queueing its RTT shows above the path's least. By the
 * TCP_INFO last read (a tick ago at most). */
static gint64
conn_transit_us (ServerConn * sc)
{
  const MtcpTcpInfo *info = &sc->info;
  /* a socket that polls writable holds less than its mark, whatever the
   * last TCP_INFO said */
  guint64 waiting = sc->conn->out_bytes + (sc->lowat ?
      MIN (info->notsent_bytes, sc->lowat) : info->notsent_bytes);
  guint64 rate = info->delivery_rate;   /* bytes/s */
  gint64 transit = 0;

  /* the last delivery sample understates a connection that carried
   * little; a window an RTT it can send at least */
  if (info->rtt_us > 0)
    rate = MAX (rate, (guint64) info->snd_cwnd * info->snd_mss *
        G_USEC_PER_SEC / info->rtt_us);
  if (waiting > 0)
    transit = rate > 0 ? (gint64) MIN (waiting * G_USEC_PER_SEC / rate,
        (guint64) G_MAXINT32) : G_MAXINT32;
  if (info->min_rtt_us > 0 && info->rtt_us > info->min_rtt_us)
    transit += info->rtt_us - info->min_rtt_us;
  return transit;
}

/* server->lock held. A live session's next frame would reach its
 * receiver past the deadline on @sc: better another connection, or a
 * skip, than a late frame on the wire in a timely one's place. */
static gboolean
conn_would_deliver_late (MtcpServer * server, ServerConn * sc)
{
  ServerSession *sess = sc->session;
  GstClockTime late;

  if (!server->live || sess == NULL || sess->latency_us == 0)
    return FALSE;
  late = mtcp_send_queue_session_late_by (server->queue, sess->qs);
  return (gint64) MIN (late / GST_USECOND, (guint64) G_MAXINT32) +
      conn_transit_us (sc) > sess->latency_us;
}

/* Ready for a new frame: nothing left in user space, the kernel below
 * its unsent-bytes mark, and it would not deliver the next frame late.
 * Otherwise ask to be woken when writable (the tick pumps the others). */
static gboolean
conn_ready (MtcpServer * server, ServerConn * sc)
{
  MtcpIoResult r;

  if (!conn_flush (server, sc, &r))
    return FALSE;
  if (r == MTCP_IO_BLOCKED)
    return FALSE;
  if (!mtcp_connection_can_take (sc->conn)) {
    mtcp_connection_want_write (sc->conn, TRUE);
    return FALSE;
  }
  if (conn_would_deliver_late (server, sc)) {
    sc->session->gated++;
    return FALSE;
  }
  return TRUE;
}

/* Queues @f on the connection, a REPORT that is due before it so that both
 * ride in the same segments. Written by the next flush. */
static void
conn_hand (MtcpServer * server, ServerConn * sc, MtcpOutFrame * f)
{
  gint64 now = g_get_monotonic_time ();

  GST_LOG ("session %s: seq %" G_GUINT64_FORMAT " (%s) -> connection %u",
      sc->session->id_str, f->seq, mtcp_frame_type_name (f->type), sc->id);
  if (f->type == MTCP_FRAME_EOS) {
    sc->session->eos_sent = TRUE;
    sc->session->eos_seq = f->seq;
  }
  if (now - sc->report_us >= (gint64) server->config.report_interval_ms * 1000)
    send_report (server, sc, now);
  if (f->type == MTCP_FRAME_BUFFER && !f->resend)
    mtcp_repair_budget_earn (sc->session->repair, mtcp_out_frame_size (f),
        server->stream_bitrate);
  mtcp_connection_queue (sc->conn, f);
}

static void
conn_give (MtcpServer * server, ServerConn * sc, MtcpOutFrame * f)
{
  MtcpIoResult r;

  conn_hand (server, sc, f);
  conn_flush (server, sc, &r);
}

/* DMP: each connection that can send takes frames until it would block,
 * a run at a time, written with one call (with the REPORT that was due). */
static void
pump_dynamic (MtcpServer * server, ServerSession * sess)
{
  guint n = sess->conns->len, k;
  guint first = n ? sess->rr_next % n : 0;

  /* rotate the starting connection so none is always first in line */
  sess->rr_next++;
  for (k = 0; k < n && sess->conns->len > 0; k++) {
    ServerConn *sc = g_ptr_array_index (sess->conns,
        (first + k) % sess->conns->len);

    while (conn_ready (server, sc)) {
      gsize run = 0, most = sc->lowat ? MIN (sc->lowat, PUMP_RUN_BYTES) :
          PUMP_RUN_BYTES;
      MtcpOutFrame *f = NULL;

      while (run < most &&
          (f = mtcp_send_queue_take (server->queue, sess->qs)) != NULL) {
        run += mtcp_out_frame_size (f);
        conn_hand (server, sc, f);
      }
      if (f == NULL) {
        MtcpIoResult r;
        if (run > 0)
          conn_flush (server, sc, &r);
        return;
      }
      if (sc->session == NULL)
        break;                  /* closed while writing */
    }
  }
}

/* MultiTCP 4.2.3: frames in turn, a blocked connection loses its turn. */
static void
pump_round_robin (MtcpServer * server, ServerSession * sess)
{
  for (;;) {
    guint n = sess->conns->len, k;
    ServerConn *chosen = NULL;

    for (k = 0; k < n; k++) {
      guint i = (sess->rr_next + k) % n;
      ServerConn *sc = g_ptr_array_index (sess->conns, i);
      if (conn_ready (server, sc)) {
        chosen = sc;
        sess->rr_next = i + 1;
        break;
      }
      if (n != sess->conns->len)
        return;                 /* a connection closed: start over later */
    }
    if (chosen == NULL)
      return;
    {
      MtcpOutFrame *f = mtcp_send_queue_take (server->queue, sess->qs);
      if (f == NULL)
        return;
      conn_give (server, chosen, f);
    }
  }
}

/* The baseline: sequence number modulo N fixes the connection. */
static void
pump_static (MtcpServer * server, ServerSession * sess)
{
  guint k;

  for (k = 0; k < sess->conns->len; k++) {
    ServerConn *sc = g_ptr_array_index (sess->conns, k);
    guint n = sess->conns->len;

    while (conn_ready (server, sc)) {
      MtcpOutFrame *f = mtcp_send_queue_take_lane (server->queue, sess->qs, k,
          n);
      if (f == NULL)
        break;
      conn_give (server, sc, f);
      if (sc->session == NULL || n != sess->conns->len)
        return;
    }
  }
}

static void
pump_session (MtcpServer * server, ServerSession * sess)
{
  switch (server->config.scheduler) {
    case MTCP_SCHEDULER_DYNAMIC:
      pump_dynamic (server, sess);
      break;
    case MTCP_SCHEDULER_ROUND_ROBIN:
      pump_round_robin (server, sess);
      break;
    case MTCP_SCHEDULER_STATIC:
      pump_static (server, sess);
      break;
  }
  g_cond_broadcast (&server->cond);
}

static void
pump_all (MtcpServer * server)
{
  GList *l, *next;
  for (l = server->sessions; l; l = next) {
    next = l->next;
    pump_session (server, l->data);
  }
}

static gboolean
pump_all_cb (gpointer data)
{
  MtcpServer *server = data;

  g_atomic_int_set (&server->wake_pending, 0);
  if (!server->running)
    return G_SOURCE_REMOVE;     /* stopping */
  g_mutex_lock (&server->lock);
  pump_all (server);
  reap (server);
  server_unlock (server);
  return G_SOURCE_REMOVE;
}

static void
server_wake (MtcpServer * server)
{
  if (server->io.context && g_atomic_int_compare_and_exchange
      (&server->wake_pending, 0, 1))
    g_main_context_invoke (server->io.context, pump_all_cb, server);
}

/* ---- connections ---- */

/* Closes at once, frees later: callers up the stack may still hold @sc or
 * its session, so both are only marked here and freed by reap (). */
static void
server_close_conn (MtcpServer * server, ServerConn * sc, const gchar * why)
{
  ServerSession *sess = sc->session;
  guint64 unsent = sc->conn->out_bytes;

  GST_INFO ("connection %u (%s) of session %s closes: %s (%" G_GUINT64_FORMAT
      " bytes unsent)", sc->id, sc->conn->peer, sess ? sess->id_str : "none",
      why, unsent);
  server->conns = g_list_remove (server->conns, sc);
  server->n_conns--;
  /* dialed, and the receiver never took it (no FEEDBACK): it is not
   * there yet, or not ours (its stream id, its passphrase) */
  if (server->config.caller && (sc->pending || sc->feedback_us == 0) &&
      server->running && !server->flushing)
    note_dial_failure (server, NULL, why);
  if (sc->pending) {
    sc->pending = FALSE;
    server->pending_handshakes--;
  }
  /* a retired connection that wrote everything closes with a FIN: what it
   * sent still arrives */
  if (sess && !(sc->retiring && mtcp_connection_is_idle (sc->conn))) {
    /* what it held and the receiver has not acknowledged goes out again on
     * the others: the receiver drops duplicates by sequence number */
    GList *frames = mtcp_connection_take_unacked (sc->conn), *l, *keep = NULL;
    gint64 now = g_get_monotonic_time ();
    for (l = frames; l; l = l->next) {
      MtcpOutFrame *f = l->data;
      if (sess->acked != MTCP_TIME_NONE && f->seq <= sess->acked &&
          f->type != MTCP_FRAME_SKIP)
        mtcp_out_frame_free (f);
      else if (f->type == MTCP_FRAME_BUFFER && f->due_us != 0 &&
          sess->latency_us > 0 && f->due_us + sess->latency_us <= now)
        mtcp_out_frame_free (f);        /* it could only arrive late */
      else
        keep = g_list_prepend (keep, f);
    }
    g_list_free (frames);
    if (keep) {
      GST_INFO ("session %s: %u unacknowledged frames of connection %u go "
          "out again", sess->id_str, g_list_length (keep), sc->id);
      mtcp_send_queue_requeue (server->queue, sess->qs, g_list_reverse (keep));
      sess->requeued = TRUE;
    }
  }
  if (sess) {
    sess->closed_acked += sc->info.bytes_acked;
    sess->closed_written += sc->conn->bytes_sent;
    sess->closed_read += sc->conn->bytes_received;
  }
  mtcp_connection_free (sc->conn);
  sc->conn = NULL;
  sc->session = NULL;
  if (sess) {
    if (!g_ptr_array_remove (sess->conns, sc))
      g_ptr_array_remove (sess->retiring, sc);
    if (sess->conns->len == 0 && sess->retiring->len == 0) {
      if (server->running && !server->flushing &&
          server->config.session_timeout_ms > 0) {
        /* an outage: the receiver may come back and resume where it was */
        sess->orphaned_us = g_get_monotonic_time ();
        GST_INFO ("session %s has no connection left: kept for %u ms",
            sess->id_str, server->config.session_timeout_ms);
      } else {
        sess->ended = TRUE;
      }
    }
  }
  server->closed = g_list_prepend (server->closed, sc);
  g_cond_broadcast (&server->cond);
}

static void
reap (MtcpServer * server)
{
  GList *l, *next;

  for (l = server->sessions; l; l = l->next) {
    ServerSession *sess = l->data;
    if (sess->requeued && !sess->ended && sess->conns->len > 0) {
      sess->requeued = FALSE;
      pump_session (server, sess);
    }
  }
  while (server->closed) {
    ServerConn *sc = server->closed->data;
    server->closed = g_list_delete_link (server->closed, server->closed);
    g_free (sc->congestion);
    g_free (sc);
  }
  for (l = server->sessions; l; l = next) {
    ServerSession *sess = l->data;
    next = l->next;
    if (sess->ended)
      session_free (server, sess);
  }
}

static void
refuse (MtcpServer * server, ServerConn * sc, MtcpRefuseCode code,
    const gchar * reason)
{
  MtcpIoResult r;

  server->refused++;
  server_warn (server, "refusing connection from %s: %s", sc->conn->peer,
      reason);
  {
    GSocketAddress *addr = g_socket_get_remote_address (sc->conn->socket,
        NULL);
    note_caller (server, MTCP_CALLER_REJECTED, NULL, addr, reason);
    g_clear_object (&addr);
  }
  mtcp_connection_queue (sc->conn, mtcp_out_frame_new_refuse (code, reason));
  /* best effort: the peer may already be gone */
  r = mtcp_connection_flush (sc->conn, NULL);
  (void) r;
  server_close_conn (server, sc, reason);
}

static void
apply_socket_options (MtcpServer * server, ServerConn * sc)
{
  GError *err = NULL;

  mtcp_tcp_set_nodelay (sc->conn->socket, TRUE);
  if (server->config.notsent_lowat > 0 && mtcp_tcp_set_notsent_lowat
      (sc->conn->socket, server->config.notsent_lowat))
    sc->lowat = server->config.notsent_lowat;
  if (!mtcp_tcp_set_congestion (sc->conn->socket,
          server->config.congestion_control, &err)) {
    if (server->config.congestion_control_optional)
      GST_INFO ("%s: the system's default instead", err->message);
    else
      server_warn (server, "%s", err->message);
    g_clear_error (&err);
  }
  sc->congestion = mtcp_tcp_get_congestion (sc->conn->socket);
  if (server->config.pacing && !mtcp_tcp_set_pacing (sc->conn->socket))
    server_warn (server, "could not turn on TCP pacing (SO_MAX_PACING_RATE): "
        "%s", g_strerror (errno));
}

/* No lock needed. FALSE with @error when the kernel has no randomness:
 * a guessable nonce or salt would void the passphrase, so no fallback. */
static gboolean
random_bytes (guint8 * out, gsize n, GError ** error)
{
  return mtcp_random_bytes (out, n, error);
}

/* server->lock held. At the session limit, the session that has been
 * without a connection longest makes room for a new receiver: otherwise
 * anyone could fill every slot for session-timeout with a HELLO and a
 * close each. */
static void
session_evict_orphan (MtcpServer * server)
{
  ServerSession *oldest = NULL;
  GList *l;

  for (l = server->sessions; l; l = l->next) {
    ServerSession *sess = l->data;
    gboolean never_acked, oldest_never_acked;
    if (sess->ended || sess->orphaned_us == 0)
      continue;
    /* first one whose receiver never acknowledged a frame (a HELLO and a
     * close, not a receiver waiting out an outage), then the oldest */
    never_acked = sess->acked == MTCP_TIME_NONE;
    oldest_never_acked = oldest && oldest->acked == MTCP_TIME_NONE;
    if (oldest == NULL || (never_acked && !oldest_never_acked) ||
        (never_acked == oldest_never_acked &&
            sess->orphaned_us < oldest->orphaned_us))
      oldest = sess;
  }
  if (oldest == NULL)
    return;
  GST_INFO ("session %s, without a connection for %" G_GINT64_FORMAT " ms, "
      "makes room for a new one", oldest->id_str,
      (g_get_monotonic_time () - oldest->orphaned_us) / 1000);
  session_free (server, oldest);
}

/* The connection proved itself (or nothing was asked): into a session.
 * Returns FALSE if the connection was closed. */
static gboolean
admit (MtcpServer * server, ServerConn * sc, const MtcpHello * hello)
{
  MtcpWelcome welcome;
  ServerSession *sess;

  if (hello->flags & MTCP_HELLO_FLAG_JOIN) {
    sess = session_find (server, hello->session_id);
    if (sess == NULL) {
      refuse (server, sc, MTCP_REFUSE_UNKNOWN_SESSION,
          "unknown session id (the session ended or never existed)");
      return FALSE;
    }
    if (sess->conns->len >= server->config.max_connections) {
      gchar *reason = g_strdup_printf ("session already has %u connections, "
          "the limit", sess->conns->len);
      refuse (server, sc, MTCP_REFUSE_LIMIT, reason);
      g_free (reason);
      return FALSE;
    }
  } else {
    if (g_list_length (server->sessions) >= server->config.max_sessions)
      session_evict_orphan (server);
    if (g_list_length (server->sessions) >= server->config.max_sessions) {
      gchar *reason = g_strdup_printf ("the sink serves %u sessions, "
          "its limit", server->config.max_sessions);
      refuse (server, sc, MTCP_REFUSE_LIMIT, reason);
      g_free (reason);
      return FALSE;
    }
    sess = session_new (server);
    if (sess == NULL) {
      refuse (server, sc, MTCP_REFUSE_LIMIT, "the sink has no random bytes "
          "for a session id");
      return FALSE;
    }
    sess->peer_address = g_socket_get_remote_address (sc->conn->socket, NULL);
    note_caller (server, MTCP_CALLER_ADDED, sess->id_str, sess->peer_address,
        NULL);
  }
  sess->latency_us = (gint64) hello->latency_ms * 1000;
  if (hello->latency_ms > 0) {
    /* what waits longer than the receiver's latency can only arrive late:
     * better skip to a keyframe than deliver nothing on time */
    mtcp_send_queue_session_set_max_lag (server->queue, sess->qs,
        (GstClockTime) hello->latency_ms * GST_MSECOND);
  }

  sc->session = sess;
  if (sc->pending) {
    sc->pending = FALSE;
    server->pending_handshakes--;
  }
  /* admitted: a receiver sends FEEDBACK and RETIRE, nothing large */
  mtcp_frame_reader_set_max_body (sc->conn->reader, MTCP_MAX_RECEIVER_BODY);
  sc->id = sess->next_conn_id++;
  g_ptr_array_add (sess->conns, sc);
  sc->conn->keep_sent = TRUE;
  sc->conn->buffer_delta = (hello->flags & MTCP_HELLO_FLAG_BUFFER_DELTA) != 0;
  sc->conn->compact = sc->conn->buffer_delta &&
      (hello->flags & MTCP_HELLO_FLAG_COMPACT) != 0;
  if (sess->orphaned_us) {
    GST_INFO ("session %s resumes after %" G_GINT64_FORMAT " ms without "
        "connections", sess->id_str,
        (g_get_monotonic_time () - sess->orphaned_us) / 1000);
    sess->orphaned_us = 0;
  }
  apply_socket_options (server, sc);
  /* a producer may wait for a receiver (wait-for-connection) */
  g_cond_broadcast (&server->cond);

  memcpy (welcome.session_id, sess->id, MTCP_SESSION_ID_SIZE);
  welcome.connection_id = sc->id;
  welcome.max_frame = server->config.max_frame;
  /* calling, the sink names its stream for the listener to check */
  g_strlcpy (welcome.stream_id, server->config.caller &&
      server->config.stream_id ? server->config.stream_id : "",
      sizeof (welcome.stream_id));
  mtcp_connection_queue (sc->conn, mtcp_out_frame_new_welcome (&welcome));
  GST_INFO ("connection %u from %s joins session %s (%u connections, "
      "congestion control %s, %s heads)", sc->id, sc->conn->peer,
      sess->id_str, sess->conns->len, sc->congestion,
      sc->conn->compact ? "compact" : sc->conn->buffer_delta ? "delta" :
      "plain");
  pump_session (server, sess);
  return sc->session != NULL;
}

/* server->lock held. Returns FALSE if the connection was closed. */
static gboolean
handle_hello (MtcpServer * server, ServerConn * sc, const guint8 * body,
    gsize size)
{
  MtcpHello hello;
  gchar *err = NULL;

  if (!mtcp_parse_hello (body, size, &hello, &err)) {
    MtcpRefuseCode code = MTCP_REFUSE_PROTOCOL;
    if (size >= 4 && GST_READ_UINT32_BE (body) != MTCP_MAGIC)
      code = MTCP_REFUSE_BAD_MAGIC;
    else if (size >= 6 && GST_READ_UINT16_BE (body + 4) != MTCP_VERSION)
      code = MTCP_REFUSE_BAD_VERSION;
    refuse (server, sc, code, err);
    g_free (err);
    return FALSE;
  }
  /* listening for one stream id: a receiver that names another has the
   * wrong sink (before the passphrase: it costs nothing to say) */
  if (!server->config.caller && server->config.stream_id &&
      *server->config.stream_id &&
      g_strcmp0 (hello.stream_id, server->config.stream_id) != 0) {
    gchar *reason = g_strdup_printf ("this sink serves another stream-id "
        "than \"%s\"", hello.stream_id);
    refuse (server, sc, MTCP_REFUSE_STREAM_ID, reason);
    g_free (reason);
    return FALSE;
  }
  if (server->auth_key.valid) {
    MtcpChallenge challenge;
    MtcpOutFrame *f;
    MtcpIoResult r;
    GError *error = NULL;

    if (!(hello.flags & MTCP_HELLO_FLAG_MUTUAL_AUTH)) {
      refuse (server, sc, MTCP_REFUSE_AUTH, "this sink wants a passphrase "
          "proven both ways (HELLO flag 0x08): the receiver is too old");
      return FALSE;
    }
    if (!random_bytes (sc->nonce, sizeof (sc->nonce), &error)) {
      refuse (server, sc, MTCP_REFUSE_SHUTDOWN, error->message);
      g_error_free (error);
      return FALSE;
    }
    sc->hello = hello;
    sc->challenged = TRUE;
    memcpy (challenge.nonce, sc->nonce, MTCP_NONCE_SIZE);
    memcpy (challenge.salt, server->auth_key.salt, MTCP_SALT_SIZE);
    challenge.iterations = server->auth_key.iterations;
    f = mtcp_out_frame_new ();
    f->type = MTCP_FRAME_CHALLENGE;
    f->head_size = mtcp_write_challenge (f->head, sizeof (f->head_inline),
        &challenge);
    mtcp_connection_queue (sc->conn, f);
    return conn_flush (server, sc, &r);
  }
  return admit (server, sc, &hello);
}

/* server->lock held. Returns FALSE if the connection was closed. */
static gboolean
handle_auth (MtcpServer * server, ServerConn * sc, const guint8 * body,
    gsize size)
{
  MtcpAuth auth;
  guint8 expected[MTCP_MAC_SIZE];
  MtcpOutFrame *f;
  gchar *err = NULL;

  if (!mtcp_parse_auth (body, size, &auth, &err)) {
    refuse (server, sc, MTCP_REFUSE_PROTOCOL, err);
    g_free (err);
    return FALSE;
  }
  mtcp_auth_proof (&server->auth_key, MTCP_AUTH_ROLE_RECEIVER, sc->nonce,
      auth.nonce, &sc->hello, expected);
  if (!mtcp_bytes_equal_ct (auth.mac, expected, MTCP_MAC_SIZE)) {
    refuse (server, sc, MTCP_REFUSE_AUTH, "wrong passphrase");
    return FALSE;
  }
  sc->challenged = FALSE;
  /* our own proof, right before WELCOME (or REFUSE) in the same queue */
  mtcp_auth_proof (&server->auth_key, MTCP_AUTH_ROLE_SINK, sc->nonce,
      auth.nonce, &sc->hello, expected);
  f = mtcp_out_frame_new ();
  f->type = MTCP_FRAME_PROOF;
  f->head_size = mtcp_write_proof (f->head, sizeof (f->head_inline),
      expected);
  mtcp_connection_queue (sc->conn, f);
  return admit (server, sc, &sc->hello);
}

/* The connection of @sess that holds @seq, active or retiring. */
static ServerConn *
session_holder (ServerSession * sess, guint64 seq)
{
  GPtrArray *lists[] = { sess->conns, sess->retiring };
  guint k, i;

  for (k = 0; k < G_N_ELEMENTS (lists); k++)
    for (i = 0; i < lists[k]->len; i++) {
      ServerConn *sc = g_ptr_array_index (lists[k], i);
      if (mtcp_connection_holds_frame (sc->conn, seq))
        return sc;
    }
  return NULL;
}

/* What a connection can send at once, by the TCP_INFO last read: its
 * congestion window's room less what waits before it (negative: a new
 * frame waits for ACKs, up to an RTT). */
static gint64
conn_send_room (ServerConn * sc)
{
  gint64 in_flight = (gint64) sc->info.unacked * sc->info.snd_mss;
  gint64 window = (gint64) sc->info.snd_cwnd * sc->info.snd_mss;

  return window - in_flight - (gint64) sc->conn->out_bytes -
      sc->info.notsent_bytes;
}

/* Copies go where they arrive soonest: each to the active connection, not
 * @holder and not one that holds that frame already, with the most room in
 * its congestion window (TCP_INFO read now, less the copies it was just
 * given), then the shortest RTT; one repairing a loss only when every other
 * is. All of a stuck connection's frames on one thin connection would wait
 * RTTs for its window (seen at 3% loss: 46 copies at once on one
 * connection whose window held a few segments). Frees what finds no
 * connection; returns how many were handed out, their bytes in @bytes;
 * @closed: a flush closed one. */
static guint
session_spread_copies (MtcpServer * server, ServerSession * sess,
    ServerConn * holder, GList * copies, gsize * bytes, gboolean * closed)
{
  guint n_conns = sess->conns->len, i, n = 0;
  MtcpCopyTarget *t = g_new0 (MtcpCopyTarget, n_conns);
  gboolean *touched = g_new0 (gboolean, n_conns);
  GList *l;

  *bytes = 0;
  *closed = FALSE;
  for (i = 0; i < n_conns; i++) {
    ServerConn *sc = g_ptr_array_index (sess->conns, i);
    if (sc == holder)
      continue;
    mtcp_tcp_info_read (sc->conn->socket, &sc->info);
    t[i].repairing = mtcp_tcp_info_in_loss_recovery (&sc->info);
    t[i].room = conn_send_room (sc);
    t[i].rtt_us = sc->info.rtt_us;
  }
  for (l = copies; l; l = l->next) {
    MtcpOutFrame *f = l->data;
    ServerConn *sc;
    gint best;

    for (i = 0; i < n_conns; i++) {
      sc = g_ptr_array_index (sess->conns, i);
      t[i].excluded = sc == holder ||
          mtcp_connection_holds_frame (sc->conn, f->seq);
    }
    best = mtcp_copy_target_pick (t, n_conns);
    if (best < 0) {
      mtcp_out_frame_free (f);
      continue;
    }
    sc = g_ptr_array_index (sess->conns, best);
    GST_LOG ("session %s: a copy of seq %" G_GUINT64_FORMAT " on connection "
        "%u (room %" G_GINT64_FORMAT " bytes%s)", sess->id_str, f->seq, sc->id,
        t[best].room, t[best].repairing ? ", repairing a loss" : "");
    t[best].room -= mtcp_out_frame_size (f);
    *bytes += mtcp_out_frame_size (f);
    touched[best] = TRUE;
    n++;
    conn_hand (server, sc, f);
  }
  g_list_free (copies);
  /* flushing may close one, which changes sess->conns: pointers first */
  for (i = 0, l = NULL; i < n_conns; i++)
    if (touched[i])
      l = g_list_prepend (l, g_ptr_array_index (sess->conns, i));
  for (copies = l; l; l = l->next) {
    MtcpIoResult r;
    if (!conn_flush (server, l->data, &r))
      *closed = TRUE;
  }
  g_list_free (copies);
  g_free (t);
  g_free (touched);
  return n;
}

/* server->lock held. Keeps the copies the session's repair budget pays
 * for, oldest first, and frees the rest: hedges and copies ahead of a
 * deadline share one budget, copy_overhead_percent of the stream, so a
 * frame cannot go out on every connection. Their bytes in @paid. */
static GList *
session_pay_for_copies (ServerSession * sess, GList * copies, gsize * paid)
{
  GList *l, *next;

  *paid = 0;
  for (l = copies; l; l = next) {
    MtcpOutFrame *f = l->data;
    next = l->next;
    if (!mtcp_repair_budget_spend (sess->repair, mtcp_out_frame_size (f))) {
      /* over the overhead, or no spare capacity: TCP has to make it */
      mtcp_out_frame_free (f);
      copies = g_list_delete_link (copies, l);
      continue;
    }
    *paid += mtcp_out_frame_size (f);
  }
  return copies;
}

/* The receiver waits behind a hole that has not moved for two of the
 * holding connection's RTTs (200 ms at least): the frame is stuck in TCP
 * retransmissions on that connection, which at a few % loss can take
 * longer than the receiver's latency (RTO backoff). So is every later
 * frame that connection holds (TCP delivers in order): copies of all of
 * them go out at once on the other connections (session_spread_copies),
 * rather than one hole and two RTTs at a time; the receiver drops
 * whichever comes second. Again after as long if a copy is stuck too. */
static void
hedge_stuck_frame (MtcpServer * server, ServerSession * sess,
    const MtcpFeedback * fb, gint64 now)
{
  guint64 next = sess->acked == MTCP_TIME_NONE ? 0 : sess->acked + 1;
  ServerConn *holder;
  gint64 since, wait;
  guint i, n_copies, n;
  gsize bytes, paid;
  gboolean closed;
  GList *copies;

  if (fb->buffered_bytes == 0)
    return;                     /* no hole: nothing waits behind it */
  since = sess->hedged_seq == next ? sess->hedged_us : sess->acked_us;
  holder = session_holder (sess, next);
  if (holder == NULL) {
    /* frames leave in order, so one after the hole was handed out and the
     * hole should be held somewhere: say so once it has waited long */
    if (now - since >= HEDGE_MIN_WAIT_US)
      GST_DEBUG ("session %s: receiver waits %" G_GINT64_FORMAT " ms for "
          "seq %" G_GUINT64_FORMAT ", which no connection holds", sess->id_str,
          (now - since) / 1000, next);
    return;
  }
  wait = MAX (HEDGE_MIN_WAIT_US, 2 * (gint64) holder->info.rtt_us);
  if (now - since < wait)
    return;
  for (i = 0; i < sess->conns->len; i++)
    if (!mtcp_connection_holds_frame (((ServerConn *)
                g_ptr_array_index (sess->conns, i))->conn, next))
      break;
  if (i == sess->conns->len) {
    GST_DEBUG ("session %s: seq %" G_GUINT64_FORMAT " stuck on connection %u "
        "for %" G_GINT64_FORMAT " ms, and every other one holds it already",
        sess->id_str, next, holder->id, (now - since) / 1000);
    return;
  }
  copies = mtcp_connection_copy_frames_from (holder->conn, next);
  n_copies = g_list_length (copies);
  sess->hedged_seq = next;
  sess->hedged_us = now;
  copies = session_pay_for_copies (sess, copies, &paid);
  if (copies == NULL) {
    GST_DEBUG ("session %s: seq %" G_GUINT64_FORMAT " stuck on connection "
        "%u, no copy budget left", sess->id_str, next, holder->id);
    return;
  }
  n = session_spread_copies (server, sess, holder, copies, &bytes, &closed);
  /* what found no connection */
  mtcp_repair_budget_refund (sess->repair, paid - bytes);
  sess->frames_hedged += n;
  GST_DEBUG ("session %s: seq %" G_GUINT64_FORMAT " stuck on connection %u "
      "for %" G_GINT64_FORMAT " ms: %u of it and the %u after it there again "
      "on other connections (%" G_GSIZE_FORMAT " bytes)", sess->id_str, next,
      holder->id, (now - sess->acked_us) / 1000, n, n_copies - 1, bytes);
}

/* A connection in loss recovery, or that got no ACK for longer than an
 * RTO (without the kernel's floor: a tail loss on a thin connection waits
 * for a probe or a timeout), and whose oldest unacknowledged write is
 * older than that, is stuck on a loss: each
 * frame it holds from there on, once its due time plus latency is one
 * slack plus half an RTT away (the receiver's deadline is a one-way delay
 * later: margin), leaves again on the connections that would deliver it
 * soonest (session_spread_copies). The receiver
 * keeps whichever arrives first. Without the receiver's word, so in time
 * for short budgets; bounded by copy_overhead_percent. */
static void
copy_frames_near_deadline (MtcpServer * server, ServerSession * sess,
    gint64 now)
{
  GPtrArray *lists[] = { sess->conns, sess->retiring };
  guint k, i;

  if (sess->latency_us == 0 || server->config.copy_overhead_percent == 0 ||
      sess->conns->len < 2)
    return;
  for (k = 0; k < G_N_ELEMENTS (lists); k++)
    for (i = 0; i < lists[k]->len; i++) {
      ServerConn *holder = g_ptr_array_index (lists[k], i);
      GList *copies, *l;
      gint64 lead, first, stale;
      gsize taken = 0, bytes;
      gboolean closed;
      guint n;

      first = mtcp_connection_first_due (holder->conn);
      if (first == G_MAXINT64 || !mtcp_repair_budget_can_spend (sess->repair))
        continue;
      /* a copy takes the same path: the holder's RTT stands for its */
      lead = DEADLINE_COPY_SLACK_US + holder->info.rtt_us / 2;
      if (first + sess->latency_us - lead > now)
        continue;
      mtcp_tcp_info_read (holder->conn->socket, &holder->info);
      /* stuck: repairing a loss, or no ACK (not even a duplicate) for
       * longer than an RTO would be without the kernel's 200 ms floor,
       * and the oldest unacknowledged write older than that: what it
       * holds waits for the repair, or behind the window the loss halved,
       * where a copy on a connection with room does not */
      stale = holder->info.rtt_us + MAX (4 * (gint64) holder->info.rttvar_us,
          STUCK_MIN_VAR_US);
      if (!mtcp_tcp_info_in_loss_recovery (&holder->info) &&
          (gint64) holder->info.last_ack_recv_ms * 1000 < stale)
        continue;
      copies = mtcp_connection_copy_frames_due (holder->conn,
          holder->info.bytes_acked, now - stale, now - sess->latency_us + lead);
      copies = session_pay_for_copies (sess, copies, &taken);
      for (l = copies; l; l = l->next) {
        MtcpOutFrame *f = l->data;
        GST_LOG ("session %s: seq %" G_GUINT64_FORMAT " due in %"
            G_GINT64_FORMAT " ms, unacknowledged on connection %u: a copy",
            sess->id_str, f->seq, (f->due_us + sess->latency_us - now) / 1000,
            holder->id);
      }
      if (copies == NULL)
        continue;
      n = session_spread_copies (server, sess, holder, copies, &bytes, &closed);
      /* what found no connection */
      mtcp_repair_budget_refund (sess->repair, taken - bytes);
      sess->frames_copied += n;
      sess->bytes_copied += bytes;
      GST_DEBUG ("session %s: %u frames (%" G_GSIZE_FORMAT " bytes) near "
          "their deadline on connection %u (rtt %u ms, %u lost) copied to "
          "the others", sess->id_str, n, bytes, holder->id,
          holder->info.rtt_us / 1000, holder->info.lost);
      if (closed)
        return;                 /* the lists changed under us */
    }
}

static gboolean
on_deadline_watch (gpointer data)
{
  MtcpServer *server = data;
  gint64 now = g_get_monotonic_time ();
  GList *l;

  if (!server->running)
    return G_SOURCE_REMOVE;     /* stopping */
  g_mutex_lock (&server->lock);
  for (l = server->sessions; l; l = l->next)
    copy_frames_near_deadline (server, l->data, now);
  reap (server);
  server_unlock (server);
  return G_SOURCE_CONTINUE;
}

/* server->lock held. Returns FALSE if @sc was closed: a hedge writes to
 * the session's connections, @sc among them, and a write can fail. */
static gboolean
handle_feedback (MtcpServer * server, ServerConn * sc, const guint8 * body,
    gsize size)
{
  gchar *err = NULL;
  MtcpFeedback fb;
  guint64 next_seq;
  gboolean advanced;

  if (!mtcp_parse_feedback (body, size, &fb, &err)) {
    server_warn (server, "bad feedback from %s: %s", sc->conn->peer, err);
    g_free (err);
    return TRUE;
  }
  /* a receiver cannot have what was never handed out */
  next_seq = mtcp_send_queue_session_next_seq (server->queue,
      sc->session->qs);
  if (fb.highest_in_order != MTCP_TIME_NONE &&
      fb.highest_in_order >= next_seq) {
    GST_DEBUG ("connection %u claims seq %" G_GUINT64_FORMAT ", only %"
        G_GUINT64_FORMAT " were handed out", sc->id, fb.highest_in_order,
        next_seq);
    fb.highest_in_order = next_seq == 0 ? MTCP_TIME_NONE : next_seq - 1;
  }
  sc->feedback = fb;
  {
    gint64 now = g_get_monotonic_time ();
    /* a new run of hearing from the receiver after a silence */
    /* a receiver that sends FEEDBACK took the call */
    if (sc->feedback_us == 0)
      server->dial_failures = 0;
    if (now - sc->feedback_us > HEARING_GAP_US)
      sc->heard_since_us = now;
    sc->feedback_us = now;
  }
  GST_LOG ("connection %u: receiver has everything to %" G_GINT64_FORMAT
      ", %" G_GUINT64_FORMAT " bytes held", sc->id,
      (gint64) fb.highest_in_order, fb.buffered_bytes);
  advanced = fb.highest_in_order != MTCP_TIME_NONE &&
      (sc->session->acked == MTCP_TIME_NONE ||
      fb.highest_in_order > sc->session->acked);
  if (advanced) {
    ServerSession *sess = sc->session;
    guint i;
    sess->acked = fb.highest_in_order;
    sess->acked_us = sc->feedback_us;
    /* the receiver has these: no connection needs to keep them */
    for (i = 0; i < sess->conns->len; i++)
      mtcp_connection_ack (((ServerConn *) g_ptr_array_index (sess->conns,
                  i))->conn, sess->acked);
    for (i = 0; i < sess->retiring->len; i++)
      mtcp_connection_ack (((ServerConn *) g_ptr_array_index (sess->retiring,
                  i))->conn, sess->acked);
    g_cond_broadcast (&server->cond);
  }
  if (fb.echo_sink_time_us > 0 && fb.echo_sink_time_us < G_MAXINT64 / 2 &&
      fb.echo_delay_us < G_MAXINT64 / 2 && (guint64) sc->feedback_us >
      fb.echo_sink_time_us + fb.echo_delay_us)
    sc->echo_rtt_us = MIN (sc->feedback_us - fb.echo_sink_time_us -
        fb.echo_delay_us, G_MAXUINT32);
  if (!advanced)
    hedge_stuck_frame (server, sc->session, &fb, sc->feedback_us);
  return sc->conn != NULL;
}

/* The receiver wants one connection fewer: no new frames for it, and it
 * closes once what it holds is written, so nothing is lost. Returns FALSE
 * if it was closed at once. */
static gboolean
retire_conn (MtcpServer * server, ServerConn * sc)
{
  ServerSession *sess = sc->session;
  MtcpIoResult r;

  if (sc->retiring)
    return TRUE;
  /* retired connections are outside the session's limit: as many again
   * at most, the oldest handing over what it holds */
  if (sess->retiring->len >= server->config.max_connections)
    server_close_conn (server, g_ptr_array_index (sess->retiring, 0),
        "too many retired connections in the session");
  sc->retiring = TRUE;
  sc->retiring_sent = sc->conn->bytes_sent;
  sc->retiring_progress_us = g_get_monotonic_time ();
  g_ptr_array_remove (sess->conns, sc);
  g_ptr_array_add (sess->retiring, sc);
  GST_INFO ("connection %u of session %s retires (%" G_GSIZE_FORMAT
      " bytes to send first, %u connections left)", sc->id, sess->id_str,
      sc->conn->out_bytes, sess->conns->len);
  if (!conn_flush (server, sc, &r))
    return FALSE;
  if (r == MTCP_IO_DONE) {
    server_close_conn (server, sc, "retired by the receiver");
    return FALSE;
  }
  return TRUE;
}

/* Returns FALSE if the connection was closed. */
static gboolean
handle_frames (MtcpServer * server, ServerConn * sc)
{
  for (;;) {
    MtcpFrameHeader hdr;
    const guint8 *body;
    gchar *err = NULL;
    MtcpParseResult r = mtcp_frame_reader_next (sc->conn->reader, &hdr, &body,
        &err);

    if (r == MTCP_PARSE_NEED_MORE)
      return TRUE;
    if (r == MTCP_PARSE_ERROR) {
      server->protocol_errors++;
      server_warn (server, "protocol error from %s: %s", sc->conn->peer, err);
      server_close_conn (server, sc, err);
      g_free (err);
      return FALSE;
    }
    sc->conn->frames_received++;
    GST_LOG ("%s frame (%u bytes) on connection %u from %s",
        mtcp_frame_type_name (hdr.type), hdr.length, sc->id, sc->conn->peer);
    if (sc->session == NULL) {
      gboolean ok;
      if (sc->challenged && hdr.type == MTCP_FRAME_AUTH) {
        ok = handle_auth (server, sc, body, hdr.length);
      } else if (!sc->challenged && hdr.type == MTCP_FRAME_HELLO) {
        ok = handle_hello (server, sc, body, hdr.length);
      } else {
        server->protocol_errors++;
        refuse (server, sc, MTCP_REFUSE_PROTOCOL, sc->challenged ?
            "expected AUTH after the CHALLENGE" :
            "expected HELLO as the first frame");
        return FALSE;
      }
      if (!ok)
        return FALSE;
      continue;
    }
    switch (hdr.type) {
      case MTCP_FRAME_FEEDBACK:
        if (!handle_feedback (server, sc, body, hdr.length))
          return FALSE;
        break;
      case MTCP_FRAME_RETIRE:
        if (!retire_conn (server, sc))
          return FALSE;
        break;
      case MTCP_FRAME_WANT:{
        guint16 want;
        if (!mtcp_parse_want (body, hdr.length, &want, &err)) {
          server->protocol_errors++;
          server_warn (server, "protocol error from %s: %s", sc->conn->peer,
              err);
          server_close_conn (server, sc, err);
          g_free (err);
          return FALSE;
        }
        /* a sink that listens has the receiver dial: nothing to do */
        if (server->config.caller && want != server->dial_wanted) {
          GST_INFO ("the receiver wants %u connections (session %s has %u)",
              want, sc->session->id_str, sc->session->conns->len);
          server->dial_wanted = want;
          keep_dialing (server, g_get_monotonic_time ());
        }
        break;
      }
      case MTCP_FRAME_HELLO:
      case MTCP_FRAME_CAPS:
      case MTCP_FRAME_BUFFER:
      case MTCP_FRAME_BUFFER_DELTA:
      case MTCP_FRAME_EOS:
      case MTCP_FRAME_SKIP:
        server->protocol_errors++;
        server_warn (server, "unexpected %s frame from %s",
            mtcp_frame_type_name (hdr.type), sc->conn->peer);
        server_close_conn (server, sc, "unexpected frame");
        return FALSE;
      default:
        GST_DEBUG ("skipping frame of unknown type 0x%02x from %s", hdr.type,
            sc->conn->peer);
        break;
    }
  }
}

/* Reads what the connection has and handles its frames; FALSE when it
 * was closed. */
static gboolean
server_read (MtcpServer * server, ServerConn * sc)
{
  GError *err = NULL;
  MtcpIoResult r = mtcp_connection_receive (sc->conn, &err);

  /* frames that arrived before a close are still handled */
  if (!handle_frames (server, sc)) {
    g_clear_error (&err);
    return FALSE;
  }
  if (r == MTCP_IO_CLOSED || r == MTCP_IO_ERROR) {
    server_close_conn (server, sc, err ? err->message : "closed by peer");
    g_clear_error (&err);
    return FALSE;
  }
  return TRUE;
}

static gboolean
on_conn_event (MtcpConnection * conn, GIOCondition cond, gpointer user_data)
{
  ServerConn *sc = conn->user_data;
  MtcpServer *server = user_data;
  ServerSession *sess;

  g_mutex_lock (&server->lock);
  if ((cond & (G_IO_IN | G_IO_HUP | G_IO_ERR)) && !server_read (server, sc))
    goto done;
  sess = sc->session;
  if (sess && sc->retiring && (cond & G_IO_OUT)) {
    MtcpIoResult r;
    if (conn_flush (server, sc, &r) && r == MTCP_IO_DONE)
      server_close_conn (server, sc, "retired by the receiver");
  } else if (sess && (cond & G_IO_OUT)) {
    pump_session (server, sess);
  }
done:
  reap (server);
  server_unlock (server);
  return TRUE;
}

/* Too many connections sit in their handshake: the oldest goes. A real
 * receiver answers within one round trip, so it is only pushed out if
 * max_pending_handshakes newer connections arrive in that time; idle
 * connections cannot keep new receivers out until they time out. */
static void
reject_oldest_pending (MtcpServer * server)
{
  GList *l;
  gint64 now;

  /* server->conns is newest first */
  for (l = g_list_last (server->conns); l; l = l->prev) {
    ServerConn *sc = l->data;
    if (!sc->pending)
      continue;
    server->connections_rejected++;
    server->rejected_unwarned++;
    server_close_conn (server, sc, "too many pending handshakes, this is "
        "the oldest");
    break;
  }
  /* one warning a second at most: a flood must not flood the bus too */
  now = g_get_monotonic_time ();
  if (now - server->rejected_warned_us >= G_USEC_PER_SEC) {
    server_warn (server, "%" G_GUINT64_FORMAT " connections closed before "
        "their handshake: more than %u pending at once",
        server->rejected_unwarned, server->config.max_pending_handshakes);
    server->rejected_unwarned = 0;
    server->rejected_warned_us = now;
  }
}

/* Most connections the sink holds at once, handshakes included: every
 * session full, plus the handshakes. */
static guint
max_open_connections (MtcpServer * server)
{
  return MIN ((guint64) MAX (server->config.max_sessions, 1) *
      (MAX (server->config.max_connections, 1) + 1) +
      MAX (server->config.max_pending_handshakes, 1), G_MAXUINT);
}

/* The I/O thread, no lock held: a connection is up, accepted or dialed;
 * either way it waits for the receiver's HELLO. */
static void
on_connected (GSocket * sock, gpointer user_data)
{
  MtcpServer *server = user_data;
  ServerConn *sc;
  GError *err = NULL;

  g_mutex_lock (&server->lock);
  if (server->n_conns >= max_open_connections (server)) {
    server->connections_rejected++;
    server->rejected_unwarned++;
    g_mutex_unlock (&server->lock);
    GST_DEBUG ("at the limit of %u open connections: a new one is closed",
        max_open_connections (server));
    g_socket_close (sock, NULL);
    g_object_unref (sock);
    return;
  }
  g_mutex_unlock (&server->lock);
  sc = g_new0 (ServerConn, 1);
  sc->server = server;
  /* a stranger may send HELLO or AUTH and nothing bigger */
  sc->conn = mtcp_connection_new (sock, MTCP_MAX_HANDSHAKE_BODY);
  sc->conn->user_data = sc;
  sc->accepted_us = g_get_monotonic_time ();
  g_object_unref (sock);

  g_mutex_lock (&server->lock);
  server->connections_accepted++;
  if (server->pending_handshakes >= MAX (server->config.max_pending_handshakes,
          1))
    reject_oldest_pending (server);
  sc->pending = TRUE;
  server->pending_handshakes++;
  server->pending_handshakes_peak = MAX (server->pending_handshakes_peak,
      server->pending_handshakes);
  server->conns = g_list_prepend (server->conns, sc);
  server->n_conns++;
  GST_DEBUG ("%s connection %s", server->config.caller ? "dialed" :
      "accepted", sc->conn->peer);
  if (server->config.tls_certificate) {
    MtcpTlsConfig tls = { TRUE, server->config.tls_certificate, };
    sc->conn->tls_orphans = &server->tls_orphans;
    if (!mtcp_connection_start_tls (sc->conn, &tls, &err)) {
      server_close_conn (server, sc, err->message);
      g_clear_error (&err);
      reap (server);
      server_unlock (server);
      return;
    }
  }
  mtcp_connection_attach (sc->conn, server->io.context, on_conn_event, server);
  /* free what reject_oldest_pending () closed now, not at the next tick */
  reap (server);
  server_unlock (server);
}

/* What kind of failure a dial's @error (NULL: the call closed before the
 * receiver took it, @why) is, for applications. */
static const gchar *
dial_failure_kind (const GError * error, const gchar * why)
{
  if (error == NULL)
    return why && strstr (why, "TLS") ? "tls" : "closed";
  if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CONNECTION_REFUSED))
    return "refused";
  if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_TIMED_OUT))
    return "timeout";
  if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_HOST_UNREACHABLE) ||
      g_error_matches (error, G_IO_ERROR, G_IO_ERROR_NETWORK_UNREACHABLE))
    return "unreachable";
  return "error";
}

/* server->lock held. A dial failed, or a dialed connection closed before
 * the receiver admitted it: the next dial waits, doubling; after `retry`
 * in a row the sink gives up (an error on the bus). */
static void
note_dial_failure (MtcpServer * server, const GError * error,
    const gchar * why)
{
  gint64 backoff_ms;

  server->dial_failures++;
  note_caller_full (server, MTCP_CALLER_DIAL_FAILED, NULL,
      mtcp_connector_get_address (server->connector), why,
      dial_failure_kind (error, why), server->dial_failures);
  if (server->dial_failures > server->config.retry && !server->gave_up) {
    server->gave_up = TRUE;
    server->gave_up_reason = g_strdup_printf ("could not reach the receiver "
        "at %s: %u attempts failed in a row, the last: %s",
        mtcp_connector_describe (server->connector), server->dial_failures,
        why);
    server_warn (server, "%s", server->gave_up_reason);
    return;
  }
  backoff_ms = MIN ((gint64) DIAL_BACKOFF_MIN_MS << MIN (server->dial_failures
          - 1, 6), DIAL_BACKOFF_MAX_MS);
  backoff_ms = backoff_ms * g_random_double_range (0.75, 1.25);
  server->next_dial_us = g_get_monotonic_time () + backoff_ms * 1000;
  GST_INFO ("dialing %s failed (%u in a row: %s): next try in %"
      G_GINT64_FORMAT " ms", mtcp_connector_describe (server->connector),
      server->dial_failures, why, backoff_ms);
}

/* The I/O thread, no lock held: accept () ran out of descriptors (the
 * listener rests), or a dial failed. */
static void
on_connect_failed (const GError * error, gboolean exhausted, guint backoff_ms,
    gpointer user_data)
{
  MtcpServer *server = user_data;

  g_mutex_lock (&server->lock);
  if (exhausted) {
    server->accept_errors++;
    server_warn (server, "cannot accept connections (%s): trying again in %u "
        "ms", error->message, backoff_ms);
  } else {
    note_dial_failure (server, error, error->message);
  }
  server_unlock (server);
}

/* server->lock held. Caller: the receiver's session, the one with the most
 * connections. */
static ServerSession *
dialed_session (MtcpServer * server)
{
  ServerSession *best = NULL;
  GList *l;

  /* one left behind by a receiver that restarted keeps no connection */
  for (l = server->sessions; l; l = l->next) {
    ServerSession *sess = l->data;
    if (!sess->ended && (best == NULL || sess->conns->len > best->conns->len))
      best = sess;
  }
  return best;
}

/* server->lock held, I/O thread. Caller: dial until the receiver's session
 * has as many connections as it wants (one until it said; one again when
 * it has none), counting handshakes and dials under way; paced by the
 * backoff while dials fail. */
static void
keep_dialing (MtcpServer * server, gint64 now)
{
  ServerSession *sess;
  guint have, want, pending = 0, n;
  GList *l;

  if (!server->config.caller || !server->running || server->gave_up ||
      server->flushing || now < server->next_dial_us)
    return;
  sess = dialed_session (server);
  for (l = server->conns; l; l = l->next)
    pending += ((ServerConn *) l->data)->pending;
  have = pending + mtcp_connector_dialing (server->connector) +
      (sess ? sess->conns->len : 0);
  want = sess && sess->conns->len > 0 ? MAX (server->dial_wanted, 1) : 1;
  want = MIN (want, MAX (server->config.max_connections, 1));
  if (sess && sess->conns->len > 0 && have >= want && pending == 0 &&
      mtcp_connector_dialing (server->connector) == 0 &&
      now >= server->next_probe_us && have < server->config.max_connections) {
    gint64 heard = 0;
    guint i;
    for (i = 0; i < sess->conns->len; i++) {
      ServerConn *sc = g_ptr_array_index (sess->conns, i);
      heard = MAX (heard, MAX (sc->feedback_us, sc->accepted_us));
    }
    if (now - heard > PROBE_AFTER_US) {
      server->next_probe_us = now + PROBE_INTERVAL_US;
      server->outage_probes++;
      GST_INFO ("nothing heard from the receiver for %" G_GINT64_FORMAT
          " ms: dialing one more connection to find the path back",
          (now - heard) / 1000);
      server->dials++;
      mtcp_connector_dial (server->connector);
      return;
    }
  }
  for (n = 0; have < want && n < DIALS_AT_ONCE; n++, have++) {
    server->dials++;
    mtcp_connector_dial (server->connector);
    /* one at a time while failing, all at once while things work */
    if (server->dial_failures > 0)
      break;
  }
}

/* ---- periodic work: reports, handshake timeouts, input rate ---- */

/* What a connection holds unsent waits for its own rate: on a slow one
 * (a few hundred kbit/s on a lossy path) 64 kB is most of a second, which
 * frames spend there instead of in the shared queue, where any connection
 * could take them. So the mark follows one congestion window. */
static void
follow_cwnd_with_lowat (MtcpServer * server, ServerConn * sc)
{
  guint32 want;

  if (sc->lowat == 0 || sc->info.snd_cwnd == 0 || sc->info.snd_mss == 0)
    return;
  want = CLAMP ((guint64) sc->info.snd_cwnd * sc->info.snd_mss, LOWAT_MIN,
      MAX (server->config.notsent_lowat, LOWAT_MIN));
  if (want != sc->lowat && mtcp_tcp_set_notsent_lowat (sc->conn->socket,
          want)) {
    GST_LOG ("connection %u: unsent mark %u (cwnd %u x %u)", sc->id, want,
        sc->info.snd_cwnd, sc->info.snd_mss);
    sc->lowat = want;
  }
}

static void
send_report (MtcpServer * server, ServerConn * sc, gint64 now)
{
  MtcpReport rep;
  MtcpQueueSessionStats qst;

  mtcp_tcp_info_read (sc->conn->socket, &sc->info);
  follow_cwnd_with_lowat (server, sc);
  mtcp_send_queue_session_stats (server->queue, sc->session->qs, &qst);
  memset (&rep, 0, sizeof (rep));
  rep.sink_time_us = now;
  rep.stream_bitrate = server->stream_bitrate;
  rep.backlog_bytes = qst.backlog_bytes;
  rep.rtt_us = sc->info.rtt_us;
  rep.rttvar_us = sc->info.rttvar_us;
  rep.snd_cwnd = sc->info.snd_cwnd;
  rep.snd_mss = sc->info.snd_mss;
  rep.total_retrans = sc->info.total_retrans;
  rep.lost = sc->info.lost;
  rep.bytes_acked = sc->info.bytes_acked;
  rep.unsent_bytes = sc->conn->out_bytes + sc->info.notsent_bytes;
  if (mtcp_tcp_congestion_ignores_loss (sc->congestion))
    rep.flags |= MTCP_REPORT_RATE_IGNORES_LOSS;
  mtcp_connection_queue (sc->conn, mtcp_out_frame_new_report (&rep));
  sc->report_us = now;
}

/* server->lock held. Frames a receiver has not acknowledged are kept for
 * a hand-over or a copy, but not past their deadline (they would arrive
 * late) nor beyond the session's byte bound: a receiver that reads
 * everything and never acknowledges cannot pin the stream. */
static void
session_expire_kept (MtcpServer * server, ServerSession * sess, gint64 now)
{
  GPtrArray *lists[] = { sess->conns, sess->retiring };
  gint64 keep_due_after = G_MININT64;
  gsize most = server->config.limits.max_lag_bytes ?
      server->config.limits.max_lag_bytes : MAX_KEPT_BYTES_DEFAULT;
  guint k, i, n = 0;
  gsize bytes = 0, kept = 0;

  if (sess->latency_us > 0)
    keep_due_after = now - sess->latency_us;
  else if (GST_CLOCK_TIME_IS_VALID (server->config.limits.max_lag_time))
    keep_due_after = now - (gint64) (server->config.limits.max_lag_time /
        GST_USECOND);
  for (k = 0; k < G_N_ELEMENTS (lists); k++)
    for (i = 0; i < lists[k]->len; i++) {
      ServerConn *sc = g_ptr_array_index (lists[k], i);
      gsize dropped = 0;
      n += mtcp_connection_expire_sent (sc->conn, keep_due_after,
          most > kept ? most - kept : 0, &dropped);
      bytes += dropped;
      kept += mtcp_connection_kept_bytes (sc->conn);
    }
  if (n > 0) {
    sess->frames_expired += n;
    GST_DEBUG ("session %s: %u unacknowledged frames (%" G_GSIZE_FORMAT
        " bytes) past the receiver's deadline or the session's bound are "
        "no longer kept", sess->id_str, n, bytes);
  }
  sess->bytes_kept = kept;
}

/* server->lock held. A connection silent for idle-timeout is dead when the
 * receiver has been heard on another of its connections for idle-timeout
 * meanwhile (a half-open one: a NAT that forgot it). When every connection
 * is silent the path is out (a cellular uplink without coverage): TCP
 * carries on when it returns, and closing would only cost a reconnect and
 * a hand-over, so they wait up to session-timeout; after it, each has
 * idle-timeout from the first one heard again to come back. */
static gboolean
conn_presumed_dead (MtcpServer * server, ServerConn * sc, gint64 now)
{
  gint64 idle = (gint64) server->config.idle_timeout_ms * 1000;
  gint64 silent = now - MAX (sc->feedback_us, sc->accepted_us);
  ServerSession *sess = sc->session;
  guint i;

  if (silent <= idle)
    return FALSE;
  if (silent > MAX (idle, (gint64) server->config.session_timeout_ms * 1000))
    return TRUE;
  for (i = 0; i < sess->conns->len; i++) {
    ServerConn *other = g_ptr_array_index (sess->conns, i);
    if (other != sc && now - MAX (other->feedback_us, other->accepted_us) <=
        idle / 2 && other->feedback_us && now - other->heard_since_us >= idle)
      return TRUE;
  }
  return FALSE;
}

/* server->lock held. The transit of the session's fastest connection
 * (0: none, or nothing known yet). */
static gint64
session_transit_us (ServerSession * sess)
{
  gint64 best = G_MAXINT64;
  guint i;

  for (i = 0; i < sess->conns->len; i++) {
    ServerConn *sc = g_ptr_array_index (sess->conns, i);
    best = MIN (best, conn_transit_us (sc));
  }
  return best == G_MAXINT64 ? 0 : best;
}

/* server->lock held. Feeds the session's bandwidth estimate with what its
 * connections delivered, their windows (TCP_INFO just read), what waits
 * here and how long the path's queue holds it; dark from @path; a significant change is told after the lock
 * (server_unlock). */
static void
session_estimate (MtcpServer * server, ServerSession * sess,
    const MtcpRepairPath * path)
{
  MtcpRateSample sample = { sess->closed_acked, 0, 0, path->dark, 0 };
  MtcpQueueSessionStats qst;
  gint64 queued_us = G_MAXINT64;
  guint i;

  mtcp_send_queue_session_stats (server->queue, sess->qs, &qst);
  sample.waiting_bytes = qst.backlog_bytes;
  for (i = 0; i < sess->conns->len; i++) {
    ServerConn *sc = g_ptr_array_index (sess->conns, i);
    const MtcpTcpInfo *info = &sc->info;

    sample.bytes_acked += info->bytes_acked;
    sample.waiting_bytes += sc->conn->out_bytes + info->notsent_bytes;
    if (info->unacked > 0 && info->min_rtt_us > 0)
      queued_us = MIN (queued_us, (gint64) info->rtt_us - info->min_rtt_us);
    if (sc->conn->out_bytes + info->notsent_bytes > 0) {
      /* it has more than it sends: whatever holds it back (its window,
       * the receiver's), what it delivers is what it can */
      sample.window_bps += info->delivery_rate * 8;
    } else if (info->rtt_us > 0) {
      /* idle: a window an RTT, but no more than the kernel paces at (bbr
       * keeps two BDPs of window for a path it paces at one) */
      guint64 window = (guint64) info->snd_cwnd * info->snd_mss *
          G_USEC_PER_SEC / info->rtt_us;
      if (info->pacing_rate > 0 && info->pacing_rate != G_MAXUINT64)
        window = MIN (window, info->pacing_rate);
      sample.window_bps += window * 8;
    }
  }
  if (queued_us != G_MAXINT64)
    sample.queued_us = queued_us;
  for (i = 0; i < sess->retiring->len; i++) {
    ServerConn *sc = g_ptr_array_index (sess->retiring, i);
    mtcp_tcp_info_read (sc->conn->socket, &sc->info);
    sample.bytes_acked += sc->info.bytes_acked;
  }
  if (!mtcp_rate_estimate_update (sess->estimate, g_get_monotonic_time (),
          &sample) || server->estimates->len >= MAX_QUEUED_WARNINGS)
    return;
  g_ptr_array_add (server->estimates, gst_structure_new ("multitcpsink-estimate",
          "session", G_TYPE_STRING, sess->id_str,
          "estimated-bitrate", G_TYPE_UINT64,
          mtcp_rate_estimate_bps (sess->estimate),
          "path-limited", G_TYPE_BOOLEAN,
          mtcp_rate_estimate_path_limited (sess->estimate),
          "stream-bitrate", G_TYPE_UINT64, server->stream_bitrate,
          "n-connections", G_TYPE_UINT, sess->conns->len, NULL));
}

/* server->lock held. What the session's connections could carry now and
 * whether the path is dark, for its repair budget: copies come only from
 * spare capacity, and never go into a path that acknowledges nothing. */
static void
session_measure_path (MtcpServer * server, ServerSession * sess)
{
  MtcpRepairPath path = { 0, server->stream_bitrate, FALSE };
  guint i, busy = 0, silent = 0;

  for (i = 0; i < sess->conns->len; i++) {
    ServerConn *sc = g_ptr_array_index (sess->conns, i);
    MtcpTcpInfo *info = &sc->info;
    gint64 quiet;

    mtcp_tcp_info_read (sc->conn->socket, info);
    if (info->rtt_us > 0)
      path.capacity_bps += (guint64) info->snd_cwnd * info->snd_mss * 8 *
          G_USEC_PER_SEC / info->rtt_us;
    if (info->unacked == 0)
      continue;
    busy++;
    quiet = MAX (DARK_MIN_US, 2 * (gint64) info->rtt_us +
        4 * (gint64) info->rttvar_us);
    if ((gint64) info->last_ack_recv_ms * 1000 > quiet)
      silent++;
  }
  path.dark = busy > 0 && silent == busy;
  mtcp_repair_budget_set_path (sess->repair, &path);
  mtcp_send_queue_session_set_transit (server->queue, sess->qs,
      session_transit_us (sess) * GST_USECOND);
  session_estimate (server, sess, &path);
}

static gboolean
on_tick (gpointer data)
{
  MtcpServer *server = data;
  gint64 now = g_get_monotonic_time ();
  GList *l, *snapshot;

  if (!server->running)
    return G_SOURCE_REMOVE;     /* stopping */
  g_mutex_lock (&server->lock);
  keep_dialing (server, now);
  if (server->rate_since_us == 0) {
    server->rate_since_us = now;
  } else if (now - server->rate_since_us >= G_USEC_PER_SEC) {
    server->stream_bitrate = server->rate_bytes * 8 * G_USEC_PER_SEC /
        (now - server->rate_since_us);
    server->rate_bytes = 0;
    server->rate_since_us = now;
  }

  /* reading a connection can close others (a hedge writes to them), and
   * closed ones are freed only by reap (): walk a copy, skip the closed */
  snapshot = g_list_copy (server->conns);
  for (l = snapshot; l; l = l->next) {
    ServerConn *sc = l->data;
    if (sc->conn == NULL)
      continue;
    if (sc->session == NULL) {
      if (now - sc->accepted_us >
          (gint64) server->config.handshake_timeout_ms * 1000) {
        server->handshakes_timed_out++;
        server_warn (server, "no handshake from %s within %u ms",
            sc->conn->peer, server->config.handshake_timeout_ms);
        server_close_conn (server, sc, "handshake timeout");
      }
      continue;
    }
    /* the receiver sends FEEDBACK on each connection every 500 ms at least:
     * silence means a half-open connection (a cable pulled, a NAT that
     * forgot us); but first read what waits, in case this thread was too
     * busy writing to see it */
    if (server->config.idle_timeout_ms > 0 && !sc->retiring &&
        now - MAX (sc->feedback_us, sc->accepted_us) >
        (gint64) server->config.idle_timeout_ms * 1000 &&
        !server_read (server, sc))
      continue;                 /* closed while reading */
    if (server->config.idle_timeout_ms > 0 && !sc->retiring &&
        conn_presumed_dead (server, sc, now)) {
      server_close_conn (server, sc, "no feedback from the receiver: "
          "connection presumed dead");
      continue;
    }
    /* a retired connection whose receiver stopped reading would otherwise
     * stay, outside the session's connection limit, for ever */
    if (sc->retiring && sc->conn->bytes_sent != sc->retiring_sent) {
      sc->retiring_sent = sc->conn->bytes_sent;
      sc->retiring_progress_us = now;
    } else if (sc->retiring && now - sc->retiring_progress_us >
        (gint64) MAX (server->config.idle_timeout_ms, RETIRE_STALL_MIN_MS) *
        1000) {
      server_close_conn (server, sc, "retired and writing nothing");
      continue;
    }
    /* one that carried no frame lately gets its REPORT alone, the tick
     * after it was due; not behind output that does not leave (a receiver
     * that stopped reading), where REPORTs would pile up stale */
    if (!sc->retiring && sc->conn->out_bytes == 0 && now - sc->report_us >=
        (gint64) server->config.report_interval_ms * 1500)
      send_report (server, sc, now);
  }
  g_list_free (snapshot);
  for (l = server->sessions; l; l = l->next) {
    ServerSession *sess = l->data;
    session_expire_kept (server, sess, now);
    session_measure_path (server, sess);
    if (sess->orphaned_us && now - sess->orphaned_us >
        (gint64) server->config.session_timeout_ms * 1000) {
      GST_INFO ("session %s: no connection for %u ms, it ends", sess->id_str,
          server->config.session_timeout_ms);
      sess->ended = TRUE;
    }
  }
  /* a live upstream that paused or ended pushes nothing that would make
   * a session skip what the gate holds back (its EOS behind it) */
  if (server->live)
    mtcp_send_queue_enforce_limits (server->queue);
  pump_all (server);
  reap (server);
  server_unlock (server);
  return G_SOURCE_CONTINUE;
}

/* ---- thread and lifecycle ---- */

static void
mark_ended (ServerSession * sess, gpointer unused)
{
  sess->ended = TRUE;
}

/* No lock needed (before the I/O thread runs). Slow: one key derivation
 * per start, with a salt of this start's. */
static gboolean
derive_auth_key (MtcpServer * server, GError ** error)
{
  guint8 salt[MTCP_SALT_SIZE];

  mtcp_auth_key_clear (&server->auth_key);
  if (server->config.passphrase == NULL || *server->config.passphrase == 0)
    return TRUE;
  if (!random_bytes (salt, sizeof (salt), error)) {
    g_prefix_error (error, "no salt for the passphrase: ");
    return FALSE;
  }
  mtcp_auth_key_derive (&server->auth_key, server->config.passphrase, salt,
      MTCP_AUTH_ITERATIONS_DEFAULT);
  return TRUE;
}

gboolean
mtcp_server_start (MtcpServer * server, GError ** error)
{
  if (!derive_auth_key (server, error))
    return FALSE;

  server->connector = server->config.caller ?
      mtcp_connector_new_dialer (server->config.host, server->config.port,
      server->config.handshake_timeout_ms, NULL, error) :
      mtcp_connector_new_listener (server->config.host, server->config.port,
      error);
  if (server->connector == NULL)
    return FALSE;
  server->bound_port = mtcp_connector_get_port (server->connector);

  mtcp_io_thread_init (&server->io);
  mtcp_connector_start (server->connector, server->io.context, on_connected,
      on_connect_failed, server);
  mtcp_io_thread_add_timeout (&server->io,
      MAX (server->config.report_interval_ms, 10), on_tick, server);
  if (server->config.copy_overhead_percent > 0)
    mtcp_io_thread_add_timeout (&server->io, DEADLINE_WATCH_MS,
        on_deadline_watch, server);

  server->flushing = FALSE;
  server->running = TRUE;
  mtcp_io_thread_start (&server->io, "multitcpsink-io");
  GST_INFO ("%s %s, scheduler %s", server->config.caller ? "dialing" :
      "listening on", mtcp_connector_describe (server->connector),
      mtcp_scheduler_nick (server->config.scheduler));
  return TRUE;
}

void
mtcp_server_stop (MtcpServer * server)
{
  if (!server->running)
    return;
  g_mutex_lock (&server->lock);
  server->flushing = TRUE;
  g_cond_broadcast (&server->cond);
  g_mutex_unlock (&server->lock);

  mtcp_io_thread_stop (&server->io);

  /* the I/O thread is gone; stats may still be read from another thread */
  g_mutex_lock (&server->lock);
  server->running = FALSE;
  while (server->conns)
    server_close_conn (server, server->conns->data, "sink stopping");
  g_list_foreach (server->sessions, (GFunc) mark_ended, NULL);
  reap (server);
  /* nobody is left to tell: the element is stopping */
  g_ptr_array_set_size (server->warnings, 0);
  g_ptr_array_set_size (server->callers, 0);
  g_mutex_unlock (&server->lock);
  mtcp_connector_stop (server->connector);
  /* TLS handshakes cancelled above end in the I/O context, which nobody
   * runs now: run it until they did (our own sources, seeing running
   * FALSE, only remove themselves) */
  mtcp_connection_wait_orphaned_handshakes (server->io.context,
      &server->tls_orphans, STOP_HANDSHAKES_WAIT_US);
  mtcp_io_thread_clear (&server->io);
}

guint
mtcp_server_get_port (MtcpServer * server)
{
  return server->bound_port;
}

gchar *
mtcp_server_gave_up (MtcpServer * server)
{
  gchar *reason;

  g_mutex_lock (&server->lock);
  reason = g_strdup (server->gave_up_reason);
  g_mutex_unlock (&server->lock);
  return reason;
}

/* ---- producer ---- */

void
mtcp_server_push_caps (MtcpServer * server, GstCaps * caps)
{
  g_mutex_lock (&server->lock);
  mtcp_send_queue_push_caps (server->queue, caps);
  g_mutex_unlock (&server->lock);
  server_wake (server);
}

gboolean
mtcp_server_push_buffer (MtcpServer * server, GstBuffer * buffer,
    GstClockTime pts, GstClockTime dts, GstClockTime duration, gboolean live)
{
  g_mutex_lock (&server->lock);
  if (!live) {
    while (!server->flushing && mtcp_send_queue_over_limits (server->queue)) {
      gint64 until = g_get_monotonic_time () + 100 * G_TIME_SPAN_MILLISECOND;
      g_cond_wait_until (&server->cond, &server->lock, until);
    }
  }
  if (server->flushing) {
    g_mutex_unlock (&server->lock);
    return FALSE;
  }
  mtcp_send_queue_push_buffer (server->queue, buffer, pts, dts, duration);
  server->live = live;
  server->rate_bytes += gst_buffer_get_size (buffer);
  if (live)
    mtcp_send_queue_enforce_limits (server->queue);
  g_mutex_unlock (&server->lock);
  server_wake (server);
  return TRUE;
}

void
mtcp_server_push_eos (MtcpServer * server)
{
  g_mutex_lock (&server->lock);
  mtcp_send_queue_push_eos (server->queue);
  g_mutex_unlock (&server->lock);
  server_wake (server);
}

/* Every session got EOS and its receiver says it has everything up to it:
 * written to a socket is not enough, the kernel may still lose it. */
static gboolean
all_received (MtcpServer * server)
{
  GList *l;

  for (l = server->sessions; l; l = l->next) {
    ServerSession *sess = l->data;
    if (sess->ended)
      continue;
    if (!sess->eos_sent || sess->acked == MTCP_TIME_NONE ||
        sess->acked < sess->eos_seq)
      return FALSE;
  }
  return TRUE;
}

gboolean
mtcp_server_wait_drained (MtcpServer * server, gint64 timeout_us)
{
  gint64 until = g_get_monotonic_time () + timeout_us;
  gboolean drained;

  g_mutex_lock (&server->lock);
  while (!(drained = all_received (server)) && !server->flushing) {
    if (!g_cond_wait_until (&server->cond, &server->lock, until))
      break;
  }
  drained = all_received (server);
  g_mutex_unlock (&server->lock);
  return drained;
}

gboolean
mtcp_server_wait_receiver (MtcpServer * server)
{
  gboolean flushing;

  g_mutex_lock (&server->lock);
  for (;;) {
    GList *l;
    gboolean have = FALSE;
    for (l = server->sessions; l && !have; l = l->next)
      have = ((ServerSession *) l->data)->conns->len > 0;
    if (have || server->flushing)
      break;
    g_cond_wait (&server->cond, &server->lock);
  }
  flushing = server->flushing;
  g_mutex_unlock (&server->lock);
  return !flushing;
}

void
mtcp_server_set_flushing (MtcpServer * server, gboolean flushing)
{
  g_mutex_lock (&server->lock);
  server->flushing = flushing;
  g_cond_broadcast (&server->cond);
  g_mutex_unlock (&server->lock);
}

void
mtcp_server_set_scheduler (MtcpServer * server, MtcpScheduler scheduler)
{
  g_mutex_lock (&server->lock);
  server->config.scheduler = scheduler;
  g_mutex_unlock (&server->lock);
}

void
mtcp_server_set_limits (MtcpServer * server,
    const MtcpSendQueueLimits * limits)
{
  g_mutex_lock (&server->lock);
  server->config.limits = *limits;
  mtcp_send_queue_set_limits (server->queue, limits);
  g_mutex_unlock (&server->lock);
}

/* ---- stats ---- */

static void
append_structure (GValue * array, GstStructure * s)
{
  GValue v = G_VALUE_INIT;
  g_value_init (&v, GST_TYPE_STRUCTURE);
  g_value_take_boxed (&v, s);
  gst_value_array_append_and_take_value (array, &v);
}

static GstStructure *
conn_stats (ServerConn * sc)
{
  mtcp_tcp_info_read (sc->conn->socket, &sc->info);
  return gst_structure_new ("connection",
      "id", G_TYPE_UINT, sc->id,
      "peer", G_TYPE_STRING, sc->conn->peer,
      "bytes-sent", G_TYPE_UINT64, sc->conn->bytes_sent,
      "frames-sent", G_TYPE_UINT64, sc->conn->frames_sent,
      "bytes-received", G_TYPE_UINT64, sc->conn->bytes_received,
      "frames-received", G_TYPE_UINT64, sc->conn->frames_received,
      "bytes-queued", G_TYPE_UINT64, (guint64) sc->conn->out_bytes,
      "frames-queued", G_TYPE_UINT, g_queue_get_length (&sc->conn->out),
      "rtt", G_TYPE_UINT, sc->info.rtt_us,
      "rttvar", G_TYPE_UINT, sc->info.rttvar_us,
      "min-rtt", G_TYPE_UINT, sc->info.min_rtt_us,
      "cwnd", G_TYPE_UINT, sc->info.snd_cwnd,
      "mss", G_TYPE_UINT, sc->info.snd_mss,
      "retransmits", G_TYPE_UINT, sc->info.total_retrans,
      "lost", G_TYPE_UINT, sc->info.lost,
      "notsent-bytes", G_TYPE_UINT, sc->info.notsent_bytes,
      "delivery-rate", G_TYPE_UINT64, sc->info.delivery_rate * 8,
      "feedback-rtt", G_TYPE_UINT, sc->echo_rtt_us,
      "congestion-control", G_TYPE_STRING, sc->congestion, NULL);
}

void
mtcp_server_get_estimate (MtcpServer * server, gboolean strongest,
    guint64 * bps, gboolean * path_limited, guint64 * skips)
{
  gboolean found = FALSE;
  GList *l;

  *bps = 0;
  *path_limited = FALSE;
  g_mutex_lock (&server->lock);
  *skips = server->skips_ended;
  for (l = server->sessions; l; l = l->next) {
    ServerSession *sess = l->data;
    MtcpQueueSessionStats qst;
    guint64 est;

    mtcp_send_queue_session_stats (server->queue, sess->qs, &qst);
    *skips += qst.skips;
    /* a receiver that just joined is not weak, only new */
    if (sess->conns->len == 0 || !mtcp_rate_estimate_known (sess->estimate))
      continue;
    est = mtcp_rate_estimate_bps (sess->estimate);
    if (!found || (strongest ? est > *bps : est < *bps)) {
      *bps = est;
      *path_limited = mtcp_rate_estimate_path_limited (sess->estimate);
      found = TRUE;
    }
  }
  g_mutex_unlock (&server->lock);
}

GstStructure *
mtcp_server_get_stats (MtcpServer * server)
{
  GstStructure *s;
  GValue sessions = G_VALUE_INIT;
  GList *l;
  guint64 bytes_sent = 0, buffers_sent = 0, dropped = 0, written = 0;
  guint64 weakest = G_MAXUINT64;

  g_value_init (&sessions, GST_TYPE_ARRAY);
  g_mutex_lock (&server->lock);
  for (l = server->sessions; l; l = l->next) {
    ServerSession *sess = l->data;
    MtcpQueueSessionStats qst;
    GValue conns = G_VALUE_INIT;
    GstStructure *ss;
    GPtrArray *lists[] = { sess->conns, sess->retiring };
    guint i, k;
    guint64 highest = MTCP_TIME_NONE, buffered = 0;
    guint64 sess_written = sess->closed_written, sess_read = sess->closed_read;

    mtcp_send_queue_session_stats (server->queue, sess->qs, &qst);
    /* the weakest receiver that is there */
    if (sess->conns->len > 0 && mtcp_rate_estimate_known (sess->estimate))
      weakest = MIN (weakest, mtcp_rate_estimate_bps (sess->estimate));
    bytes_sent += qst.bytes_sent;
    buffers_sent += qst.buffers_sent;
    dropped += qst.buffers_dropped;
    g_value_init (&conns, GST_TYPE_ARRAY);
    for (i = 0; i < sess->conns->len; i++) {
      ServerConn *sc = g_ptr_array_index (sess->conns, i);
      append_structure (&conns, conn_stats (sc));
      if (sc->feedback_us) {
        if (highest == MTCP_TIME_NONE ||
            (sc->feedback.highest_in_order != MTCP_TIME_NONE &&
                sc->feedback.highest_in_order > highest))
          highest = sc->feedback.highest_in_order;
        buffered = sc->feedback.buffered_bytes;
      }
    }
    /* every byte of the session on the wire, retiring and closed
     * connections too: what the protocol costs over the payload */
    for (k = 0; k < G_N_ELEMENTS (lists); k++)
      for (i = 0; i < lists[k]->len; i++) {
        ServerConn *sc = g_ptr_array_index (lists[k], i);
        sess_written += sc->conn->bytes_sent;
        sess_read += sc->conn->bytes_received;
      }
    written += sess_written;
    ss = gst_structure_new ("session",
        "id", G_TYPE_STRING, sess->id_str,
        "n-connections", G_TYPE_UINT, sess->conns->len,
        "buffers-sent", G_TYPE_UINT64, qst.buffers_sent,
        "bytes-sent", G_TYPE_UINT64, qst.bytes_sent,
        "buffers-dropped", G_TYPE_UINT64, qst.buffers_dropped,
        "bytes-dropped", G_TYPE_UINT64, qst.bytes_dropped,
        "bytes-written", G_TYPE_UINT64, sess_written,
        "bytes-read", G_TYPE_UINT64, sess_read,
        "skips", G_TYPE_UINT64, qst.skips,
        "frames-resent", G_TYPE_UINT64, qst.frames_resent,
        "frames-hedged", G_TYPE_UINT64, sess->frames_hedged,
        "frames-copied", G_TYPE_UINT64, sess->frames_copied,
        "estimated-bitrate", G_TYPE_UINT64,
        mtcp_rate_estimate_bps (sess->estimate),
        "path-limited", G_TYPE_BOOLEAN,
        mtcp_rate_estimate_path_limited (sess->estimate),
        "late-passed-over", G_TYPE_UINT64, sess->gated,
        "repair", G_TYPE_STRING,
        mtcp_repair_gate_nick (mtcp_repair_budget_gate (sess->repair)),
        "copies-refused", G_TYPE_UINT64,
        mtcp_repair_budget_refused (sess->repair),
        "bytes-copied", G_TYPE_UINT64, sess->bytes_copied,
        "frames-expired", G_TYPE_UINT64, sess->frames_expired,
        "bytes-kept", G_TYPE_UINT64, (guint64) sess->bytes_kept,
        "state", G_TYPE_STRING, sess->orphaned_us ? "waiting" : "active",
        "queue-buffers", G_TYPE_UINT64, qst.backlog_buffers,
        "queue-bytes", G_TYPE_UINT64, qst.backlog_bytes,
        "queue-time", G_TYPE_UINT64, qst.backlog_time,
        "receiver-highest-seq", G_TYPE_INT64,
        highest == MTCP_TIME_NONE ? (gint64) - 1 : (gint64) highest,
        "receiver-buffered-bytes", G_TYPE_UINT64, buffered, NULL);
    gst_structure_take_value (ss, "connections", &conns);
    append_structure (&sessions, ss);
  }
  s = gst_structure_new ("multitcpsink-stats",
      "n-sessions", G_TYPE_UINT, g_list_length (server->sessions),
      "bytes-pushed", G_TYPE_UINT64,
      mtcp_send_queue_get_total_pushed (server->queue),
      "bytes-sent", G_TYPE_UINT64, bytes_sent,
      "bytes-written", G_TYPE_UINT64, written,
      "buffers-sent", G_TYPE_UINT64, buffers_sent,
      "buffers-dropped", G_TYPE_UINT64, dropped,
      "queue-bytes", G_TYPE_UINT64, mtcp_send_queue_get_bytes (server->queue),
      "queue-buffers", G_TYPE_UINT64,
      mtcp_send_queue_get_length (server->queue),
      "stream-bitrate", G_TYPE_UINT64, server->stream_bitrate,
      "estimated-bitrate", G_TYPE_UINT64,
      weakest == G_MAXUINT64 ? (guint64) 0 : weakest,
      "connections-accepted", G_TYPE_UINT64, server->connections_accepted,
      "protocol-errors", G_TYPE_UINT64, server->protocol_errors,
      "refused", G_TYPE_UINT64, server->refused,
      "pending-handshakes", G_TYPE_UINT, server->pending_handshakes,
      "pending-handshakes-peak", G_TYPE_UINT,
      server->pending_handshakes_peak,
      "connections-rejected", G_TYPE_UINT64, server->connections_rejected,
      "handshakes-timed-out", G_TYPE_UINT64, server->handshakes_timed_out,
      "open-connections", G_TYPE_UINT, server->n_conns,
      "accept-errors", G_TYPE_UINT64, server->accept_errors,
      "mode", G_TYPE_STRING, server->config.caller ? "caller" : "listener",
      "dials", G_TYPE_UINT64, server->dials,
      "outage-probes", G_TYPE_UINT64, server->outage_probes,
      "dial-failures", G_TYPE_UINT, server->dial_failures,
      "scheduler", G_TYPE_STRING,
      mtcp_scheduler_nick (server->config.scheduler), NULL);
  g_mutex_unlock (&server->lock);
  gst_structure_take_value (s, "sessions", &sessions);
  return s;
}

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "mtcpclient.h"
#include "mtcpconnection.h"
#include "mtcpprotocol.h"
#include "mtcpauth.h"
#include "mtcpreorder.h"
#include "mtcptcpinfo.h"
#include "mtcpiothread.h"
#include "mtcpadjustwindow.h"
#include "mtcpadjustconn.h"
#include "mtcpmultfrc.h"
#include "mtcppars.h"
#include "mtcpskew.h"
#include "mtcpconnector.h"

#include <string.h>

GST_DEBUG_CATEGORY_STATIC (mtcp_client_debug);
#define GST_CAT_DEFAULT mtcp_client_debug

#define REORDER_WINDOW (1 << 20)
/* a restarted sink is found within about a second */
#define MAX_BACKOFF_MS 1000
/* a connection that closes sooner after opening counts as a failed try */
#define LOST_AFTER_US (1 * G_USEC_PER_SEC)
/* the sink sends a REPORT (with its RTT) this often */
#define REPORT_INTERVAL_S 0.2
/* FEEDBACK goes out every tick on one connection (the acknowledgement is the
 * session's), and on each at least this often: the sink takes silence on a
 * connection for a dead one (idle-timeout, 3 s by default) */
#define FEEDBACK_KEEPALIVE_US (G_USEC_PER_SEC / 2)
/* how long stopping waits for cancelled TLS handshakes to end */
#define STOP_HANDSHAKES_WAIT_US (500 * G_TIME_SPAN_MILLISECOND)
/* a silence longer than this starts a new run of hearing from the peer */
#define HEARING_GAP_US (G_USEC_PER_SEC)
/* every ready connection silent this long: probe the path with a new
 * connection, one each interval (the sink REPORTs every 400 ms at most) */
#define PROBE_AFTER_US (G_USEC_PER_SEC)
#define PROBE_INTERVAL_US (G_USEC_PER_SEC)
/* every connection silent: an outage; each waits this long (or
 * idle-timeout if longer) before it is presumed dead */
#define OUTAGE_WAIT_US (10 * G_USEC_PER_SEC)
/* connections=0: the count until ParS has a loss rate (MultiTCP's default) */
#define PARS_START_CONNECTIONS 5
/* listener: calls not yet admitted at once (the oldest goes first: a
 * stranger's idle calls cannot keep the sink out), and how long one may
 * take (the passphrase's key derivation included) */
#define LISTEN_MAX_PENDING 8
#define LISTEN_HANDSHAKE_TIMEOUT_US (15 * G_USEC_PER_SEC)
/* listener: the count the sink should dial is said again this often */
#define WANT_REPEAT_US G_USEC_PER_SEC
/* clock skew: minima of 1 s windows, a line through the last 60 */
#define SKEW_WINDOW GST_SECOND
#define SKEW_WINDOWS 60
/* a sender timestamp beyond this (146 years) is a protocol error, and
 * mapped times saturate here: sums with them cannot overflow a gint64 */
#define MAX_TIME (G_MAXINT64 / 2)
/* a deadline may lie at most this much beyond latency ahead of arrival: a
 * sender whose clock jumps, or lies, cannot make a gap wait longer */
#define HORIZON_MARGIN GST_SECOND
/* the reorder buffer holds at most (latency + margin) of a stream this
 * fast, and no less than MIN_HELD_BYTES or four of the largest frames */
#define MAX_HELD_RATE (G_GUINT64_CONSTANT (1000000000) / 8)       /* bytes/s */
#define MIN_HELD_BYTES (G_GUINT64_CONSTANT (32) << 20)
#define MAX_HELD_BYTES (G_GUINT64_CONSTANT (1) << 30)
/* REPORT values beyond these are not a real sink's: clamped on arrival so
 * the controllers' arithmetic stays in range */
#define MAX_REPORT_BITRATE G_GUINT64_CONSTANT (100000000000)    /* 100 Gbit/s */
#define MAX_REPORT_RTT_US (60 * G_USEC_PER_SEC)
#define MAX_REPORT_BYTES (G_MAXUINT64 / 4)

typedef enum {
  CONN_CONNECTING,
  CONN_HANDSHAKE,
  CONN_READY,
  CONN_RETIRING,                /* asked the sink to stop; reads until EOF */
} ConnState;

static const gchar *
conn_state_name (ConnState state)
{
  switch (state) {
    case CONN_CONNECTING:
      return "connecting";
    case CONN_HANDSHAKE:
      return "handshake";
    case CONN_READY:
      return "ready";
    case CONN_RETIRING:
      return "retiring";
  }
  return "unknown";
}

typedef struct {
  MtcpClient *client;
  MtcpConnection *conn;
  ConnState state;
  guint32 id;                   /* the sink's connection id */
  guint index;                  /* ours, for messages */
  MtcpReport report;            /* last REPORT from the sink */
  gint64 report_us;             /* when it arrived, 0 = never */
  gint64 heard_us;              /* last time anything arrived on it */
  gint64 heard_since_us;        /* since when it arrives without a silence
                                 * longer than HEARING_GAP_US */
  gint64 feedback_us;           /* last FEEDBACK sent on it, 0 = never */
  guint64 buffers_received;
  guint window_bytes;           /* TCP_WINDOW_CLAMP we set, 0 = none */
  gboolean fresh;               /* asks for a new session: the old one is gone */
  gboolean accepted;            /* the sink dialed it (we listen) */
  gboolean probe;               /* opened while every other one was silent */
  gint local;                   /* index into client->locals, -1 = any */
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
  gint64 want_told_us;          /* for, and when */
  guint8 session_id[MTCP_SESSION_ID_SIZE];
  gchar *session_str;

  GMutex lock;
  GCond cond;                   /* new item, flushing, error */
  MtcpReorder *reorder;
  GList *conns;                 /* ClientConn* */
  GList *closed;                /* freed after the dispatch that closed them */
  guint next_index;
  gboolean flushing;
  GError *error;                /* fatal, reported by pop */
  gboolean all_closed;          /* no connection left at the moment */
  gboolean gave_up;             /* and no more reconnects: gaps are final */
  guint failures;               /* connection losses and failed opens in a row */
  gint64 next_open_us;          /* backoff: no new connection before this */
  GPtrArray *locals;            /* GSocketAddress to bind to, spread evenly */
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

  /* sender running time -> local time: the first timestamp fixes the
   * offset, the skew estimate follows the sender's clock rate from there */
  gboolean mapped;
  gint64 time_offset;
  MtcpSkew *skew;
  GstClockTime last_sender_time;        /* of the latest buffer, for stats */

  /* counters */
  guint64 bytes_received;
  guint64 payload_received;     /* BUFFER payload, duplicates not counted */
  guint64 buffers_received;
  guint64 buffers_pushed;
  guint64 bytes_pushed;
  guint64 late;
  guint64 duplicates;
  guint64 protocol_errors;
  guint64 connections_lost;
  gint64 last_data_us;
  guint64 rate_bytes_mark;
  gint64 rate_since_us;
  guint64 bitrate;
  gint64 stats_posted_us;

  /* receiver-driven control (controller_tick) */
  MtcpAdjustWindow window;
  MtcpAdjustConn conn_control;
  MtcpMultfrc multfrc;
  gboolean multfrc_started;
  gint64 rtt_sample_us;         /* last RTT sample given to MULTFRC */
  gboolean control_started;
  gboolean pars_done;
  guint32 least_rtt_us;         /* the lowest RTT any REPORT gave: the path's
                                 * own, without the queue our flows built */
  guint wanted;                 /* connections the controller wants */
  gint64 interval_start_us;
  guint64 interval_bytes_mark;
  guint64 interval_backlog;     /* most bytes the sink held back for us */
  gdouble target_Bps;
  gchar conn_reason[160];

  MtcpIoThread io;
  gboolean running;
  gint tls_orphans;             /* see mtcp_connection_wait_orphaned_handshakes */
};

static void client_close_conn (MtcpClient * client, ClientConn * cc,
    const gchar * why);
static MtcpOutFrame *answer_challenge (MtcpClient * client, ClientConn * cc,
    gboolean locked, const guint8 * body, gsize size, gchar ** err);
static gboolean check_proof (MtcpClient * client, ClientConn * cc,
    const guint8 * body, gsize size, gchar ** err);
static guint count_conns (MtcpClient * client, gboolean ready_only);
static gboolean sink_may_welcome (MtcpClient * client, ClientConn * cc,
    gchar ** err);

GstClockTime
mtcp_client_now (void)
{
  return (GstClockTime) g_get_monotonic_time () * GST_USECOND;
}

void
mtcp_item_clear (MtcpItem * item)
{
  gst_clear_buffer (&item->buffer);
  gst_clear_caps (&item->caps);
}

static void
item_free (MtcpItem * item)
{
  mtcp_item_clear (item);
  g_free (item);
}

/* How far ahead of arrival a deadline may lie. No lock. */
static GstClockTime
deadline_horizon (const MtcpClientConfig * config)
{
  return MIN (config->latency, MAX_TIME) + HORIZON_MARGIN;
}

/* The reorder buffer's byte cap (see MAX_HELD_RATE). No lock. */
static guint64
held_bytes_cap (const MtcpClientConfig * config)
{
  guint64 cap;

  cap = gst_util_uint64_scale (deadline_horizon (config), MAX_HELD_RATE,
      GST_SECOND);
  cap = CLAMP (cap, MIN_HELD_BYTES, MAX_HELD_BYTES);
  return MAX (cap, (guint64) 4 * config->max_frame);
}

MtcpClient *
mtcp_client_new (const MtcpClientConfig * config,
    MtcpClientStatsFunc stats_func, gpointer user_data)
{
  MtcpClient *client = g_new0 (MtcpClient, 1);
  static gsize done = 0;

  if (g_once_init_enter (&done)) {
    GST_DEBUG_CATEGORY_INIT (mtcp_client_debug, "multitcpclient", 0,
        "multitcp source transport");
    g_once_init_leave (&done, 1);
  }
  client->config = *config;
  client->config.host = g_strdup (config->host);
  client->config.passphrase = g_strdup (config->passphrase);
  client->config.local_addresses = g_strdup (config->local_addresses);
  client->config.tls_ca_file = g_strdup (config->tls_ca_file);
  client->config.tls_server_name = g_strdup (config->tls_server_name);
  client->config.stream_id = g_strdup (config->stream_id);
  client->stats_func = stats_func;
  client->stats_data = user_data;
  g_mutex_init (&client->lock);
  g_cond_init (&client->cond);
  client->reorder = mtcp_reorder_new (REORDER_WINDOW,
      (GDestroyNotify) item_free);
  mtcp_reorder_set_limits (client->reorder, held_bytes_cap (&client->config),
      deadline_horizon (&client->config));
  client->window.measured = -1;
  client->skew = mtcp_skew_new (SKEW_WINDOW, SKEW_WINDOWS);
  return client;
}

void
mtcp_client_free (MtcpClient * client)
{
  mtcp_client_stop (client);
  mtcp_auth_key_clear (&client->auth_key);
  mtcp_reorder_free (client->reorder);
  mtcp_skew_free (client->skew);
  mtcp_connector_free (client->connector);
  g_clear_object (&client->address);
  g_clear_error (&client->error);
  g_free (client->session_str);
  g_free (client->config.host);
  g_free (client->config.passphrase);
  g_free (client->config.local_addresses);
  g_free (client->config.tls_ca_file);
  g_free (client->config.tls_server_name);
  g_free (client->config.stream_id);
  g_clear_object (&client->tls.database);
  if (client->locals)
    g_ptr_array_unref (client->locals);
  g_mutex_clear (&client->lock);
  g_cond_clear (&client->cond);
  g_free (client);
}

const gchar *
mtcp_client_get_session_id (MtcpClient * client)
{
  return client->session_str;
}

static void
client_fail (MtcpClient * client, GError * error)
{
  if (client->error == NULL)
    client->error = error;
  else
    g_error_free (error);
  g_cond_broadcast (&client->cond);
}

/* ---- frames from the sink ---- */

/* a + b saturated to [0, MAX_TIME]. No lock. */
static gint64
add_time (gint64 a, gint64 b)
{
  gint64 t;

  if (__builtin_add_overflow (a, b, &t))
    return a > 0 ? MAX_TIME : 0;
  return CLAMP (t, 0, MAX_TIME);
}

/* The first timestamp fixes the mapping: it is due `latency` from now.
 * From there the skew estimate moves it as the sender's clock runs faster
 * or slower than ours, so deadlines keep their distance to arrivals.
 * Called with the lock. @sender_time <= MAX_TIME or MTCP_TIME_NONE
 * (handle_buffer refuses others); the result saturates at MAX_TIME. */
static GstClockTime
to_local (MtcpClient * client, guint64 sender_time, GstClockTime now)
{
  gint64 t;

  if (sender_time == MTCP_TIME_NONE)
    return GST_CLOCK_TIME_NONE;
  if (!client->mapped) {
    /* both in [0, MAX_TIME]: no overflow */
    client->time_offset = (gint64) MIN (now, MAX_TIME) - (gint64) sender_time;
    client->mapped = TRUE;
    mtcp_skew_reset (client->skew);
    GST_DEBUG ("sender time %" GST_TIME_FORMAT " maps to local %"
        GST_TIME_FORMAT, GST_TIME_ARGS (sender_time), GST_TIME_ARGS (now));
  }
  t = add_time ((gint64) sender_time, client->time_offset);
  if (client->config.drift_correction)
    t = add_time (t, mtcp_skew_correction (client->skew, sender_time));
  return (GstClockTime) t;
}

static GstClockTime
release_margin (MtcpClient * client)
{
  /* release a little before the deadline so downstream still has time */
  return MIN (client->config.latency / 10, 20 * GST_MSECOND);
}

static void
hold_item (MtcpClient * client, ClientConn * cc, MtcpItem * item,
    GstClockTime deadline, GstClockTime now, gsize size)
{
  switch (mtcp_reorder_push (client->reorder, item->seq, deadline, now, size,
          item)) {
    case MTCP_REORDER_ACCEPTED:
      client->payload_received += size;
      g_cond_broadcast (&client->cond);
      return;
    case MTCP_REORDER_LATE:
      client->payload_received += size;
      client->late++;
      GST_LOG ("seq %" G_GUINT64_FORMAT " on connection %u is late",
          item->seq, cc->index);
      break;
    case MTCP_REORDER_DUPLICATE:
      client->duplicates++;
      break;
    case MTCP_REORDER_TOO_FAR:
      client->protocol_errors++;
      GST_WARNING ("seq %" G_GUINT64_FORMAT " is beyond the reorder window",
          item->seq);
      break;
    case MTCP_REORDER_FULL:
      /* counted in the reorder stats (buffers-overflow) */
      client->payload_received += size;
      GST_LOG ("seq %" G_GUINT64_FORMAT " on connection %u: reorder buffer "
          "full", item->seq, cc->index);
      break;
  }
  item_free (item);
}

static gboolean
handle_buffer (MtcpClient * client, ClientConn * cc, guint8 type,
    const guint8 * body, gsize size, GstClockTime now, gchar ** err)
{
  MtcpBufferInfo info;
  const guint8 *payload;
  MtcpItem *item;
  GstBuffer *buf;
  GstClockTime deadline = GST_CLOCK_TIME_NONE, ref;

  if (type == MTCP_FRAME_BUFFER_DELTA ?
      !mtcp_parse_buffer_delta (body, size, &cc->conn->delta_in, &info,
          &payload, err) : !mtcp_parse_buffer (body, size, &info, &payload,
          err))
    return FALSE;
  if ((info.pts != MTCP_TIME_NONE && info.pts > MAX_TIME) ||
      (info.dts != MTCP_TIME_NONE && info.dts > MAX_TIME) ||
      (info.duration != MTCP_TIME_NONE && info.duration > MAX_TIME)) {
    *err = g_strdup_printf ("seq %" G_GUINT64_FORMAT ": a timestamp beyond %"
        GST_TIME_FORMAT, info.seq, GST_TIME_ARGS (MAX_TIME));
    return FALSE;
  }
  buf = gst_buffer_new_memdup (payload, info.payload_size);
  GST_BUFFER_FLAGS (buf) = mtcp_buffer_flags_from_wire (info.flags);
  /* DTS first: it is the earlier of the two and decides decode order */
  ref = info.dts != MTCP_TIME_NONE ? info.dts : info.pts;
  if (ref != MTCP_TIME_NONE) {
    to_local (client, ref, now);
    /* estimated even when not applied: the stats show the drift */
    mtcp_skew_observe (client->skew, ref, now);
    client->last_sender_time = ref;
  }
  GST_BUFFER_DTS (buf) = to_local (client, info.dts, now);
  GST_BUFFER_PTS (buf) = to_local (client, info.pts, now);
  if (info.duration != MTCP_TIME_NONE)
    GST_BUFFER_DURATION (buf) = info.duration;
  if (ref != MTCP_TIME_NONE) {
    GstClockTime local = to_local (client, ref, now);
    /* local <= MAX_TIME, latency a guint of ms: no wrap; the reorder buffer
     * pulls it in to the horizon */
    deadline = local + client->config.latency - release_margin (client);
  }
  cc->buffers_received++;
  client->buffers_received++;

  item = g_new0 (MtcpItem, 1);
  item->kind = MTCP_ITEM_BUFFER;
  item->seq = info.seq;
  item->buffer = buf;
  hold_item (client, cc, item, deadline, now, info.payload_size);
  return TRUE;
}

static gboolean
handle_caps (MtcpClient * client, ClientConn * cc, const guint8 * body,
    gsize size, GstClockTime now, gchar ** err)
{
  guint64 seq;
  gchar *str;
  GstCaps *caps;
  MtcpItem *item;

  if (!mtcp_parse_caps (body, size, &seq, &str, err))
    return FALSE;
  caps = gst_caps_from_string (str);
  if (caps == NULL || !gst_caps_is_fixed (caps)) {
    *err = g_strdup_printf ("caps that cannot be used: '%.200s'", str);
    gst_clear_caps (&caps);
    g_free (str);
    return FALSE;
  }
  GST_DEBUG ("caps seq %" G_GUINT64_FORMAT ": %s", seq, str);
  g_free (str);
  item = g_new0 (MtcpItem, 1);
  item->kind = MTCP_ITEM_CAPS;
  item->seq = seq;
  item->caps = caps;
  /* no timestamp, but a gap before it must not hold it forever; its text
   * counts towards the byte cap */
  hold_item (client, cc, item, now + deadline_horizon (&client->config), now,
      size);
  return TRUE;
}

/* What the sink holds for this session and has not sent yet: its queue
 * plus every connection's unsent bytes. */
static void
note_sender_backlog (MtcpClient * client)
{
  GList *l;
  guint64 queued = 0, unsent = 0;

  for (l = client->conns; l; l = l->next) {
    ClientConn *cc = l->data;
    if (!cc->report_us)
      continue;
    queued = MAX (queued, cc->report.backlog_bytes);
    /* each is at most G_MAXUINT64 / 4 (sanitize_report): saturate the sum */
    unsent = MIN (unsent + cc->report.unsent_bytes, MAX_REPORT_BYTES);
  }
  client->interval_backlog = MAX (client->interval_backlog, queued + unsent);
}

/* Clamps what the controllers compute with to what a real sink reports:
 * doubles from these are cast back to integers. No lock. */
static void
sanitize_report (MtcpReport * r)
{
  r->stream_bitrate = MIN (r->stream_bitrate, MAX_REPORT_BITRATE);
  r->backlog_bytes = MIN (r->backlog_bytes, MAX_REPORT_BYTES);
  r->unsent_bytes = MIN (r->unsent_bytes, MAX_REPORT_BYTES);
  r->bytes_acked = MIN (r->bytes_acked, MAX_REPORT_BYTES);
  r->rtt_us = MIN (r->rtt_us, MAX_REPORT_RTT_US);
  r->rttvar_us = MIN (r->rttvar_us, MAX_REPORT_RTT_US);
  if (r->snd_mss != 0)
    r->snd_mss = CLAMP (r->snd_mss, 64, 65535);
}

/* Called with the lock. */
static gboolean
handle_data_frame (MtcpClient * client, ClientConn * cc,
    const MtcpFrameHeader * hdr, const guint8 * body, GstClockTime now,
    gchar ** err)
{
  switch (hdr->type) {
    case MTCP_FRAME_BUFFER:
    case MTCP_FRAME_BUFFER_DELTA:
      return handle_buffer (client, cc, hdr->type, body, hdr->length, now,
          err);
    case MTCP_FRAME_CAPS:
      return handle_caps (client, cc, body, hdr->length, now, err);
    case MTCP_FRAME_EOS:{
      guint64 seq;
      MtcpItem *item;
      if (!mtcp_parse_eos (body, hdr->length, &seq, err))
        return FALSE;
      GST_DEBUG ("EOS at seq %" G_GUINT64_FORMAT, seq);
      item = g_new0 (MtcpItem, 1);
      item->kind = MTCP_ITEM_EOS;
      item->seq = seq;
      hold_item (client, cc, item, now + deadline_horizon (&client->config),
          now, 0);
      return TRUE;
    }
    case MTCP_FRAME_SKIP:{
      MtcpSkip skip;
      if (!mtcp_parse_skip (body, hdr->length, &skip, err))
        return FALSE;
      GST_DEBUG ("sender skipped seq %" G_GUINT64_FORMAT "..%"
          G_GUINT64_FORMAT, skip.first_seq, skip.end_seq);
      if (!mtcp_reorder_skip_range (client->reorder, skip.first_seq,
              skip.end_seq)) {
        g_cond_broadcast (&client->cond);
        *err = g_strdup_printf ("SKIP %" G_GUINT64_FORMAT "..%"
            G_GUINT64_FORMAT " starts beyond the reorder window or exceeds "
            "%u outstanding ranges", skip.first_seq, skip.end_seq,
            MTCP_REORDER_MAX_RANGES);
        return FALSE;
      }
      g_cond_broadcast (&client->cond);
      return TRUE;
    }
    case MTCP_FRAME_REPORT:
      if (!mtcp_parse_report (body, hdr->length, &cc->report, err))
        return FALSE;
      sanitize_report (&cc->report);
      cc->report_us = g_get_monotonic_time ();
      if (cc->report.rtt_us > 0 && (client->least_rtt_us == 0 ||
              cc->report.rtt_us < client->least_rtt_us))
        client->least_rtt_us = cc->report.rtt_us;
      note_sender_backlog (client);
      return TRUE;
    case MTCP_FRAME_REFUSE:{
      MtcpRefuse refuse;
      if (mtcp_parse_refuse (body, hdr->length, &refuse, err))
        *err = g_strdup_printf ("refused by the sink: %s", refuse.reason);
      return FALSE;
    }
    case MTCP_FRAME_HELLO:
    case MTCP_FRAME_WELCOME:
    case MTCP_FRAME_FEEDBACK:
      *err = g_strdup_printf ("unexpected %s frame",
          mtcp_frame_type_name (hdr->type));
      return FALSE;
    default:
      GST_DEBUG ("skipping frame of unknown type 0x%02x", hdr->type);
      return TRUE;
  }
}

/* client->lock held. The passphrase handshake failed: a passphrase that
 * does not work now will not later, so no retries. Returns FALSE. */
static gboolean
auth_failed (MtcpClient * client, const gchar * why)
{
  /* listening, whoever calls may fail: that call closes, no more (else
   * any stranger could stop the receiver) */
  if (client->connector) {
    GST_WARNING ("a call from a sink that did not prove the passphrase: %s",
        why);
    return FALSE;
  }
  client->gave_up = TRUE;
  client_fail (client, g_error_new (G_IO_ERROR, G_IO_ERROR_PERMISSION_DENIED,
          "%s", why));
  return FALSE;
}

static gboolean
handle_welcome (MtcpClient * client, ClientConn * cc,
    const MtcpFrameHeader * hdr, const guint8 * body, gchar ** err)
{
  MtcpWelcome welcome;

  if (hdr->type == MTCP_FRAME_REFUSE) {
    MtcpRefuse refuse;
    if (mtcp_parse_refuse (body, hdr->length, &refuse, err)) {
      if (refuse.code == MTCP_REFUSE_UNKNOWN_SESSION &&
          (client->connector == NULL || count_conns (client, TRUE) == 0)) {
        /* the sink restarted or dropped us: start over with a new session
         * (listening, a caller that does not know it while the sink is
         * still with us is someone else's) */
        client->session_gone = TRUE;
      } else if (refuse.code == MTCP_REFUSE_AUTH && client->connector) {
        GST_WARNING ("a calling sink refused our passphrase");
      } else if (refuse.code == MTCP_REFUSE_STREAM_ID) {
        /* a stream the sink does not serve stays so: no retry storm */
        client->gave_up = TRUE;
        client_fail (client, g_error_new (G_IO_ERROR,
                G_IO_ERROR_NOT_FOUND, "%s:%u does not serve stream-id "
                "\"%s\": %s", client->config.host, client->config.port,
                client->config.stream_id ? client->config.stream_id : "",
                refuse.reason));
      } else if (refuse.code == MTCP_REFUSE_AUTH) {
        /* a wrong passphrase stays wrong: no retry storm */
        client->gave_up = TRUE;
        client_fail (client, g_error_new (G_IO_ERROR,
                G_IO_ERROR_PERMISSION_DENIED, "%s:%u refused the passphrase",
                client->config.host, client->config.port));
      }
      *err = g_strdup_printf ("refused by the sink: %s", refuse.reason);
    }
    return FALSE;
  }
  if (hdr->type == MTCP_FRAME_CHALLENGE) {
    MtcpOutFrame *f = answer_challenge (client, cc, TRUE, body,
        hdr->length, err);
    if (f == NULL)
      return auth_failed (client, *err);
    mtcp_connection_queue (cc->conn, f);
    return TRUE;                /* PROOF, WELCOME once the sink checked it */
  }
  if (hdr->type == MTCP_FRAME_PROOF) {
    if (!check_proof (client, cc, body, hdr->length, err))
      return auth_failed (client, *err);
    return TRUE;
  }
  if (hdr->type == MTCP_FRAME_WELCOME && !sink_may_welcome (client, cc, err))
    return auth_failed (client, *err);
  if (hdr->type != MTCP_FRAME_WELCOME) {
    *err = g_strdup_printf ("expected WELCOME, got %s",
        mtcp_frame_type_name (hdr->type));
    return FALSE;
  }
  if (!mtcp_parse_welcome (body, hdr->length, &welcome, err))
    return FALSE;
  /* listening for one stream: a sink calling with another is not ours */
  if (client->connector && client->config.stream_id &&
      *client->config.stream_id &&
      g_strcmp0 (welcome.stream_id, client->config.stream_id) != 0) {
    *err = g_strdup_printf ("a sink called with stream-id \"%s\", not ours",
        welcome.stream_id);
    return FALSE;
  }
  if (cc->fresh) {
    /* a new stream: sequence numbers and timing start over, DISCONT */
    memcpy (client->session_id, welcome.session_id, MTCP_SESSION_ID_SIZE);
    g_free (client->session_str);
    client->session_str = mtcp_session_id_to_string (welcome.session_id);
    mtcp_reorder_reset (client->reorder, 0);
    client->mapped = FALSE;
    client->reset_discont = TRUE;
    client->session_gone = FALSE;
    client->sessions_started++;
    cc->fresh = FALSE;
    GST_INFO ("started new session %s", client->session_str);
  } else if (memcmp (welcome.session_id, client->session_id,
          MTCP_SESSION_ID_SIZE) != 0) {
    *err = g_strdup ("the sink put the connection into another session");
    return FALSE;
  }
  cc->id = welcome.connection_id;
  cc->state = CONN_READY;
  client->failures = 0;
  client->all_closed = FALSE;
  GST_INFO ("connection %u joined session %s as %u", cc->index,
      client->session_str, cc->id);
  return TRUE;
}

/* Returns FALSE when the connection was closed. */
static gboolean
handle_frames (MtcpClient * client, ClientConn * cc)
{
  GstClockTime now = mtcp_client_now ();

  for (;;) {
    MtcpFrameHeader hdr;
    const guint8 *body;
    gchar *err = NULL;
    gboolean ok;
    MtcpParseResult r = mtcp_frame_reader_next (cc->conn->reader, &hdr, &body,
        &err);

    if (r == MTCP_PARSE_NEED_MORE)
      return TRUE;
    if (r == MTCP_PARSE_OK) {
      cc->conn->frames_received++;
      if (cc->state == CONN_HANDSHAKE)
        ok = handle_welcome (client, cc, &hdr, body, &err);
      else
        ok = handle_data_frame (client, cc, &hdr, body, now, &err);
      if (ok)
        continue;
    }
    if (r != MTCP_PARSE_OK || hdr.type != MTCP_FRAME_REFUSE)
      client->protocol_errors++;      /* a refusal is the sink's answer */
    GST_WARNING ("connection %u (%s): %s", cc->index, cc->conn->peer, err);
    client_close_conn (client, cc, err);
    g_free (err);
    return FALSE;
  }
}

/* ---- connections ---- */

static void
make_hello (MtcpClient * client, gboolean join, MtcpHello * hello)
{
  hello->magic = MTCP_MAGIC;
  hello->version = MTCP_VERSION;
  hello->flags = (join ? MTCP_HELLO_FLAG_JOIN : 0) |
      MTCP_HELLO_FLAG_BUFFER_DELTA | MTCP_HELLO_FLAG_COMPACT |
      MTCP_HELLO_FLAG_MUTUAL_AUTH;
  hello->latency_ms = (guint32) MIN (client->config.latency / GST_MSECOND,
      G_MAXUINT32);
  if (join)
    memcpy (hello->session_id, client->session_id, MTCP_SESSION_ID_SIZE);
  else
    memset (hello->session_id, 0, MTCP_SESSION_ID_SIZE);
  /* a caller names the stream it wants; a listener checks the sink's */
  g_strlcpy (hello->stream_id, !client->config.listener &&
      client->config.stream_id ? client->config.stream_id : "",
      sizeof (hello->stream_id));
}

/* client->lock held (@locked, in the I/O thread), or the I/O thread not
 * running yet. The answer to a CHALLENGE on @cc, or NULL with *err: no
 * passphrase here, a key too weak or too costly, a second CHALLENGE.
 * Derives the key when the sink's salt or rounds are new (tens of ms, up
 * to a second for the most rounds accepted: once per sink, not per
 * connection), with the lock released meanwhile: a sink that changes its
 * salt on every connection must not stall the streaming thread. Only the
 * I/O thread closes connections, so @cc is still there after. */
static MtcpOutFrame *
answer_challenge (MtcpClient * client, ClientConn * cc, gboolean locked,
    const guint8 * body, gsize size, gchar ** err)
{
  MtcpChallenge challenge;
  MtcpAuth auth;
  MtcpOutFrame *f;
  GError *error = NULL;

  if (!mtcp_parse_challenge (body, size, &challenge, err))
    return NULL;
  if (client->config.passphrase == NULL || *client->config.passphrase == 0) {
    *err = g_strdup_printf ("the sink at %s:%u requires a passphrase",
        client->config.host, client->config.port);
    return NULL;
  }
  if (cc->challenged || cc->sink_proven) {
    *err = g_strdup_printf ("the sink at %s:%u sent a second CHALLENGE",
        client->config.host, client->config.port);
    return NULL;
  }
  if (challenge.iterations < MTCP_AUTH_ITERATIONS_MIN ||
      challenge.iterations > MTCP_AUTH_ITERATIONS_MAX) {
    *err = g_strdup_printf ("the sink at %s:%u asks for a key of %u rounds, "
        "outside %u..%u: refusing to prove the passphrase to it",
        client->config.host, client->config.port, challenge.iterations,
        MTCP_AUTH_ITERATIONS_MIN, MTCP_AUTH_ITERATIONS_MAX);
    return NULL;
  }
  if (!mtcp_random_bytes (auth.nonce, MTCP_NONCE_SIZE, &error)) {
    *err = g_strdup (error->message);
    g_error_free (error);
    return NULL;
  }
  if (!mtcp_auth_key_matches (&client->auth_key, challenge.salt,
          challenge.iterations)) {
    gint64 t0 = g_get_monotonic_time ();
    MtcpAuthKey fresh;

    /* config.passphrase changes only while stopped */
    if (locked)
      g_mutex_unlock (&client->lock);
    mtcp_auth_key_derive (&fresh, client->config.passphrase, challenge.salt,
        challenge.iterations);
    if (locked)
      g_mutex_lock (&client->lock);
    client->auth_key = fresh;
    mtcp_auth_key_clear (&fresh);
    GST_INFO ("derived the passphrase key (%u rounds) in %" G_GINT64_FORMAT
        " ms", challenge.iterations, (g_get_monotonic_time () - t0) / 1000);
  }
  cc->proof_key = client->auth_key;
  memcpy (cc->sink_nonce, challenge.nonce, MTCP_NONCE_SIZE);
  memcpy (cc->own_nonce, auth.nonce, MTCP_NONCE_SIZE);
  mtcp_auth_proof (&cc->proof_key, MTCP_AUTH_ROLE_RECEIVER, cc->sink_nonce,
      cc->own_nonce, &cc->auth_hello, auth.mac);
  cc->challenged = TRUE;
  f = mtcp_out_frame_new ();
  f->type = MTCP_FRAME_AUTH;
  f->head_size = mtcp_write_auth (f->head, sizeof (f->head_inline), &auth);
  return f;
}

/* client->lock held, or the I/O thread not running yet. The sink's PROOF
 * on @cc: FALSE with *err unless it answers our AUTH and is right. */
static gboolean
check_proof (MtcpClient * client, ClientConn * cc, const guint8 * body,
    gsize size, gchar ** err)
{
  guint8 mac[MTCP_MAC_SIZE], expected[MTCP_MAC_SIZE];

  if (!cc->challenged) {
    *err = g_strdup_printf ("the sink at %s:%u sent PROOF unasked",
        client->config.host, client->config.port);
    return FALSE;
  }
  if (!mtcp_parse_proof (body, size, mac, err))
    return FALSE;
  mtcp_auth_proof (&cc->proof_key, MTCP_AUTH_ROLE_SINK, cc->sink_nonce,
      cc->own_nonce, &cc->auth_hello, expected);
  if (!mtcp_bytes_equal_ct (mac, expected, MTCP_MAC_SIZE)) {
    *err = g_strdup_printf ("the sink at %s:%u does not know the passphrase "
        "(its proof is wrong)", client->config.host, client->config.port);
    return FALSE;
  }
  cc->challenged = FALSE;
  cc->sink_proven = TRUE;
  return TRUE;
}

/* client->lock held, or the I/O thread not running yet. With a passphrase,
 * only a sink that proved it on @cc may let the connection in: else any
 * listener could feed us a stream. */
static gboolean
sink_may_welcome (MtcpClient * client, ClientConn * cc, gchar ** err)
{
  if (client->config.passphrase == NULL || *client->config.passphrase == 0 ||
      cc->sink_proven)
    return TRUE;
  *err = g_strdup_printf ("the sink at %s:%u did not prove it knows the "
      "passphrase (%s): refusing it", client->config.host,
      client->config.port, cc->challenged ? "no PROOF before WELCOME" :
      "it never sent a CHALLENGE");
  return FALSE;
}

static void
send_hello (ClientConn * cc, MtcpClient * client, gboolean join)
{
  MtcpHello hello;
  MtcpOutFrame *f = mtcp_out_frame_new ();

  make_hello (client, join, &hello);
  /* a passphrase's proofs cover this HELLO, not one made later (the
   * session id may change meanwhile) */
  cc->auth_hello = hello;
  f->type = MTCP_FRAME_HELLO;
  f->head_size = mtcp_write_hello (mtcp_out_frame_alloc_head (f,
          MTCP_HELLO_FRAME_MAX), MTCP_HELLO_FRAME_MAX, &hello);
  mtcp_connection_queue (cc->conn, f);
}

/* A connection could not be opened or joined: back off (doubling, with
 * jitter, up to MAX_BACKOFF_MS) before the next one; give up after `retry`
 * in a row. */
static void
note_failure (MtcpClient * client)
{
  gint64 backoff_ms;

  /* listening, a call that failed is the caller's to try again */
  if (client->connector)
    return;
  client->failures++;
  if (client->config.retry == 0 || client->failures > client->config.retry) {
    if (!client->gave_up) {
      client->gave_up = TRUE;
      GST_WARNING ("giving up on %s:%u after %u failed attempts",
          client->config.host, client->config.port, client->failures);
    }
    g_cond_broadcast (&client->cond);
    return;
  }
  backoff_ms = MIN (100 << MIN (client->failures - 1, 6), MAX_BACKOFF_MS);
  backoff_ms = backoff_ms * g_random_double_range (0.75, 1.25);
  client->next_open_us = g_get_monotonic_time () + backoff_ms * 1000;
  GST_DEBUG ("failure %u: next connection in %" G_GINT64_FORMAT " ms",
      client->failures, backoff_ms);
}

static void
client_close_conn (MtcpClient * client, ClientConn * cc, const gchar * why)
{
  gint64 now = g_get_monotonic_time ();
  gboolean worked = now - cc->conn->created_us > LOST_AFTER_US;

  GST_INFO ("connection %u (%s, %s) closes: %s", cc->index, cc->conn->peer,
      conn_state_name (cc->state), why);

  client->conns = g_list_remove (client->conns, cc);
  if (cc->state != CONN_RETIRING && !(cc->probe && cc->state ==
          CONN_CONNECTING))
    client->connections_lost++;
  mtcp_connection_free (cc->conn);
  cc->conn = NULL;
  mtcp_auth_key_clear (&cc->proof_key);
  client->closed = g_list_prepend (client->closed, cc);

  if (cc->state == CONN_RETIRING || !client->running ||
      (cc->probe && cc->state == CONN_CONNECTING)) {
    /* asked for, or a probe into a path still dark */
  } else if (cc->state == CONN_READY && worked) {
    /* a connection that worked for a while is a loss, not a failed try:
     * replace it at once (a dead sink then fails the next try) */
    client->next_open_us = MIN (client->next_open_us, now);
  } else if (cc->state == CONN_HANDSHAKE && client->session_gone &&
      !cc->fresh) {
    /* the sink forgot our session: open a fresh one now */
    client->next_open_us = now;
  } else {
    note_failure (client);
  }
  if (client->conns == NULL && client->running) {
    client->all_closed = TRUE;
    g_cond_broadcast (&client->cond);
  }
}

static void
reap (MtcpClient * client)
{
  g_list_free_full (client->closed, g_free);
  client->closed = NULL;
}

/* A certificate that was refused stays refused: no retry storm. */
static void
give_up_on_tls_error (MtcpClient * client, const GError * err)
{
  /* listening: a caller's bad certificate closes its call only */
  if (!mtcp_tls_error_is_fatal (err) || client->gave_up || client->connector)
    return;
  client->gave_up = TRUE;
  client_fail (client, g_error_copy (err));
}

static gboolean
on_conn_event (MtcpConnection * conn, GIOCondition cond, gpointer user_data)
{
  ClientConn *cc = conn->user_data;
  MtcpClient *client = user_data;
  GError *err = NULL;

  g_mutex_lock (&client->lock);
  GST_LOG ("connection %u (%s): events 0x%x", cc->index,
      conn_state_name (cc->state), cond);
  if (cc->state == CONN_CONNECTING) {
    if (!(cond & (G_IO_OUT | G_IO_ERR | G_IO_HUP)))
      goto done;
    if (!g_socket_check_connect_result (conn->socket, &err)) {
      client_close_conn (client, cc, err->message);
      g_clear_error (&err);
      goto done;
    }
    /* a call gone already (a calling sink that stopped; it sends nothing
     * before our HELLO): no TLS on a dead socket, which glib-networking
     * does not take well. A dialed one may still hold what its sink wrote
     * before it closed. */
    if (cc->accepted && (cond & G_IO_HUP)) {
      client_close_conn (client, cc, "closed by the peer before the "
          "handshake");
      goto done;
    }
    cc->state = CONN_HANDSHAKE;
    conn->tls_orphans = &client->tls_orphans;
    if (client->tls.server_name &&
        !mtcp_connection_start_tls (conn, &client->tls, &err)) {
      client_close_conn (client, cc, err->message);
      g_clear_error (&err);
      goto done;
    }
    /* with TLS, HELLO waits in the queue for the handshake */
    send_hello (cc, client, !cc->fresh);
  }
  if (cond & (G_IO_IN | G_IO_HUP | G_IO_ERR)) {
    guint64 before = conn->bytes_received;
    MtcpIoResult r = mtcp_connection_receive (conn, &err);

    if (conn->bytes_received > before) {
      gint64 now = g_get_monotonic_time ();

      client->bytes_received += conn->bytes_received - before;
      /* a new run of hearing from the sink after a silence */
      if (now - cc->heard_us > HEARING_GAP_US)
        cc->heard_since_us = now;
      client->last_data_us = cc->heard_us = now;
    }
    if (!handle_frames (client, cc)) {
      g_clear_error (&err);
      goto done;
    }
    if (r == MTCP_IO_CLOSED || r == MTCP_IO_ERROR) {
      give_up_on_tls_error (client, err);
      client_close_conn (client, cc, err ? err->message : "closed by sink");
      g_clear_error (&err);
      goto done;
    }
  }
  {
    MtcpIoResult r = mtcp_connection_flush (conn, &err);
    if (r == MTCP_IO_CLOSED || r == MTCP_IO_ERROR) {
      give_up_on_tls_error (client, err);
      client_close_conn (client, cc, err ? err->message : "write failed");
      g_clear_error (&err);
      goto done;
    }
    mtcp_connection_want_write (conn, r == MTCP_IO_BLOCKED);
  }
done:
  reap (client);
  g_mutex_unlock (&client->lock);
  return TRUE;
}

/* TLS settings every connection uses; server_name stays NULL without. */
static gboolean
setup_tls (MtcpClient * client, GError ** error)
{
  const MtcpClientConfig *c = &client->config;

  if (!c->tls)
    return TRUE;
  if (!g_tls_backend_supports_tls (g_tls_backend_get_default ())) {
    g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED, "tls=true but "
        "GLib has no TLS backend (install glib-networking)");
    return FALSE;
  }
  if (c->tls_ca_file && *c->tls_ca_file) {
    client->tls.database = g_tls_file_database_new (c->tls_ca_file, error);
    if (client->tls.database == NULL) {
      g_prefix_error (error, "tls-ca-file %s: ", c->tls_ca_file);
      return FALSE;
    }
  }
  client->tls.server = FALSE;
  client->tls.validation_flags = c->tls_validation_flags;
  client->tls.server_name = c->tls_server_name && *c->tls_server_name ?
      c->tls_server_name : c->host;
  client->tls.port = c->port;
  return TRUE;
}

/* `local-addresses`: the IP addresses connections are spread over. */
static gboolean
parse_local_addresses (MtcpClient * client, GError ** error)
{
  gchar **tokens;
  guint i;
  GSocketFamily family = g_socket_address_get_family (client->address);

  if (client->config.local_addresses == NULL)
    return TRUE;
  tokens = g_strsplit (client->config.local_addresses, ",", -1);
  client->locals = g_ptr_array_new_with_free_func (g_object_unref);
  for (i = 0; tokens[i]; i++) {
    gchar *text = g_strstrip (tokens[i]);
    GInetAddress *ip;

    if (*text == 0)
      continue;
    ip = g_inet_address_new_from_string (text);
    if (ip == NULL || g_inet_address_get_family (ip) != family) {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
          "local-addresses: \"%s\" is not an %s address", text,
          family == G_SOCKET_FAMILY_IPV6 ? "IPv6" : "IPv4");
      g_clear_object (&ip);
      g_strfreev (tokens);
      return FALSE;
    }
    g_ptr_array_add (client->locals, g_inet_socket_address_new (ip, 0));
    g_object_unref (ip);
  }
  g_strfreev (tokens);
  if (client->locals->len == 0)
    g_clear_pointer (&client->locals, g_ptr_array_unref);
  return TRUE;
}

/* The local address with the fewest connections (-1 without any). */
static gint
least_used_local (MtcpClient * client)
{
  guint i, best = 0, best_n = G_MAXUINT;
  GList *l;

  if (client->locals == NULL)
    return -1;
  for (i = 0; i < client->locals->len; i++) {
    guint n = 0;
    for (l = client->conns; l; l = l->next) {
      ClientConn *cc = l->data;
      n += cc->local == (gint) i && cc->state != CONN_RETIRING;
    }
    if (n < best_n) {
      best = i;
      best_n = n;
    }
  }
  return best;
}

/* A TCP socket bound to local address @local (-1: the kernel's choice). */
static GSocket *
new_socket (MtcpClient * client, gint local, GError ** error)
{
  GSocket *sock = g_socket_new (g_socket_address_get_family (client->address),
      G_SOCKET_TYPE_STREAM, G_SOCKET_PROTOCOL_TCP, error);

  if (sock == NULL)
    return NULL;
  mtcp_tcp_set_nodelay (sock, TRUE);
  if (local >= 0 && !g_socket_bind (sock,
          g_ptr_array_index (client->locals, local), FALSE, error)) {
    gchar *ip = g_inet_address_to_string (g_inet_socket_address_get_address
        (g_ptr_array_index (client->locals, local)));
    g_prefix_error (error, "cannot use local address %s: ", ip);
    g_free (ip);
    g_object_unref (sock);
    return NULL;
  }
  return sock;
}

/* @accepted: the sink dialed it, we listen */
static ClientConn *
conn_new (MtcpClient * client, GSocket * sock, ConnState state, gint local,
    gboolean accepted)
{
  ClientConn *cc = g_new0 (ClientConn, 1);

  cc->client = client;
  cc->local = local;
  cc->state = state;
  cc->index = client->next_index++;
  cc->conn = mtcp_connection_new (sock, client->config.max_frame);
  cc->conn->user_data = cc;
  cc->conn->delay_acks = TRUE;
  cc->accepted = accepted;
  /* dialed: named as the user named the sink (accepted: its address) */
  if (!accepted) {
    g_free (cc->conn->peer);
    cc->conn->peer = g_strdup_printf ("%s:%u", client->config.host,
        client->config.port);
  }
  client->conns = g_list_append (client->conns, cc);
  return cc;
}

/* client->lock held. Open one more connection without blocking the I/O
 * thread; NULL if it could not even start. */
static ClientConn *
open_connection (MtcpClient * client)
{
  GError *err = NULL;
  gint local;
  GSocket *sock;
  ClientConn *cc;

  if (client->connector)
    return NULL;                /* listening: the sink dials (tell_want) */
  local = least_used_local (client);
  sock = new_socket (client, local, &err);

  if (sock == NULL) {
    GST_WARNING ("cannot open a connection: %s", err->message);
    g_error_free (err);
    note_failure (client);
    return NULL;
  }
  g_socket_set_blocking (sock, FALSE);
  if (!g_socket_connect (sock, client->address, NULL, &err) &&
      !g_error_matches (err, G_IO_ERROR, G_IO_ERROR_PENDING)) {
    GST_WARNING ("connecting to %s:%u failed: %s", client->config.host,
        client->config.port, err->message);
    g_error_free (err);
    g_object_unref (sock);
    note_failure (client);
    return NULL;
  }
  g_clear_error (&err);
  cc = conn_new (client, sock, CONN_CONNECTING, local, FALSE);
  cc->fresh = client->session_gone;
  g_object_unref (sock);
  mtcp_connection_attach (cc->conn, client->io.context, on_conn_event, client);
  mtcp_connection_want_write (cc->conn, TRUE);
  GST_DEBUG ("opening connection %u (local address %d)", cc->index, local);
  return cc;
}

static guint
count_conns (MtcpClient * client, gboolean ready_only)
{
  GList *l;
  guint n = 0;
  for (l = client->conns; l; l = l->next) {
    ClientConn *cc = l->data;
    if (ready_only ? cc->state == CONN_READY : cc->state != CONN_RETIRING)
      n++;
  }
  return n;
}

/* Ask the sink to give this connection nothing more; it closes once the
 * frames it holds are sent, so no buffer is lost or late. */
static void
retire_connection (MtcpClient * client, ClientConn * cc)
{
  guint8 head[MTCP_HEADER_SIZE];
  MtcpOutFrame *f = mtcp_out_frame_new ();

  mtcp_write_header (head, MTCP_FRAME_RETIRE, 0, 0);
  memcpy (f->head, head, MTCP_HEADER_SIZE);
  f->head_size = MTCP_HEADER_SIZE;
  f->type = MTCP_FRAME_RETIRE;
  mtcp_connection_queue (cc->conn, f);
  cc->state = CONN_RETIRING;
  GST_INFO ("retiring connection %u", cc->index);
  if (mtcp_connection_flush (cc->conn, NULL) == MTCP_IO_BLOCKED)
    mtcp_connection_want_write (cc->conn, TRUE);
}

/* How long nothing arrived on @cc (since it was opened, if ever). */
static gint64
conn_silence (ClientConn * cc, gint64 now)
{
  return now - MAX (cc->heard_us, cc->conn->created_us);
}

/* client->lock held. Ready connections heard within HEARING_GAP_US. */
static guint
count_heard (MtcpClient * client, gint64 now)
{
  GList *l;
  guint n = 0;

  for (l = client->conns; l; l = l->next) {
    ClientConn *cc = l->data;
    n += cc->state == CONN_READY && conn_silence (cc, now) <= HEARING_GAP_US;
  }
  return n;
}

static ClientConn *feedback_carrier (MtcpClient * client);

/* client->lock held. Listening, the sink dials: tell it how many
 * connections the session should have when that changed, and again every
 * WANT_REPEAT_US (a WANT lost with its connection). */
static void
tell_want (MtcpClient * client, gint64 now)
{
  ClientConn *carrier;
  MtcpOutFrame *f;
  guint want = CLAMP (client->wanted, 1, G_MAXUINT16);

  if (client->connector == NULL || (want == client->want_told &&
          now - client->want_told_us < WANT_REPEAT_US))
    return;
  carrier = feedback_carrier (client);
  if (carrier == NULL)
    return;
  f = mtcp_out_frame_new ();
  f->type = MTCP_FRAME_WANT;
  f->head_size = mtcp_write_want (f->head, sizeof (f->head_inline), want);
  mtcp_connection_queue (carrier->conn, f);
  if (want != client->want_told)
    GST_INFO ("asking the sink for %u connections", want);
  client->want_told = want;
  client->want_told_us = now;
  /* written with the next flush of the carrier (this tick's, or the
   * caller's before a RETIRE) */
  if (mtcp_connection_flush (carrier->conn, NULL) == MTCP_IO_BLOCKED)
    mtcp_connection_want_write (carrier->conn, TRUE);
}

/* Open or retire connections until the session has client->wanted
 * (listening: ask the sink to dial them, before any RETIRE, so that it
 * does not dial again what a RETIRE closes). */
static void
apply_connection_count (MtcpClient * client)
{
  guint active = count_conns (client, FALSE);

  tell_want (client, g_get_monotonic_time ());

  while (active < client->wanted) {
    open_connection (client);
    active++;
  }
  while (active > client->wanted) {
    GList *l;
    ClientConn *victim = NULL, *silent = NULL;
    gint64 now = g_get_monotonic_time ();
    /* the newest ready one: the first connection stays; but one silent
     * while others are heard first (after an outage, stuck in TCP's
     * backed-off retransmissions while a probe carries the stream) */
    for (l = client->conns; l; l = l->next) {
      ClientConn *cc = l->data;
      if (cc->state != CONN_READY)
        continue;
      if (l != client->conns)
        victim = cc;
      if (conn_silence (cc, now) > HEARING_GAP_US &&
          (silent == NULL || cc->heard_us < silent->heard_us))
        silent = cc;
    }
    if (silent && silent != victim && count_heard (client, now) > 0)
      victim = silent;
    if (victim == NULL)
      break;
    retire_connection (client, victim);
    active--;
  }
}

/* The fewest connections a controller may choose: min-connections, and one
 * for each local address, or a path would go unused (ParS's model, MULTFRC
 * and Alg. 2 all see the paths as one). */
static guint
fewest_connections (MtcpClient * client)
{
  return MAX (MAX (client->config.control.min_connections, 1),
      client->locals ? client->locals->len : 1);
}

static gboolean
open_more_connections (gpointer data)
{
  MtcpClient *client = data;

  if (!client->running)
    return G_SOURCE_REMOVE;     /* stopping */
  g_mutex_lock (&client->lock);
  /* connections=0: MultiTCP's default of 5 until ParS's model has RTT and
   * loss to work with */
  client->wanted = client->config.connections ? client->config.connections :
      CLAMP (PARS_START_CONNECTIONS, fewest_connections (client),
      client->config.control.max_connections);
  apply_connection_count (client);
  g_mutex_unlock (&client->lock);
  return G_SOURCE_REMOVE;
}

static gboolean
apply_connection_count_cb (gpointer data)
{
  MtcpClient *client = data;

  if (!client->running)
    return G_SOURCE_REMOVE;     /* stopping */
  g_mutex_lock (&client->lock);
  apply_connection_count (client);
  g_mutex_unlock (&client->lock);
  return G_SOURCE_REMOVE;
}

void
mtcp_client_set_connections (MtcpClient * client, guint connections)
{
  g_mutex_lock (&client->lock);
  client->config.connections = connections;
  if (connections > 0 && client->running &&
      client->config.control.connections == MTCP_CONNECTION_CONTROL_FIXED) {
    client->wanted = connections;
    g_snprintf (client->conn_reason, sizeof (client->conn_reason),
        "connections set to %u", connections);
    /* sockets and their sources belong to the I/O thread: it does the work;
     * high priority, or a busy stream would starve it */
    mtcp_io_thread_add_idle (&client->io, G_PRIORITY_HIGH,
        apply_connection_count_cb, client);
  }
  g_mutex_unlock (&client->lock);
}

/* Between controller decisions: replace lost connections (paced by the
 * backoff, one at a time; a fresh session first if the sink forgot ours)
 * and retire extra ones that became ready since the count went down. */
static void
keep_connection_count (MtcpClient * client, gint64 now)
{
  guint active = count_conns (client, FALSE);

  if (!client->running || client->gave_up)
    return;
  if (client->connector) {
    /* listening: the sink dials what is missing */
    tell_want (client, now);
    if (active > client->wanted)
      apply_connection_count (client);
    return;
  }
  if (active < client->wanted && now >= client->next_open_us) {
    /* while a fresh session is being opened, the others wait for its id */
    gboolean opening_fresh = FALSE;
    GList *l;
    for (l = client->conns; l; l = l->next)
      opening_fresh |= ((ClientConn *) l->data)->fresh;
    if (!opening_fresh && (!client->session_gone || active == 0)) {
      client->reconnects++;
      open_connection (client);
      /* one at a time while failing, all at once while things work */
      if (client->failures > 0)
        client->next_open_us = now + 100000;
    }
  } else if (active > client->wanted) {
    apply_connection_count (client);
  }
}

/* ---- receiver-driven control ---- */

/* Mean of the sink's smoothed RTT over the ready connections, seconds. */
static gdouble
mean_rtt (MtcpClient * client, guint * mss)
{
  GList *l;
  gdouble sum = 0;
  guint n = 0;

  *mss = 0;
  for (l = client->conns; l; l = l->next) {
    ClientConn *cc = l->data;
    if (cc->state == CONN_READY && cc->report_us && cc->report.rtt_us) {
      sum += cc->report.rtt_us / 1e6;
      n++;
      if (cc->report.snd_mss)
        *mss = cc->report.snd_mss;
    }
  }
  if (*mss == 0)
    *mss = 1448;
  return n ? sum / n : 0;
}

/* Loss as the sink's TCP sees it: retransmitted over sent segments. */
static gdouble
observed_loss (MtcpClient * client, guint mss, gdouble * n_segments)
{
  GList *l;
  gdouble retrans = 0, segments = 0;

  for (l = client->conns; l; l = l->next) {
    ClientConn *cc = l->data;
    if (cc->report_us) {
      retrans += cc->report.total_retrans;
      segments += (gdouble) cc->report.bytes_acked / mss +
          cc->report.total_retrans;
    }
  }
  *n_segments = segments;
  return segments > 0 ? retrans / segments : 0;
}

static gdouble
target_rate (MtcpClient * client)
{
  const MtcpControlConfig *c = &client->config.control;
  GList *l;
  guint64 stream = 0;

  for (l = client->conns; l; l = l->next) {
    ClientConn *cc = l->data;
    if (cc->report_us)
      stream = MAX (stream, cc->report.stream_bitrate);
  }
  return mtcp_adjust_window_desired (c->target_bitrate / 8.0, stream / 8.0,
      c->headroom);
}

static void
apply_windows (MtcpClient * client)
{
  GList *l;
  guint i = 0, mss;

  mean_rtt (client, &mss);
  for (l = client->conns; l && i < client->window.n; l = l->next) {
    ClientConn *cc = l->data;
    if (cc->state != CONN_READY)
      continue;
    cc->window_bytes = client->window.windows[i++] * mss;
    mtcp_tcp_set_window_clamp (cc->conn->socket, cc->window_bytes);
  }
}

/* connections=0: ParS's model (Eq. 19) gives the starting count once the
 * sinks have reported enough segments for a loss rate; a connection
 * controller, if any, takes over from there. */
static gboolean
starting_count_known (MtcpClient * client)
{
  return client->config.connections != 0 || client->pars_done;
}

/* Every connection that has reported runs a congestion control whose rate
 * loss does not bound (bbr at the sink). */
static gboolean
sender_ignores_loss (MtcpClient * client)
{
  gboolean reported = FALSE;
  GList *l;

  for (l = client->conns; l; l = l->next) {
    ClientConn *cc = l->data;
    if (!cc->report_us)
      continue;
    if (!(cc->report.flags & MTCP_REPORT_RATE_IGNORES_LOSS))
      return FALSE;
    reported = TRUE;
  }
  return reported;
}

static void
pars_starting_count (MtcpClient * client, gdouble rtt, guint mss)
{
  const MtcpControlConfig *c = &client->config.control;
  gdouble segments, loss;

  if (sender_ignores_loss (client)) {
    /* Eq. 19 is loss-based TCP's rate: with the loss it would open tens of
     * bbr connections where one carries the stream and more only lose
     * more (docs/benchmarks.md, bbr); loss does not bound bbr's rate, so
     * the model's answer is the one for a path without loss */
    client->wanted = mtcp_pars_connections (client->target_Bps * 8, rtt, 0,
        mss, MTCP_PARS_PHI_RENO, fewest_connections (client),
        c->max_connections);
    client->pars_done = TRUE;
    g_snprintf (client->conn_reason, sizeof (client->conn_reason),
        "ParS Eq. 19 without loss: the sink's congestion control does not "
        "slow down for loss (bbr) -> %u connections", client->wanted);
    GST_INFO ("%s", client->conn_reason);
    return;
  }
  loss = observed_loss (client, mss, &segments);
  if (!mtcp_pars_loss_known (segments, loss * segments))
    return;
  /* the path's RTT, not one our own flows inflated filling a queue: on a
   * link slower than the stream, loss and RTT both come from that queue,
   * and more flows only fill it further (docs/benchmarks.md, cellular) */
  if (client->least_rtt_us > 0)
    rtt = MIN (rtt, client->least_rtt_us / 1e6);
  client->wanted = mtcp_pars_connections (client->target_Bps * 8, rtt,
      loss, mss, MTCP_PARS_PHI_RENO, fewest_connections (client),
      c->max_connections);
  client->pars_done = TRUE;
  g_snprintf (client->conn_reason, sizeof (client->conn_reason),
      "ParS Eq. 19: %.0f bit/s, RTT %.0f ms, loss %.4f -> %u connections",
      client->target_Bps * 8, rtt * 1e3, loss, client->wanted);
  GST_INFO ("%s (from %.0f segments)", client->conn_reason, segments);
}

/* MULTFRC's IIAD (Eq. 7) averages m RTT samples taken once per round trip
 * (at most as often as the sink reports), not once per sampling interval. */
static void
rtt_control_tick (MtcpClient * client, gint64 now, gdouble rtt)
{
  const MtcpControlConfig *c = &client->config.control;

  if (c->connections != MTCP_CONNECTION_CONTROL_RTT ||
      !starting_count_known (client))
    return;
  if (!client->multfrc_started) {
    MtcpMultfrcParams mp = { c->iiad_alpha, c->iiad_beta, c->iiad_gamma,
      c->iiad_reports, fewest_connections (client), c->max_connections
    };
    mtcp_multfrc_init (&client->multfrc, &mp, MAX (client->wanted, 1));
    client->multfrc_started = TRUE;
    client->rtt_sample_us = now;
    return;
  }
  if (now - client->rtt_sample_us < MAX (rtt, REPORT_INTERVAL_S) * 1e6)
    return;
  client->rtt_sample_us = now;
  if (mtcp_multfrc_add_rtt (&client->multfrc, rtt)) {
    client->wanted = mtcp_multfrc_connections (&client->multfrc);
    g_strlcpy (client->conn_reason, client->multfrc.reason,
        sizeof (client->conn_reason));
    GST_DEBUG ("MULTFRC: %s; %u connections wanted", client->conn_reason,
        client->wanted);
  }
}

/* Every sampling interval: measure, then VariedConnVariedWinSize (Alg. 3):
 * the connection count first, then the windows of the ones there are. */
static void
controller_tick (MtcpClient * client, gint64 now)
{
  const MtcpControlConfig *c = &client->config.control;
  guint mss, ready;
  gdouble rtt = mean_rtt (client, &mss), interval, elapsed, sample;
  gboolean network_limited, counted;

  if (rtt <= 0)
    return;                     /* no REPORT yet */
  rtt_control_tick (client, now, rtt);
  if (!starting_count_known (client) && target_rate (client) > 0) {
    /* ParS's count as soon as there is loss to go on, not at the end of a
     * sampling interval (6 RTTs): a live stream is backing up meanwhile */
    client->target_Bps = target_rate (client);
    pars_starting_count (client, rtt, mss);
    if (starting_count_known (client)) {
      apply_connection_count (client);
      /* the controllers measure the new count from a fresh interval */
      client->interval_start_us = 0;
    }
  }
  interval = c->sampling_interval_ms ? c->sampling_interval_ms / 1000.0 :
      MAX (6 * rtt, 0.1);
  if (client->interval_start_us == 0) {
    client->interval_start_us = now;
    client->interval_bytes_mark = client->payload_received;
    client->interval_backlog = 0;
    return;
  }
  elapsed = (now - client->interval_start_us) / 1e6;
  if (elapsed < interval)
    return;
  /* T_m in the stream's own bytes, as the sink measures its rate: frame
   * heads and copies a stuck frame was sent again in are not throughput */
  sample = (client->payload_received - client->interval_bytes_mark) / elapsed;
  client->interval_start_us = now;
  client->interval_bytes_mark = client->payload_received;
  client->target_Bps = target_rate (client);
  /* more than 50 ms of stream waiting at the sender: the path is the limit */
  network_limited = client->interval_backlog > client->target_Bps * 0.05;
  client->interval_backlog = 0;
  if (client->target_Bps <= 0)
    return;                     /* the sink has not measured the stream yet */
  ready = count_conns (client, TRUE);

  if (!client->control_started) {
    MtcpAdjustWindowParams wp = { c->smoothing, c->guard, c->spike_factor,
      mss
    };
    MtcpAdjustConnParams cp = { c->conn_beta, c->congestion_factor };
    mtcp_adjust_window_init (&client->window, &wp, MAX (ready, 1),
        client->target_Bps, rtt);
    mtcp_adjust_conn_init (&client->conn_control, &cp);
    client->control_started = TRUE;
  }
  mtcp_adjust_window_set_target (&client->window, client->target_Bps);

  counted = starting_count_known (client);
  switch (c->connections) {
    case MTCP_CONNECTION_CONTROL_FIXED:
      break;                    /* the property, or ParS's count above */
    case MTCP_CONNECTION_CONTROL_CONGESTION:{
      gint d;
      if (!counted)
        break;                  /* Alg. 2 starts from ParS's count */
      d = mtcp_adjust_conn_update (&client->conn_control,
          mtcp_adjust_window_congestion_ratio (&client->window, rtt),
          client->window.measured < 0 ? sample : client->window.measured,
          client->target_Bps, network_limited);
      client->wanted = CLAMP ((gint) count_conns (client, FALSE) + d,
          (gint) fewest_connections (client), (gint) c->max_connections);
      g_strlcpy (client->conn_reason, client->conn_control.reason,
          sizeof (client->conn_reason));
      break;
    }
    case MTCP_CONNECTION_CONTROL_RTT:
      break;                    /* rtt_control_tick, once per round trip */
  }
  apply_connection_count (client);

  ready = count_conns (client, TRUE);
  if (c->window == MTCP_WINDOW_CONTROL_ADJUST && ready > 0) {
    if (client->window.n != ready)
      mtcp_adjust_window_set_connections (&client->window, ready);
    mtcp_adjust_window_update (&client->window, sample, rtt, network_limited);
    apply_windows (client);
  } else if (c->window == MTCP_WINDOW_CONTROL_NONE) {
    /* keep T_m measured for the stats and the connection controllers */
    client->window.measured = client->window.measured < 0 ? sample :
        c->smoothing * client->window.measured + (1 - c->smoothing) * sample;
  }
  GST_DEBUG ("control: T_m %.0f B/s (sample %.0f), T_d %.0f B/s, RTT %.1f ms, "
      "%s, %u connections wanted; windows: %s; count: %s",
      client->window.measured, sample, client->target_Bps, rtt * 1e3,
      network_limited ? "network-limited" : "sender-limited", client->wanted,
      client->window.reason, client->conn_reason);
}

/* ---- feedback and stats ---- */

static void
send_feedback (MtcpClient * client, ClientConn * cc, gint64 now_us)
{
  MtcpFeedback fb;
  MtcpReorderStats rs;
  GstClockTime first = mtcp_reorder_first_deadline (client->reorder);
  GstClockTime now = (GstClockTime) now_us * GST_USECOND;

  mtcp_reorder_get_stats (client->reorder, &rs);
  memset (&fb, 0, sizeof (fb));
  fb.highest_in_order = mtcp_reorder_highest_in_order (client->reorder);
  fb.buffered_bytes = rs.bytes;
  fb.buffered_time = GST_CLOCK_TIME_IS_VALID (first) && first > now ?
      first - now : 0;
  if (cc->report_us) {
    fb.echo_sink_time_us = cc->report.sink_time_us;
    fb.echo_delay_us = now_us - cc->report_us;
  }
  mtcp_connection_queue (cc->conn, mtcp_out_frame_new_feedback (&fb));
}

static GstStructure *
build_stats (MtcpClient * client)
{
  MtcpReorderStats rs;
  GValue conns = G_VALUE_INIT;
  GstStructure *s;
  GList *l;
  guint ready = 0, mss;
  guint64 stream_bitrate = 0;
  gdouble late_fraction;

  mtcp_reorder_get_stats (client->reorder, &rs);
  g_value_init (&conns, GST_TYPE_ARRAY);
  for (l = client->conns; l; l = l->next) {
    ClientConn *cc = l->data;
    GValue v = G_VALUE_INIT;
    GstStructure *cs = gst_structure_new ("connection",
        "index", G_TYPE_UINT, cc->index,
        "id", G_TYPE_UINT, cc->id,
        "state", G_TYPE_STRING, conn_state_name (cc->state),
        "bytes-received", G_TYPE_UINT64, cc->conn->bytes_received,
        "buffers-received", G_TYPE_UINT64, cc->buffers_received,
        "rtt", G_TYPE_UINT, cc->report.rtt_us,
        "cwnd", G_TYPE_UINT, cc->report.snd_cwnd,
        "mss", G_TYPE_UINT, cc->report.snd_mss,
        "retransmits", G_TYPE_UINT, cc->report.total_retrans,
        "window", G_TYPE_UINT, cc->window_bytes,
        "path", G_TYPE_INT, cc->local,
        NULL);
    if (cc->state == CONN_READY)
      ready++;
    if (cc->report_us)
      stream_bitrate = cc->report.stream_bitrate;
    g_value_init (&v, GST_TYPE_STRUCTURE);
    g_value_take_boxed (&v, cs);
    gst_value_array_append_and_take_value (&conns, &v);
  }
  late_fraction = rs.released + rs.skipped > 0 ?
      (gdouble) rs.skipped / (gdouble) (rs.released + rs.skipped) : 0.0;
  s = gst_structure_new ("multitcpsrc-stats",
      "session-id", G_TYPE_STRING,
      client->session_str ? client->session_str : "",
      "bitrate", G_TYPE_UINT64, client->bitrate,
      "stream-bitrate", G_TYPE_UINT64, stream_bitrate,
      "bytes-received", G_TYPE_UINT64, client->bytes_received,
      "buffers-received", G_TYPE_UINT64, client->buffers_received,
      "buffers-pushed", G_TYPE_UINT64, client->buffers_pushed,
      "bytes-pushed", G_TYPE_UINT64, client->bytes_pushed,
      "buffers-late", G_TYPE_UINT64, client->late,
      "buffers-skipped", G_TYPE_UINT64, rs.skipped,
      "buffers-sender-dropped", G_TYPE_UINT64, rs.sender_skipped,
      "buffers-duplicate", G_TYPE_UINT64, client->duplicates,
      "buffers-overflow", G_TYPE_UINT64, rs.overflow,
      "skip-ranges", G_TYPE_UINT, mtcp_reorder_n_ranges (client->reorder),
      "late-fraction", G_TYPE_DOUBLE, late_fraction,
      "skew", G_TYPE_DOUBLE, mtcp_skew_get_ppm (client->skew),
      "skew-valid", G_TYPE_BOOLEAN, mtcp_skew_is_valid (client->skew),
      "drift-correction", G_TYPE_INT64, client->mapped &&
      client->config.drift_correction ?
      mtcp_skew_correction (client->skew, client->last_sender_time) :
      (gint64) 0,
      "reorder-depth", G_TYPE_UINT64, rs.depth,
      "reorder-bytes", G_TYPE_UINT64, rs.bytes,
      "n-connections", G_TYPE_UINT, ready,
      "connections-lost", G_TYPE_UINT64, client->connections_lost,
      "reconnects", G_TYPE_UINT64, client->reconnects,
      "outage-probes", G_TYPE_UINT64, client->outage_probes,
      "sessions", G_TYPE_UINT64, client->sessions_started + 1,
      "protocol-errors", G_TYPE_UINT64, client->protocol_errors,
      "target-bitrate", G_TYPE_UINT64, (guint64) (client->target_Bps * 8),
      "measured-bitrate", G_TYPE_UINT64, (guint64) (client->control_started &&
          client->window.measured > 0 ? client->window.measured * 8 : 0),
      "wanted-connections", G_TYPE_UINT, client->wanted,
      "rtt", G_TYPE_UINT, (guint) (mean_rtt (client, &mss) * 1e6),
      "window-sum", G_TYPE_UINT, client->control_started ?
      mtcp_adjust_window_sum (&client->window) : 0,
      "window-decision", G_TYPE_STRING, client->window.reason,
      "connection-decision", G_TYPE_STRING, client->conn_reason, NULL);
  gst_structure_take_value (s, "connections", &conns);
  return s;
}

/* The connection whose FEEDBACK is oldest carries this tick's. */
static ClientConn *
feedback_carrier (MtcpClient * client)
{
  ClientConn *oldest = NULL;
  GList *l;

  for (l = client->conns; l; l = l->next) {
    ClientConn *cc = l->data;
    if (cc->state == CONN_READY && (oldest == NULL ||
            cc->feedback_us < oldest->feedback_us))
      oldest = cc;
  }
  return oldest;
}


/* client->lock held. A connection silent for idle-timeout is dead when the
 * sink has been heard on another for idle-timeout meanwhile (a half-open
 * one). Every connection silent at once is an outage of the path (no
 * coverage): TCP carries on when it returns, where closing and
 * reconnecting would storm a dead path, so they wait up to OUTAGE_WAIT_US
 * (and `timeout` for the whole session); after it, each has idle-timeout
 * from the first one heard again to come back (its retransmission timer
 * backed off during the outage). */
static gboolean
conn_presumed_dead (MtcpClient * client, ClientConn * cc, gint64 now)
{
  gint64 idle = (gint64) client->config.idle_timeout_ms * 1000;
  gint64 silent = conn_silence (cc, now);
  GList *l;

  if (silent <= idle)
    return FALSE;
  if (silent > MAX (idle, OUTAGE_WAIT_US))
    return TRUE;
  for (l = client->conns; l; l = l->next) {
    ClientConn *other = l->data;
    if (other != cc && other->state == CONN_READY &&
        conn_silence (other, now) <= idle / 2 &&
        now - other->heard_since_us >= idle)
      return TRUE;
  }
  return FALSE;
}


/* client->lock held. Every ready connection silent for PROBE_AFTER_US: the
 * path is (or was) dark. After an outage TCP's retransmission timers,
 * backed off during it, keep the old connections silent for seconds more;
 * a new connection every PROBE_INTERVAL_US, its SYN on a fresh timer, is
 * the first through when the path returns. The sink puts the stream on it
 * at once (the others are blocked), and the count goes back down by
 * retiring the silent ones. One probe at a time; one that got no answer
 * in PROBE_INTERVAL_US makes way for the next (not a failure). */
static void
probe_dark_path (MtcpClient * client, gint64 now)
{
  ClientConn *pending = NULL, *probe;
  guint ready = 0;
  GList *l;

  /* listening, the sink dials: its own new calls find the path back */
  if (!client->running || client->gave_up || client->session_gone ||
      client->connector)
    return;
  for (l = client->conns; l; l = l->next) {
    ClientConn *cc = l->data;
    if (cc->state == CONN_READY) {
      ready++;
      if (conn_silence (cc, now) <= PROBE_AFTER_US)
        return;                 /* the path works */
    } else if (cc->state == CONN_CONNECTING || cc->state == CONN_HANDSHAKE) {
      if (!cc->probe || cc->state == CONN_HANDSHAKE)
        return;                 /* one on its way already */
      pending = cc;
    }
  }
  if (ready == 0 || now < client->next_probe_us)
    return;
  if (pending)
    client_close_conn (client, pending, "outage probe: no answer yet");
  probe = open_connection (client);
  client->next_probe_us = now + PROBE_INTERVAL_US;
  if (probe == NULL)
    return;
  probe->probe = TRUE;
  client->outage_probes++;
  GST_INFO ("no connection heard from the sink for %" G_GINT64_FORMAT
      " ms: probing the path with connection %u",
      (gint64) PROBE_AFTER_US / 1000, probe->index);
}

static gboolean
on_tick (gpointer data)
{
  MtcpClient *client = data;
  gint64 now = g_get_monotonic_time ();
  GList *l, *next;
  GstStructure *stats = NULL;
  ClientConn *carrier;

  if (!client->running)
    return G_SOURCE_REMOVE;     /* stopping */
  g_mutex_lock (&client->lock);
  carrier = feedback_carrier (client);
  for (l = client->conns; l; l = next) {
    ClientConn *cc = l->data;
    GError *err = NULL;
    MtcpIoResult r;

    next = l->next;
    if (cc->state != CONN_READY) {
      /* listening: a caller that does not finish its handshake */
      if (cc->accepted && cc->state != CONN_RETIRING &&
          now - cc->conn->created_us > LISTEN_HANDSHAKE_TIMEOUT_US)
        client_close_conn (client, cc, "the caller did not finish its "
            "handshake");
      continue;
    }
    /* the sink sends REPORT every 400 ms at least: silence means a
     * half-open one */
    if (client->config.idle_timeout_ms > 0 &&
        conn_presumed_dead (client, cc, now)) {
      client_close_conn (client, cc, "nothing from the sink: connection "
          "presumed dead");
      continue;
    }
    if (cc == carrier || now - cc->feedback_us >= FEEDBACK_KEEPALIVE_US) {
      send_feedback (client, cc, now);
      cc->feedback_us = now;
    }
    r = mtcp_connection_flush (cc->conn, &err);
    if (r == MTCP_IO_CLOSED || r == MTCP_IO_ERROR) {
      client_close_conn (client, cc, err ? err->message : "write failed");
      g_clear_error (&err);
      continue;
    }
    mtcp_connection_want_write (cc->conn, r == MTCP_IO_BLOCKED);
  }
  if (now - client->rate_since_us >= G_USEC_PER_SEC) {
    client->bitrate = (client->bytes_received - client->rate_bytes_mark) * 8 *
        G_USEC_PER_SEC / (now - client->rate_since_us);
    client->rate_bytes_mark = client->bytes_received;
    client->rate_since_us = now;
  }
  controller_tick (client, now);
  probe_dark_path (client, now);
  keep_connection_count (client, now);
  if (client->config.timeout_s > 0 && client->last_data_us > 0 &&
      count_conns (client, TRUE) > 0 &&
      now - client->last_data_us >
      (gint64) client->config.timeout_s * G_USEC_PER_SEC) {
    client_fail (client, g_error_new (G_IO_ERROR, G_IO_ERROR_TIMED_OUT,
            "no data from %s:%u for %u s", client->config.host,
            client->config.port, client->config.timeout_s));
  }
  if (client->stats_func && client->config.stats_interval_ms > 0 &&
      now - client->stats_posted_us >=
      (gint64) client->config.stats_interval_ms * 1000) {
    client->stats_posted_us = now;
    stats = build_stats (client);
  }
  reap (client);
  g_mutex_unlock (&client->lock);
  if (stats)
    client->stats_func (stats, client->stats_data);
  return G_SOURCE_CONTINUE;
}

/* ---- listening ---- */

/* The I/O thread, no lock held: a sink called. It is handled as a
 * connection we dialed that just connected: TLS as the client, then
 * HELLO (a fresh session while we have none). */
static void
on_accepted (GSocket * sock, gpointer user_data)
{
  MtcpClient *client = user_data;
  ClientConn *cc, *oldest = NULL;
  guint pending = 0, open = 0;
  GList *l;

  g_mutex_lock (&client->lock);
  for (l = client->conns; l; l = l->next) {
    ClientConn *other = l->data;
    open++;
    if (other->state == CONN_CONNECTING || other->state == CONN_HANDSHAKE) {
      pending++;
      if (oldest == NULL || other->conn->created_us <
          oldest->conn->created_us)
        oldest = other;
    }
  }
  if (!client->running || open >= 2 * MAX (client->config.control.
          max_connections, 1) + LISTEN_MAX_PENDING) {
    GST_DEBUG ("at the limit of open connections: a new call is closed");
    g_socket_close (sock, NULL);
    g_object_unref (sock);
    g_mutex_unlock (&client->lock);
    return;
  }
  if (pending >= LISTEN_MAX_PENDING)
    client_close_conn (client, oldest, "too many calls in their handshake, "
        "this is the oldest");
  cc = conn_new (client, sock, CONN_CONNECTING, -1, TRUE);
  g_object_unref (sock);
  cc->fresh = client->session_gone;
  GST_DEBUG ("call from %s: connection %u%s", cc->conn->peer, cc->index,
      cc->fresh ? ", for a new session" : "");
  mtcp_connection_attach (cc->conn, client->io.context, on_conn_event, client);
  /* connected already: the handshake starts at the first dispatch */
  mtcp_connection_want_write (cc->conn, TRUE);
  reap (client);
  g_mutex_unlock (&client->lock);
}

/* The I/O thread, no lock held: accept () ran out of descriptors. */
static void
on_accept_failed (const GError * error, gboolean exhausted, guint backoff_ms,
    gpointer user_data)
{
  GST_WARNING ("cannot accept calls (%s): trying again in %u ms",
      error->message, backoff_ms);
}

/* ---- lifecycle ---- */

/* The first connection, blocking: its WELCOME names the session. */
static ClientConn *
connect_first (MtcpClient * client, GCancellable * cancellable,
    GError ** error)
{
  GSocket *sock;
  ClientConn *cc;
  MtcpFrameHeader hdr;
  const guint8 *body;
  gchar *err = NULL;
  MtcpWelcome welcome;

  sock = new_socket (client, least_used_local (client), error);
  if (sock == NULL)
    return NULL;
  g_socket_set_timeout (sock, client->config.timeout_s);
  if (!g_socket_connect (sock, client->address, cancellable, error)) {
    g_object_unref (sock);
    return NULL;
  }
  cc = conn_new (client, sock, CONN_HANDSHAKE, least_used_local (client),
      FALSE);
  g_object_unref (sock);
  if (client->tls.server_name && !mtcp_connection_handshake_tls_blocking
      (cc->conn, &client->tls, cancellable, error))
    goto failed;
  send_hello (cc, client, FALSE);
  if (mtcp_connection_flush (cc->conn, error) != MTCP_IO_DONE ||
      !mtcp_connection_read_frame_blocking (cc->conn, &hdr, &body, cancellable,
          error))
    goto failed;
  if (hdr.type == MTCP_FRAME_CHALLENGE) {
    MtcpOutFrame *f = answer_challenge (client, cc, FALSE, body, hdr.length,
        &err);
    if (f == NULL) {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_PERMISSION_DENIED, "%s", err);
      goto failed;
    }
    mtcp_connection_queue (cc->conn, f);
    if (mtcp_connection_flush (cc->conn, error) != MTCP_IO_DONE ||
        !mtcp_connection_read_frame_blocking (cc->conn, &hdr, &body,
            cancellable, error))
      goto failed;
  }
  if (hdr.type == MTCP_FRAME_PROOF) {
    if (!check_proof (client, cc, body, hdr.length, &err)) {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_PERMISSION_DENIED, "%s", err);
      goto failed;
    }
    if (!mtcp_connection_read_frame_blocking (cc->conn, &hdr, &body,
            cancellable, error))
      goto failed;
  }
  if (hdr.type == MTCP_FRAME_REFUSE) {
    MtcpRefuse refuse;
    if (mtcp_parse_refuse (body, hdr.length, &refuse, &err))
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_CONNECTION_REFUSED,
          "refused by the sink: %s", refuse.reason);
    else
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA, "%s", err);
    goto failed;
  }
  if (hdr.type == MTCP_FRAME_WELCOME && !sink_may_welcome (client, cc, &err)) {
    g_set_error (error, G_IO_ERROR, G_IO_ERROR_PERMISSION_DENIED, "%s", err);
    goto failed;
  }
  if (hdr.type != MTCP_FRAME_WELCOME ||
      !mtcp_parse_welcome (body, hdr.length, &welcome, &err)) {
    g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
        "not a multitcpsink, or an incompatible one: %s",
        err ? err : "no WELCOME");
    goto failed;
  }
  memcpy (client->session_id, welcome.session_id, MTCP_SESSION_ID_SIZE);
  client->session_str = mtcp_session_id_to_string (welcome.session_id);
  cc->id = welcome.connection_id;
  cc->state = CONN_READY;
  g_socket_set_timeout (cc->conn->socket, 0);
  GST_INFO ("joined new session %s on %s:%u", client->session_str,
      client->config.host, client->config.port);
  g_free (err);
  return cc;

failed:
  if (!client->tls.server_name && error && *error &&
      g_error_matches (*error, G_IO_ERROR, G_IO_ERROR_CONNECTION_CLOSED))
    g_prefix_error (error, "the sink closed the connection before it "
        "answered HELLO (does it want tls=true?): ");
  g_free (err);
  client->conns = g_list_remove (client->conns, cc);
  mtcp_connection_free (cc->conn);
  g_free (cc);
  return NULL;
}

/* The I/O thread's timers, then the thread, after @first (a dialed
 * connection, already joined) or the listener was put on its context. */
static void
start_io (MtcpClient * client)
{
  mtcp_io_thread_add_timeout (&client->io,
      MAX (client->config.feedback_interval_ms, 10), on_tick, client);
  g_main_context_invoke (client->io.context, open_more_connections, client);
  client->running = TRUE;
  client->flushing = FALSE;
  mtcp_io_thread_start (&client->io, "multitcpsrc-io");
}

/* Listening: nothing to wait for here; the first call opens the session
 * (pop waits for it). */
static gboolean
start_listening (MtcpClient * client, GError ** error)
{
  client->connector = mtcp_connector_new_listener (client->config.host,
      client->config.port, error);
  if (client->connector == NULL || !setup_tls (client, error))
    return FALSE;
  /* no name to check a caller's certificate against, unless given one */
  if (client->tls.server_name && !(client->config.tls_server_name &&
          *client->config.tls_server_name))
    client->tls.validation_flags &= ~G_TLS_CERTIFICATE_BAD_IDENTITY;
  client->session_gone = TRUE;
  mtcp_io_thread_init (&client->io);
  client->rate_since_us = client->last_data_us = g_get_monotonic_time ();
  mtcp_connector_start (client->connector, client->io.context, on_accepted,
      on_accept_failed, client);
  start_io (client);
  GST_INFO ("listening on %s for the sink's calls",
      mtcp_connector_describe (client->connector));
  return TRUE;
}

guint
mtcp_client_get_port (MtcpClient * client)
{
  return client->connector ? mtcp_connector_get_port (client->connector) :
      client->config.port;
}

gboolean
mtcp_client_start (MtcpClient * client, GCancellable * cancellable,
    GError ** error)
{
  ClientConn *first;

  if (client->config.listener)
    return start_listening (client, error);

  client->address = mtcp_resolve_address (client->config.host,
      client->config.port, cancellable, error);
  if (client->address == NULL || !parse_local_addresses (client, error) ||
      !setup_tls (client, error))
    return FALSE;
  {
    gboolean had_key = client->auth_key.valid;
    GError *err = NULL;

    first = connect_first (client, cancellable, &err);
    /* deriving the key took longer than the sink's handshake timeout (a
     * slow CPU): it is kept for the sink's salt, so the next try is quick */
    if (first == NULL && !had_key && client->auth_key.valid &&
        !g_error_matches (err, G_IO_ERROR, G_IO_ERROR_PERMISSION_DENIED) &&
        !g_error_matches (err, G_IO_ERROR, G_IO_ERROR_CONNECTION_REFUSED) &&
        !g_error_matches (err, G_IO_ERROR, G_IO_ERROR_CANCELLED)) {
      GST_INFO ("the first connection failed after the key derivation (%s): "
          "once more with the key", err->message);
      g_clear_error (&err);
      first = connect_first (client, cancellable, &err);
    }
    if (first == NULL) {
      g_propagate_error (error, err);
      return FALSE;
    }
  }

  mtcp_io_thread_init (&client->io);
  client->rate_since_us = client->last_data_us = g_get_monotonic_time ();
  mtcp_connection_attach (first->conn, client->io.context, on_conn_event, client);
  /* TLS may hold frames that came with WELCOME */
  if (first->conn->tls)
    mtcp_connection_poke_input (first->conn);
  start_io (client);
  return TRUE;
}

void
mtcp_client_stop (MtcpClient * client)
{
  if (!client->running)
    return;
  g_mutex_lock (&client->lock);
  client->running = FALSE;
  client->flushing = TRUE;
  g_cond_broadcast (&client->cond);
  g_mutex_unlock (&client->lock);

  mtcp_io_thread_stop (&client->io);
  if (client->connector)
    mtcp_connector_stop (client->connector);
  /* the I/O thread is gone; stats may still be read from another thread */
  g_mutex_lock (&client->lock);
  while (client->conns)
    client_close_conn (client, client->conns->data, "source stopping");
  reap (client);
  g_mutex_unlock (&client->lock);
  /* TLS handshakes cancelled above end in the I/O context: run it until
   * they did (our sources, seeing running FALSE, only remove themselves) */
  mtcp_connection_wait_orphaned_handshakes (client->io.context,
      &client->tls_orphans, STOP_HANDSHAKES_WAIT_US);
  mtcp_io_thread_clear (&client->io);
}

void
mtcp_client_set_flushing (MtcpClient * client, gboolean flushing)
{
  g_mutex_lock (&client->lock);
  client->flushing = flushing;
  g_cond_broadcast (&client->cond);
  g_mutex_unlock (&client->lock);
}

MtcpPopResult
mtcp_client_pop (MtcpClient * client, MtcpItem * out, GError ** error)
{
  MtcpPopResult result;

  g_mutex_lock (&client->lock);
  for (;;) {
    GstClockTime wake_at = GST_CLOCK_TIME_NONE;
    GstClockTime now = mtcp_client_now ();
    gboolean discont = FALSE;
    guint64 seq;
    MtcpItem *item;

    if (client->flushing) {
      result = MTCP_POP_FLUSHING;
      break;
    }
    /* once nothing more can arrive, every gap is final */
    item = mtcp_reorder_pop (client->reorder,
        client->gave_up && client->all_closed ? G_MAXUINT64 - 1 : now, &seq,
        &discont, &wake_at);
    if (item) {
      *out = *item;
      out->discont = discont || client->reset_discont;
      client->reset_discont = FALSE;
      g_free (item);
      if (out->kind == MTCP_ITEM_BUFFER) {
        client->buffers_pushed++;
        client->bytes_pushed += gst_buffer_get_size (out->buffer);
      }
      result = MTCP_POP_OK;
      break;
    }
    if (client->error) {
      g_propagate_error (error, client->error);
      client->error = NULL;
      result = MTCP_POP_ERROR;
      break;
    }
    if (client->all_closed && client->gave_up) {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_CONNECTION_CLOSED,
          "all connections to %s:%u closed, %u attempts to reconnect failed",
          client->config.host, client->config.port, client->failures);
      result = MTCP_POP_ERROR;
      break;
    }
    if (GST_CLOCK_TIME_IS_VALID (wake_at)) {
      gint64 until = g_get_monotonic_time () +
          (gint64) ((wake_at > now ? wake_at - now : 0) / GST_USECOND);
      g_cond_wait_until (&client->cond, &client->lock, until);
    } else {
      g_cond_wait_until (&client->cond, &client->lock,
          g_get_monotonic_time () + 200 * G_TIME_SPAN_MILLISECOND);
    }
  }
  g_mutex_unlock (&client->lock);
  return result;
}

GstStructure *
mtcp_client_get_stats (MtcpClient * client)
{
  GstStructure *s;

  g_mutex_lock (&client->lock);
  s = build_stats (client);
  g_mutex_unlock (&client->lock);
  return s;
}

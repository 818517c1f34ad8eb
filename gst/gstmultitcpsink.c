/* multitcp
 * Copyright (C) 2026 the multitcp authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
/**
 * SECTION:element-multitcpsink
 * @title: multitcpsink
 *
 * Serves a live stream to multitcpsrc receivers, each over a session of
 * several TCP connections. Buffers go into one shared queue; every
 * connection that its socket lets send takes the next frames of its
 * session, so faster connections carry more (DMP-streaming). Caps,
 * timestamps (as running time), buffer flags and stream headers travel
 * with the data, so no payloader or muxer is needed.
 *
 * ## Example launch line
 * |[
 * gst-launch-1.0 videotestsrc is-live=true ! x264enc tune=zerolatency key-int-max=30 ! h264parse ! multitcpsink port=5600
 * ]|
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstmultitcpsink.h"

GST_DEBUG_CATEGORY_STATIC (multitcpsink_debug);
#define GST_CAT_DEFAULT multitcpsink_debug

#define DEFAULT_HOST "0.0.0.0"
#define DEFAULT_PORT 5600
#define DEFAULT_MODE GST_MULTI_TCP_MODE_LISTENER
#define DEFAULT_RETRY 30
#define DEFAULT_WAIT_FOR_CONNECTION FALSE
#define DEFAULT_SCHEDULER MTCP_SCHEDULER_DYNAMIC
#define DEFAULT_MAX_SESSION_BYTES (32 * 1024 * 1024)
#define DEFAULT_MAX_SESSION_LAG (5 * GST_SECOND)
#define DEFAULT_NOTSENT_LOWAT (64 * 1024)
#define DEFAULT_PACING FALSE
/* bbr: earlier than cubic on the cellular set with fewer wire bytes
 * (docs/experiments/cellular.md); a preference, the system's own where the
 * kernel refuses it, without a warning */
#define DEFAULT_CONGESTION_CONTROL "bbr"
#define DEFAULT_MAX_SESSIONS 64
/* carrier-grade NAT and firewalls limit connections per host */
#define DEFAULT_MAX_CONNECTIONS 16
#define DEFAULT_HANDSHAKE_TIMEOUT 5000
#define DEFAULT_MAX_PENDING_HANDSHAKES 64
#define DEFAULT_MAX_FRAME_SIZE MTCP_MAX_FRAME_DEFAULT
#define DEFAULT_SESSION_TIMEOUT 10000
#define DEFAULT_IDLE_TIMEOUT 3000
/* SRT's default overhead bandwidth, for the same job: sending again */
#define DEFAULT_COPY_OVERHEAD 25
#define DEFAULT_BITRATE_CONTROL GST_MULTI_TCP_BITRATE_CONTROL_NONE
#define DEFAULT_BITRATE_FOLLOWS GST_MULTI_TCP_BITRATE_FOLLOWS_WEAKEST
#define DEFAULT_BITRATE_PROBE GST_MULTI_TCP_BITRATE_PROBE_AFTER_OUTAGE
#define DEFAULT_MIN_BITRATE 300000
#define DEFAULT_MAX_BITRATE 0
#define REPORT_INTERVAL_MS 200
#define EOS_DRAIN_TIMEOUT (10 * G_USEC_PER_SEC)

enum {
  PROP_0,
  PROP_HOST,
  PROP_PORT,
  PROP_CURRENT_PORT,
  PROP_SCHEDULER,
  PROP_MAX_SESSION_BYTES,
  PROP_MAX_SESSION_LAG,
  PROP_NOTSENT_LOWAT,
  PROP_CONGESTION_CONTROL,
  PROP_PACING,
  PROP_MAX_SESSIONS,
  PROP_MAX_CONNECTIONS,
  PROP_HANDSHAKE_TIMEOUT,
  PROP_MAX_FRAME_SIZE,
  PROP_STATS,
  PROP_SESSION_TIMEOUT,
  PROP_IDLE_TIMEOUT,
  PROP_COPY_OVERHEAD,
  PROP_PASSPHRASE,
  PROP_STREAM_ID,
  PROP_LOCAL_ADDRESSES,
  PROP_INTERFACES,
  PROP_TLS,
  PROP_TLS_CERTIFICATE,
  PROP_TLS_CERTIFICATE_FILE,
  PROP_TLS_KEY_FILE,
  PROP_MAX_PENDING_HANDSHAKES,
  PROP_BITRATE_CONTROL,
  PROP_BITRATE_FOLLOWS,
  PROP_BITRATE_PROBE,
  PROP_MIN_BITRATE,
  PROP_MAX_BITRATE,
  PROP_MODE,
  PROP_RETRY,
  PROP_URI,
  PROP_WAIT_FOR_CONNECTION,
  PROP_TRANSFER_CONTROL,
  PROP_FRIENDLY_ALPHA,
  PROP_FRIENDLY_BETA,
  PROP_FRIENDLY_GAMMA,
  PROP_BURST_SCALE,
  PROP_BURST_RATE_SCALE,
};

static GstStaticPadTemplate sink_template = GST_STATIC_PAD_TEMPLATE ("sink",
    GST_PAD_SINK, GST_PAD_ALWAYS, GST_STATIC_CAPS_ANY);

#define GST_TYPE_MULTI_TCP_SCHEDULER (gst_multi_tcp_scheduler_get_type ())
static GType
gst_multi_tcp_scheduler_get_type (void)
{
  static GType type = 0;
  static const GEnumValue values[] = {
    {MTCP_SCHEDULER_DYNAMIC, "Every connection pulls the next frames when its "
          "socket can take them (DMP)", "dynamic"},
    {MTCP_SCHEDULER_ROUND_ROBIN, "Frames to connections in turn, skipping "
          "blocked ones (MultiTCP)", "round-robin"},
    {MTCP_SCHEDULER_STATIC, "Sequence number modulo the connection count "
          "(baseline)", "static"},
    {0, NULL, NULL},
  };
  if (g_once_init_enter (&type))
    g_once_init_leave (&type, g_enum_register_static ("GstMultiTcpScheduler",
            values));
  return type;
}

#define GST_TYPE_MULTI_TCP_TRANSFER_CONTROL \
  (gst_multi_tcp_transfer_control_get_type ())
static GType
gst_multi_tcp_transfer_control_get_type (void)
{
  static GType type = 0;
  static const GEnumValue values[] = {
    {MTCP_TRANSFER_GREEDY, "As fast as the connections take it", "greedy"},
    {MTCP_TRANSFER_NETWORK_FRIENDLY, "Per RTT what the receiver's playout "
          "buffer needs against the congestion level (seed 004, Eqs. 1-8)",
        "network-friendly"},
    {MTCP_TRANSFER_BURST, "A first burst, then fixed blocks with pauses "
          "(YouTube-like (i), the baseline)", "burst"},
    {0, NULL, NULL},
  };
  if (g_once_init_enter (&type))
    g_once_init_leave (&type,
        g_enum_register_static ("GstMultiTcpTransferControl", values));
  return type;
}

#define GST_TYPE_MULTI_TCP_BITRATE_CONTROL \
  (gst_multi_tcp_bitrate_control_get_type ())
static GType
gst_multi_tcp_bitrate_control_get_type (void)
{
  static GType type = 0;
  static const GEnumValue values[] = {
    {GST_MULTI_TCP_BITRATE_CONTROL_NONE, "Leave the encoder alone (the "
          "estimate is in stats and bus messages)", "none"},
    {GST_MULTI_TCP_BITRATE_CONTROL_ENCODER, "Set the upstream encoder's "
          "bitrate from the weakest receiver's estimate", "encoder"},
    {0, NULL, NULL},
  };
  if (g_once_init_enter (&type))
    g_once_init_leave (&type,
        g_enum_register_static ("GstMultiTcpBitrateControl", values));
  return type;
}

#define GST_TYPE_MULTI_TCP_BITRATE_FOLLOWS \
  (gst_multi_tcp_bitrate_follows_get_type ())
static GType
gst_multi_tcp_bitrate_follows_get_type (void)
{
  static GType type = 0;
  static const GEnumValue values[] = {
    {GST_MULTI_TCP_BITRATE_FOLLOWS_WEAKEST, "The weakest receiver: "
          "everyone gets what it can take on time", "weakest"},
    {GST_MULTI_TCP_BITRATE_FOLLOWS_STRONGEST, "The strongest receiver: the "
          "others skip what they cannot take (their lag bound)", "strongest"},
    {0, NULL, NULL},
  };
  if (g_once_init_enter (&type))
    g_once_init_leave (&type,
        g_enum_register_static ("GstMultiTcpBitrateFollows", values));
  return type;
}

#define GST_TYPE_MULTI_TCP_BITRATE_PROBE \
  (gst_multi_tcp_bitrate_probe_get_type ())
static GType
gst_multi_tcp_bitrate_probe_get_type (void)
{
  static GType type = 0;
  static const GEnumValue values[] = {
    {GST_MULTI_TCP_BITRATE_PROBE_PADDING, "Padding for a while, the encoder "
          "raised only as far as the path was seen to carry", "padding"},
    {GST_MULTI_TCP_BITRATE_PROBE_ENCODER, "The encoder raised a quarter "
          "at a time (three quarters for a receiver with 2 s of latency "
          "while the path moves), and on what TCP's windows would carry: more "
          "bitrate, more frames late when it fails", "encoder"},
    {GST_MULTI_TCP_BITRATE_PROBE_AFTER_OUTAGE, "As encoder, but after the "
          "path was dark as padding, until the encoder is back at its "
          "bitrate before or for 10 s at most", "after-outage"},
    {0, NULL, NULL},
  };
  if (g_once_init_enter (&type))
    g_once_init_leave (&type,
        g_enum_register_static ("GstMultiTcpBitrateProbe", values));
  return type;
}

#define gst_multi_tcp_sink_parent_class parent_class
static guint signals[GST_MULTI_TCP_CALLER_N_SIGNALS];

static void gst_multi_tcp_sink_uri_handler_init (gpointer iface,
    gpointer iface_data);

G_DEFINE_TYPE_WITH_CODE (GstMultiTcpSink, gst_multi_tcp_sink,
    GST_TYPE_BASE_SINK, G_IMPLEMENT_INTERFACE (GST_TYPE_URI_HANDLER,
        gst_multi_tcp_sink_uri_handler_init));

static void
gst_multi_tcp_sink_init (GstMultiTcpSink * self)
{
  self->mode = DEFAULT_MODE;
  self->callers.signals = signals;
  self->callers.peer = "receiver";
  self->retry = DEFAULT_RETRY;
  self->wait_for_connection = DEFAULT_WAIT_FOR_CONNECTION;
  self->host = g_strdup (DEFAULT_HOST);
  self->port = DEFAULT_PORT;
  self->scheduler = DEFAULT_SCHEDULER;
  self->transfer_control = MTCP_TRANSFER_GREEDY;
  self->friendly.alpha_s = MTCP_FRIENDLY_DEFAULT_ALPHA_S;
  self->friendly.beta = MTCP_FRIENDLY_DEFAULT_BETA;
  self->friendly.gamma = MTCP_FRIENDLY_DEFAULT_GAMMA;
  self->burst_scale = 1.0;
  self->max_session_bytes = DEFAULT_MAX_SESSION_BYTES;
  self->max_session_lag = DEFAULT_MAX_SESSION_LAG;
  self->notsent_lowat = DEFAULT_NOTSENT_LOWAT;
  self->pacing = DEFAULT_PACING;
  self->congestion_control = g_strdup (DEFAULT_CONGESTION_CONTROL);
  self->max_sessions = DEFAULT_MAX_SESSIONS;
  self->max_connections = DEFAULT_MAX_CONNECTIONS;
  self->handshake_timeout = DEFAULT_HANDSHAKE_TIMEOUT;
  self->max_pending_handshakes = DEFAULT_MAX_PENDING_HANDSHAKES;
  self->max_frame_size = DEFAULT_MAX_FRAME_SIZE;
  self->session_timeout = DEFAULT_SESSION_TIMEOUT;
  self->idle_timeout = DEFAULT_IDLE_TIMEOUT;
  self->copy_overhead = DEFAULT_COPY_OVERHEAD;
  self->bitrate_control = DEFAULT_BITRATE_CONTROL;
  self->bitrate_follows = DEFAULT_BITRATE_FOLLOWS;
  self->bitrate_probe = DEFAULT_BITRATE_PROBE;
  self->min_bitrate = DEFAULT_MIN_BITRATE;
  self->max_bitrate = DEFAULT_MAX_BITRATE;
  self->upstream_live = -1;
  g_mutex_init (&self->control_lock);
  self->keyframes = mtcp_keyframe_ask_new ();
  g_mutex_init (&self->set_lock);
}

static void
gst_multi_tcp_sink_finalize (GObject * object)
{
  GstMultiTcpSink *self = GST_MULTI_TCP_SINK (object);

  g_free (self->host);
  g_free (self->passphrase);
  g_free (self->stream_id);
  g_free (self->local_addresses);
  g_free (self->interfaces);
  g_clear_object (&self->tls_certificate);
  g_free (self->tls_certificate_file);
  g_free (self->tls_key_file);
  g_free (self->congestion_control);
  g_mutex_clear (&self->control_lock);
  mtcp_keyframe_ask_free (self->keyframes);
  g_mutex_clear (&self->set_lock);
  G_OBJECT_CLASS (parent_class)->finalize (object);
}

static MtcpSendQueueLimits
limits_locked (GstMultiTcpSink * self)
{
  MtcpSendQueueLimits limits;
  limits.max_lag_bytes = self->max_session_bytes;
  limits.max_lag_time = self->max_session_lag;
  return limits;
}

static void
gst_multi_tcp_sink_set_property (GObject * object, guint prop_id,
    const GValue * value, GParamSpec * pspec)
{
  GstMultiTcpSink *self = GST_MULTI_TCP_SINK (object);
  MtcpSendQueueLimits limits;
  gboolean limits_changed = FALSE, scheduler_changed = FALSE;
  MtcpScheduler scheduler;
  MtcpServer *server;

  GST_OBJECT_LOCK (self);
  switch (prop_id) {
    case PROP_HOST:
      g_free (self->host);
      self->host = g_value_dup_string (value);
      break;
    case PROP_MODE:
      self->mode = g_value_get_enum (value);
      break;
    case PROP_RETRY:
      self->retry = g_value_get_uint (value);
      break;
    case PROP_WAIT_FOR_CONNECTION:
      self->wait_for_connection = g_value_get_boolean (value);
      break;
    case PROP_URI:
      GST_OBJECT_UNLOCK (self);
      gst_multi_tcp_uri_set_property (GST_ELEMENT (self), value);
      return;
    case PROP_PORT:
      self->port = g_value_get_int (value);
      break;
    case PROP_SCHEDULER:
      self->scheduler = g_value_get_enum (value);
      scheduler_changed = TRUE;
      break;
    case PROP_MAX_SESSION_BYTES:
      self->max_session_bytes = g_value_get_uint64 (value);
      limits_changed = TRUE;
      break;
    case PROP_MAX_SESSION_LAG:
      self->max_session_lag = g_value_get_uint64 (value);
      limits_changed = TRUE;
      break;
    case PROP_NOTSENT_LOWAT:
      self->notsent_lowat = g_value_get_uint (value);
      break;
    case PROP_CONGESTION_CONTROL:
      g_free (self->congestion_control);
      self->congestion_control = g_value_dup_string (value);
      self->congestion_control_set = TRUE;
      break;
    case PROP_PACING:
      self->pacing = g_value_get_boolean (value);
      break;
    case PROP_MAX_SESSIONS:
      self->max_sessions = g_value_get_uint (value);
      break;
    case PROP_MAX_CONNECTIONS:
      self->max_connections = g_value_get_uint (value);
      break;
    case PROP_HANDSHAKE_TIMEOUT:
      self->handshake_timeout = g_value_get_uint (value);
      break;
    case PROP_MAX_PENDING_HANDSHAKES:
      self->max_pending_handshakes = g_value_get_uint (value);
      break;
    case PROP_MAX_FRAME_SIZE:
      self->max_frame_size = g_value_get_uint (value);
      break;
    case PROP_SESSION_TIMEOUT:
      self->session_timeout = g_value_get_uint (value);
      break;
    case PROP_IDLE_TIMEOUT:
      self->idle_timeout = g_value_get_uint (value);
      break;
    case PROP_COPY_OVERHEAD:
      self->copy_overhead = g_value_get_uint (value);
      break;
    case PROP_TRANSFER_CONTROL:
      self->transfer_control = g_value_get_enum (value);
      break;
    case PROP_FRIENDLY_ALPHA:
      self->friendly.alpha_s = g_value_get_double (value);
      break;
    case PROP_FRIENDLY_BETA:
      self->friendly.beta = g_value_get_double (value);
      break;
    case PROP_FRIENDLY_GAMMA:
      self->friendly.gamma = g_value_get_double (value);
      break;
    case PROP_BURST_SCALE:
      self->burst_scale = g_value_get_double (value);
      break;
    case PROP_BURST_RATE_SCALE:
      self->burst_rate_scale = g_value_get_double (value);
      break;
    case PROP_PASSPHRASE:
      g_free (self->passphrase);
      self->passphrase = g_value_dup_string (value);
      break;
    case PROP_STREAM_ID:
      g_free (self->stream_id);
      self->stream_id = g_value_dup_string (value);
      break;
    case PROP_LOCAL_ADDRESSES:
      g_free (self->local_addresses);
      self->local_addresses = g_value_dup_string (value);
      break;
    case PROP_INTERFACES:
      g_free (self->interfaces);
      self->interfaces = g_value_dup_string (value);
      break;
    case PROP_TLS:
      self->tls = g_value_get_boolean (value);
      break;
    case PROP_TLS_CERTIFICATE:
      g_clear_object (&self->tls_certificate);
      self->tls_certificate = g_value_dup_object (value);
      break;
    case PROP_TLS_CERTIFICATE_FILE:
      g_free (self->tls_certificate_file);
      self->tls_certificate_file = g_value_dup_string (value);
      break;
    case PROP_TLS_KEY_FILE:
      g_free (self->tls_key_file);
      self->tls_key_file = g_value_dup_string (value);
      break;
    case PROP_BITRATE_CONTROL:
      self->bitrate_control = g_value_get_enum (value);
      break;
    case PROP_BITRATE_PROBE:
      self->bitrate_probe = g_value_get_enum (value);
      break;
    case PROP_BITRATE_FOLLOWS:
      self->bitrate_follows = g_value_get_enum (value);
      break;
    case PROP_MIN_BITRATE:
      self->min_bitrate = g_value_get_uint (value);
      break;
    case PROP_MAX_BITRATE:
      self->max_bitrate = g_value_get_uint (value);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
  limits = limits_locked (self);
  scheduler = self->scheduler;
  /* a reference: stop () may drop the element's meanwhile */
  server = self->server ? mtcp_server_ref (self->server) : NULL;
  GST_OBJECT_UNLOCK (self);

  /* outside the object lock: the server's thread posts messages */
  if (server && limits_changed)
    mtcp_server_set_limits (server, &limits);
  if (server && scheduler_changed)
    mtcp_server_set_scheduler (server, scheduler);
  if (server)
    mtcp_server_unref (server);
}

static void
gst_multi_tcp_sink_get_property (GObject * object, guint prop_id,
    GValue * value, GParamSpec * pspec)
{
  GstMultiTcpSink *self = GST_MULTI_TCP_SINK (object);

  if (prop_id == PROP_STATS) {
    MtcpServer *server;
    GST_OBJECT_LOCK (self);
    /* a reference: stop () may drop the element's meanwhile */
    server = self->server ? mtcp_server_ref (self->server) : NULL;
    GST_OBJECT_UNLOCK (self);
    /* outside the object lock: the server's thread posts messages */
    {
      GstStructure *st = server ? mtcp_server_get_stats (server) :
          gst_structure_new_empty ("multitcpsink-stats");
      g_mutex_lock (&self->control_lock);
      /* what the encoder has, in its own unit */
      gst_structure_set (st, "encoder-bitrate", G_TYPE_UINT64, self->encoder ?
          mtcp_encoder_get_bps (self->encoder) : (guint64) 0,
          "bitrate-changes", G_TYPE_UINT64, self->bitrate ?
          mtcp_bitrate_control_changes (self->bitrate) : (guint64) 0, NULL);
      g_mutex_unlock (&self->control_lock);
      g_value_take_boxed (value, st);
    }
    if (server)
      mtcp_server_unref (server);
    return;
  }

  GST_OBJECT_LOCK (self);
  switch (prop_id) {
    case PROP_HOST:
      g_value_set_string (value, self->host);
      break;
    case PROP_STREAM_ID:
      g_value_set_string (value, self->stream_id);
      break;
    case PROP_LOCAL_ADDRESSES:
      g_value_set_string (value, self->local_addresses);
      break;
    case PROP_INTERFACES:
      g_value_set_string (value, self->interfaces);
      break;
    case PROP_MODE:
      g_value_set_enum (value, self->mode);
      break;
    case PROP_RETRY:
      g_value_set_uint (value, self->retry);
      break;
    case PROP_WAIT_FOR_CONNECTION:
      g_value_set_boolean (value, self->wait_for_connection);
      break;
    case PROP_URI:
      GST_OBJECT_UNLOCK (self);
      g_value_take_string (value, gst_multi_tcp_uri_get (GST_ELEMENT (self)));
      return;
    case PROP_PORT:
      g_value_set_int (value, self->port);
      break;
    case PROP_CURRENT_PORT:
      g_value_set_int (value, self->current_port);
      break;
    case PROP_SCHEDULER:
      g_value_set_enum (value, self->scheduler);
      break;
    case PROP_MAX_SESSION_BYTES:
      g_value_set_uint64 (value, self->max_session_bytes);
      break;
    case PROP_MAX_SESSION_LAG:
      g_value_set_uint64 (value, self->max_session_lag);
      break;
    case PROP_NOTSENT_LOWAT:
      g_value_set_uint (value, self->notsent_lowat);
      break;
    case PROP_CONGESTION_CONTROL:
      g_value_set_string (value, self->congestion_control);
      break;
    case PROP_PACING:
      g_value_set_boolean (value, self->pacing);
      break;
    case PROP_MAX_SESSIONS:
      g_value_set_uint (value, self->max_sessions);
      break;
    case PROP_MAX_CONNECTIONS:
      g_value_set_uint (value, self->max_connections);
      break;
    case PROP_HANDSHAKE_TIMEOUT:
      g_value_set_uint (value, self->handshake_timeout);
      break;
    case PROP_MAX_PENDING_HANDSHAKES:
      g_value_set_uint (value, self->max_pending_handshakes);
      break;
    case PROP_MAX_FRAME_SIZE:
      g_value_set_uint (value, self->max_frame_size);
      break;
    case PROP_SESSION_TIMEOUT:
      g_value_set_uint (value, self->session_timeout);
      break;
    case PROP_IDLE_TIMEOUT:
      g_value_set_uint (value, self->idle_timeout);
      break;
    case PROP_COPY_OVERHEAD:
      g_value_set_uint (value, self->copy_overhead);
      break;
    case PROP_TRANSFER_CONTROL:
      g_value_set_enum (value, self->transfer_control);
      break;
    case PROP_FRIENDLY_ALPHA:
      g_value_set_double (value, self->friendly.alpha_s);
      break;
    case PROP_FRIENDLY_BETA:
      g_value_set_double (value, self->friendly.beta);
      break;
    case PROP_FRIENDLY_GAMMA:
      g_value_set_double (value, self->friendly.gamma);
      break;
    case PROP_BURST_SCALE:
      g_value_set_double (value, self->burst_scale);
      break;
    case PROP_BURST_RATE_SCALE:
      g_value_set_double (value, self->burst_rate_scale);
      break;
    case PROP_TLS:
      g_value_set_boolean (value, self->tls);
      break;
    case PROP_TLS_CERTIFICATE:
      g_value_set_object (value, self->tls_certificate);
      break;
    case PROP_TLS_CERTIFICATE_FILE:
      g_value_set_string (value, self->tls_certificate_file);
      break;
    case PROP_TLS_KEY_FILE:
      g_value_set_string (value, self->tls_key_file);
      break;
    case PROP_BITRATE_CONTROL:
      g_value_set_enum (value, self->bitrate_control);
      break;
    case PROP_BITRATE_PROBE:
      g_value_set_enum (value, self->bitrate_probe);
      break;
    case PROP_BITRATE_FOLLOWS:
      g_value_set_enum (value, self->bitrate_follows);
      break;
    case PROP_MIN_BITRATE:
      g_value_set_uint (value, self->min_bitrate);
      break;
    case PROP_MAX_BITRATE:
      g_value_set_uint (value, self->max_bitrate);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
  GST_OBJECT_UNLOCK (self);
}

/* From the I/O thread: a misbehaving peer. One bus warning per second at
 * most, so a flood of bad connections cannot flood the bus; all are in
 * the debug log and counted in stats. */
static void
on_server_warning (const gchar * message, gpointer user_data)
{
  GstMultiTcpSink *self = user_data;
  gint64 now = g_get_monotonic_time ();
  MtcpServer *server;
  gchar *gave_up;

  GST_OBJECT_LOCK (self);
  server = self->server ? mtcp_server_ref (self->server) : NULL;
  GST_OBJECT_UNLOCK (self);
  gave_up = server ? mtcp_server_gave_up (server) : NULL;
  if (server)
    mtcp_server_unref (server);
  if (gave_up) {
    /* a caller that cannot reach its receiver: render fails from now on */
    if (!g_atomic_int_exchange (&self->gave_up_posted, TRUE))
      GST_ELEMENT_ERROR (self, RESOURCE, OPEN_WRITE, ("Could not reach the "
              "receiver (retry=%u attempts failed)", self->retry), ("%s",
              gave_up));
    g_free (gave_up);
    return;
  }
  if (now - self->last_warning_us < G_USEC_PER_SEC)
    return;
  self->last_warning_us = now;
  GST_ELEMENT_WARNING (self, STREAM, FAILED, ("A receiver connection was "
          "closed"), ("%s", message));
}

/* What looking for the encoder found, to tell once no lock is held. */
typedef struct {
  gboolean missing;             /* no encoder whose bitrate we can set */
  gboolean no_max;              /* one on "auto" and no max-bitrate */
  guint64 ceiling_bps;          /* the most the encoder found will be given */
} EncoderSearch;

/* control_lock held. The first time: the encoder upstream and its
 * controller, which starts the stream at min-bitrate (@at_least) as after
 * an outage when the sink looks at the first buffer (nothing is known of
 * the path yet: a stream that started at the most and met a path that
 * carries a quarter of it was late for its first seconds, docs/
 * experiments/bitrate.md), or at the encoder's own bitrate when
 * bitrate-control was switched on later; it climbs with the estimates.
 * TRUE when the encoder is to be set now. */
static gboolean
find_encoder_locked (GstMultiTcpSink * self, guint min_bps, guint max_bps,
    gboolean at_least, EncoderSearch * search)
{
  guint64 now_bps;
  MtcpBitrateBounds bounds;

  if (self->encoder_looked_for)
    return FALSE;
  self->encoder_looked_for = TRUE;
  self->encoder = mtcp_encoder_find (GST_BASE_SINK_PAD (self));
  search->missing = self->encoder == NULL;
  if (self->encoder == NULL)
    return FALSE;
  now_bps = mtcp_encoder_get_bps (self->encoder);
  if (max_bps == 0 && now_bps == 0) {
    /* an encoder on "auto" (0) says nothing of the most to give it */
    g_clear_pointer (&self->encoder, mtcp_encoder_free);
    search->no_max = TRUE;
    return FALSE;
  }
  bounds.min_bps = min_bps;
  bounds.max_bps = max_bps ? max_bps : now_bps;
  self->encoder_ceiling_bps = MAX (bounds.min_bps, bounds.max_bps);
  self->bitrate = mtcp_bitrate_control_new (&bounds, at_least ?
      bounds.min_bps : now_bps);
  GST_INFO_OBJECT (self, "bitrate-control: %s, %" G_GUINT64_FORMAT "-%"
      G_GUINT64_FORMAT " bit/s, starting at %" G_GUINT64_FORMAT " bit/s",
      mtcp_encoder_describe (self->encoder), bounds.min_bps, bounds.max_bps,
      mtcp_bitrate_control_bps (self->bitrate));
  return mtcp_bitrate_control_bps (self->bitrate) != now_bps;
}

/* No lock held: gives the encoder the controller's bitrate as it is now,
 * under set_lock, so that of two threads' sets the last carries the last
 * decision. */
static void
apply_encoder_bitrate (GstMultiTcpSink * self)
{
  MtcpEncoder *encoder;
  guint64 bps = 0;

  g_mutex_lock (&self->set_lock);
  g_mutex_lock (&self->control_lock);
  /* the encoder lives until stop, which runs after both threads ended */
  encoder = self->encoder;
  if (self->bitrate)
    bps = mtcp_bitrate_control_bps (self->bitrate);
  g_mutex_unlock (&self->control_lock);
  if (encoder && bps) {
    GST_INFO_OBJECT (self, "encoder bitrate %" G_GUINT64_FORMAT " bit/s",
        bps);
    mtcp_encoder_set_bps (encoder, bps);
  }
  g_mutex_unlock (&self->set_lock);
}

/* No lock held: what find_encoder_locked found, told to @server (the
 * receivers size their connections for the most the encoder will be
 * given) and, if wrong, on the bus. */
static void
tell_encoder_search (GstMultiTcpSink * self, MtcpServer * server,
    const EncoderSearch * search)
{
  if (search->ceiling_bps && server)
    mtcp_server_set_stream_ceiling (server, search->ceiling_bps);
  if (search->missing)
    GST_ELEMENT_WARNING (self, STREAM, ENCODE, ("bitrate-control=encoder, "
            "but there is no video encoder upstream whose bitrate multitcpsink "
            "knows how to set"), ("looked for an element classed Codec/"
            "Encoder/Video with a bitrate or target-bitrate property"));
  if (search->no_max)
    GST_ELEMENT_WARNING (self, STREAM, ENCODE, ("bitrate-control=encoder, "
            "but the encoder upstream has no bitrate of its own to start "
            "from: set max-bitrate"), (NULL));
}

/* From the streaming thread at the first buffer, no lock held: with
 * bitrate-control=encoder the stream starts low before any receiver
 * comes, not at the most while the first estimate is measured. */
static void
start_encoder_control (GstMultiTcpSink * self)
{
  EncoderSearch search = { FALSE, FALSE, 0 };
  guint min_bps, max_bps;
  gboolean control, set;

  g_atomic_int_set (&self->encoder_started, TRUE);
  GST_OBJECT_LOCK (self);
  control = self->bitrate_control == GST_MULTI_TCP_BITRATE_CONTROL_ENCODER;
  min_bps = self->min_bitrate;
  max_bps = self->max_bitrate;
  GST_OBJECT_UNLOCK (self);
  if (!control)
    return;
  g_mutex_lock (&self->control_lock);
  set = find_encoder_locked (self, min_bps, max_bps, TRUE, &search);
  search.ceiling_bps = self->encoder_ceiling_bps;
  g_mutex_unlock (&self->control_lock);
  tell_encoder_search (self, self->server, &search);
  if (set)
    apply_encoder_bitrate (self);
}

/* From the I/O thread, no lock of the server held: bitrate-control=encoder
 * follows the weakest receiver's estimate, and asks for a keyframe when a
 * receiver had to skip (while its path is dark, the render does). For a
 * receiver whose latency allows quick steps at every tick, @on_tick;
 * otherwise on the estimates told on the bus, a fifth's move or a second
 * (at the tick's cadence careful steps came sooner after their hold and
 * delivered 4-9% less at a 1 s latency, two sessions, stop 62), and with
 * no receiver measured (the path gone: the least bitrate). */
static void
control_encoder (GstMultiTcpSink * self, MtcpServer * server,
    gboolean on_tick)
{
  MtcpServerEstimate followed;
  guint64 skips, bps, probe_bps = 0;
  gboolean probe = FALSE, padding, after_outage;
  gint64 now = g_get_monotonic_time ();
  gboolean keyframe = FALSE, set = FALSE;
  EncoderSearch search = { FALSE, FALSE, 0 };
  guint min_bps, max_bps;
  gboolean strongest, dark, measured;

  GST_OBJECT_LOCK (self);
  min_bps = self->min_bitrate;
  max_bps = self->max_bitrate;
  strongest = self->bitrate_follows == GST_MULTI_TCP_BITRATE_FOLLOWS_STRONGEST;
  padding = self->bitrate_probe == GST_MULTI_TCP_BITRATE_PROBE_PADDING;
  after_outage =
      self->bitrate_probe == GST_MULTI_TCP_BITRATE_PROBE_AFTER_OUTAGE;
  GST_OBJECT_UNLOCK (self);
  measured = mtcp_server_get_estimate (server, strongest, &followed, &skips);
  if (on_tick != (measured &&
          mtcp_bitrate_control_quick_budget (followed.latency_us)))
    return;
  dark = measured && followed.bps == 0;

  g_mutex_lock (&self->control_lock);
  if (find_encoder_locked (self, min_bps, max_bps, FALSE, &search))
    set = TRUE;
  if (self->bitrate) {
    mtcp_bitrate_control_set_padding_probes (self->bitrate, padding);
    mtcp_bitrate_control_set_padding_after_outage (self->bitrate,
        after_outage);
    mtcp_bitrate_control_set_budget (self->bitrate, followed.latency_us);
  }
  /* with no receiver measured, the estimate 0: the path went */
  if (self->bitrate && mtcp_bitrate_control_update (self->bitrate,
          now, followed.bps, followed.path_limited, followed.delivered_bps,
          followed.waited_us, &bps))
    set = TRUE;
  if (self->bitrate)
    probe = mtcp_bitrate_control_take_probe (self->bitrate, &probe_bps);
  /* following the strongest, the others' skips are theirs to live with */
  g_atomic_int_set (&self->path_dark, dark && self->encoder != NULL);
  keyframe = mtcp_keyframe_ask_after_skips (self->keyframes, now, skips,
      self->encoder != NULL && !strongest);
  search.ceiling_bps = self->encoder_ceiling_bps;
  g_mutex_unlock (&self->control_lock);

  tell_encoder_search (self, server, &search);
  if (probe)
    mtcp_server_probe (server, probe_bps);
  if (set) {
    GST_INFO_OBJECT (self, "the %s receiver's estimate %" G_GUINT64_FORMAT
        " bit/s", strongest ? "strongest" : "weakest", followed.bps);
    apply_encoder_bitrate (self);
  }
  if (keyframe)
    mtcp_encoder_request_keyframe (GST_BASE_SINK_PAD (self));
}

/* From the I/O thread, no lock held: after every tick (@on_tick) or an
 * estimate told on the bus, the encoder's control (control_encoder says
 * which it acts on); switched off, the stream is what it is again. */
static void
follow_estimates (GstMultiTcpSink * self, gboolean on_tick)
{
  MtcpServer *server;
  gboolean control;

  GST_OBJECT_LOCK (self);
  control = self->bitrate_control == GST_MULTI_TCP_BITRATE_CONTROL_ENCODER;
  server = self->server ? mtcp_server_ref (self->server) : NULL;
  GST_OBJECT_UNLOCK (self);
  if (server == NULL)
    return;
  /* not before the first buffer: that looks for the encoder and starts
   * it at min-bitrate (start_encoder_control) */
  if (control && g_atomic_int_get (&self->encoder_started)) {
    control_encoder (self, server, on_tick);
  } else if (!control && !on_tick) {
    g_atomic_int_set (&self->path_dark, FALSE);
    mtcp_server_set_stream_ceiling (server, 0);
  }
  mtcp_server_unref (server);
}

/* From the I/O thread after every tick, no lock held: quick steps act on
 * each measurement (200 ms); on the bus's cadence a quick step waited for
 * the next message (a second) however short its hold. */
static void
on_server_tick (gpointer user_data)
{
  follow_estimates (user_data, TRUE);
}

/* From the I/O thread, no lock held: a session's bandwidth estimate moved
 * (or a second passed): the encoder's careful steps, and the bus message
 * for applications that set their encoder's bitrate from it (examples/). */
static void
on_server_estimate (GstStructure * estimate, gpointer user_data)
{
  GstMultiTcpSink *self = user_data;

  follow_estimates (self, FALSE);
  gst_element_post_message (GST_ELEMENT (self),
      gst_message_new_element (GST_OBJECT (self), estimate));
}

/* From the I/O thread, no lock of the server held: a receiver came, went,
 * or was turned away, or a dial failed. */
static void
on_server_caller (MtcpCallerEvent event, const gchar * session_id,
    GSocketAddress * address, const gchar * reason, const gchar * kind,
    guint attempt, gpointer user_data)
{
  GstMultiTcpSink *self = user_data;

  gst_multi_tcp_caller_tell (GST_ELEMENT (self), &self->callers, event,
      session_id, address, reason, kind, attempt);
}

/* From the I/O thread, no lock of the server held: may a new receiver
 * join (caller-connecting)? */
static gboolean
on_server_accept (GSocketAddress * address, const gchar * stream_id,
    gpointer user_data)
{
  GstMultiTcpSink *self = user_data;

  return gst_multi_tcp_caller_accept (GST_ELEMENT (self), &self->callers,
      address, stream_id);
}

/* The certificate (with its key) TLS uses: the object, else the files. */
static GTlsCertificate *
tls_certificate_locked (GstMultiTcpSink * self, GError ** error)
{
  GTlsCertificate *cert;

  if (!g_tls_backend_supports_tls (g_tls_backend_get_default ())) {
    g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED, "GLib has no "
        "TLS backend (install glib-networking)");
    return NULL;
  }
  if (self->tls_certificate)
    return g_object_ref (self->tls_certificate);
  if (self->tls_certificate_file == NULL) {
    g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT, "set "
        "tls-certificate, or tls-certificate-file (and tls-key-file if the "
        "key is in another file)");
    return NULL;
  }
  cert = self->tls_key_file ?
      g_tls_certificate_new_from_files (self->tls_certificate_file,
      self->tls_key_file, error) :
      g_tls_certificate_new_from_file (self->tls_certificate_file, error);
  if (cert == NULL)
    g_prefix_error (error, "%s: ", self->tls_certificate_file);
  return cert;
}

static gboolean
gst_multi_tcp_sink_start (GstBaseSink * bsink)
{
  GstMultiTcpSink *self = GST_MULTI_TCP_SINK (bsink);
  MtcpServerConfig config;
  GError *err = NULL;
  MtcpServer *server;
  gdouble rate_scale;

  GST_OBJECT_LOCK (self);
  config.caller = self->mode == GST_MULTI_TCP_MODE_CALLER;
  config.retry = self->retry;
  if (config.caller && (self->host == NULL || *self->host == '\0' ||
          g_str_equal (self->host, "0.0.0.0") || self->port == 0)) {
    GST_OBJECT_UNLOCK (self);
    GST_ELEMENT_ERROR (self, RESOURCE, SETTINGS, ("mode=caller needs the "
            "receiver's host and port"), ("host=%s port=%u", self->host,
            self->port));
    return FALSE;
  }
  config.host = g_strdup (self->host);
  config.port = self->port;
  config.scheduler = self->scheduler;
  config.transfer = self->transfer_control;
  config.friendly = self->friendly;
  mtcp_burst_params_default (&config.burst);
  /* a shortened experiment's video: the paper's amounts in proportion, the
   * first burst to the file's size, the blocks to its playback rate */
  rate_scale = self->burst_rate_scale > 0 ? self->burst_rate_scale :
      self->burst_scale;
  config.burst.first_bytes *= self->burst_scale;
  config.burst.block_bytes *= rate_scale;
  config.burst.per_rtt_bytes *= rate_scale;
  config.limits = limits_locked (self);
  config.notsent_lowat = self->notsent_lowat;
  config.congestion_control = g_strdup (self->congestion_control);
  /* the default is a preference: where the kernel does not let us have
   * bbr, its own default, without a warning */
  config.congestion_control_optional = !self->congestion_control_set;
  config.pacing = self->pacing;
  config.max_frame = self->max_frame_size;
  config.max_sessions = self->max_sessions;
  config.max_connections = self->max_connections;
  config.handshake_timeout_ms = self->handshake_timeout;
  config.max_pending_handshakes = self->max_pending_handshakes;
  config.report_interval_ms = REPORT_INTERVAL_MS;
  config.session_timeout_ms = self->session_timeout;
  config.idle_timeout_ms = self->idle_timeout;
  config.copy_overhead_percent = self->copy_overhead;
  config.passphrase = self->passphrase;
  config.stream_id = self->stream_id;
  config.local_addresses = self->local_addresses;
  config.interfaces = self->interfaces;
  config.tls_certificate = NULL;
  if (self->tls && !(config.tls_certificate = tls_certificate_locked (self,
              &err))) {
    GST_OBJECT_UNLOCK (self);
    GST_ELEMENT_ERROR (self, RESOURCE, SETTINGS, ("TLS is on but there is "
            "no usable certificate"), ("%s", err->message));
    g_error_free (err);
    g_free (config.host);
    g_free (config.congestion_control);
    return FALSE;
  }
  GST_OBJECT_UNLOCK (self);

  server = mtcp_server_new (&config, on_server_warning, self);
  mtcp_server_set_estimate_func (server, on_server_estimate, self);
  mtcp_server_set_tick_func (server, on_server_tick, self);
  mtcp_server_set_caller_func (server, on_server_caller, self);
  mtcp_server_set_accept_func (server, on_server_accept, self);
  g_clear_object (&config.tls_certificate);
  g_free (config.congestion_control);
  if (!mtcp_server_start (server, &err)) {
    GST_ELEMENT_ERROR (self, RESOURCE, OPEN_READ_WRITE,
        ("Could not %s %s:%u", config.caller ? "dial" : "listen on",
            config.host ? config.host : "*", config.port), ("%s",
            err->message));
    g_free (config.host);
    g_error_free (err);
    mtcp_server_unref (server);
    return FALSE;
  }
  g_free (config.host);

  GST_OBJECT_LOCK (self);
  self->server = server;
  self->current_port = mtcp_server_get_port (server);
  self->upstream_live = -1;
  g_atomic_int_set (&self->gave_up_posted, FALSE);
  GST_OBJECT_UNLOCK (self);
  GST_INFO_OBJECT (self, "%s port %u", config.caller ? "dialing" :
      "listening on", self->current_port);
  g_object_notify (G_OBJECT (self), "current-port");
  return TRUE;
}

static gboolean
gst_multi_tcp_sink_stop (GstBaseSink * bsink)
{
  GstMultiTcpSink *self = GST_MULTI_TCP_SINK (bsink);
  MtcpServer *server;

  GST_OBJECT_LOCK (self);
  server = self->server;
  self->server = NULL;
  self->current_port = 0;
  GST_OBJECT_UNLOCK (self);
  if (server) {
    /* its sockets close now, whoever still holds a reference */
    mtcp_server_stop (server);
    mtcp_server_unref (server);
  }
  g_mutex_lock (&self->control_lock);
  g_clear_pointer (&self->encoder, mtcp_encoder_free);
  g_clear_pointer (&self->bitrate, mtcp_bitrate_control_free);
  self->encoder_ceiling_bps = 0;
  self->encoder_looked_for = FALSE;
  g_atomic_int_set (&self->encoder_started, FALSE);
  mtcp_keyframe_ask_reset (self->keyframes);
  g_atomic_int_set (&self->path_dark, FALSE);
  g_mutex_unlock (&self->control_lock);
  return TRUE;
}

/* control_lock not held. Whether a keyframe is due while dark (and, with
 * @take, that it is asked for now). */
static gboolean
dark_keyframe_due (GstMultiTcpSink * self, gint64 now, gboolean take)
{
  gboolean due;

  g_mutex_lock (&self->control_lock);
  due = self->encoder != NULL &&
      mtcp_keyframe_ask_while_dark (self->keyframes, now, take);
  g_mutex_unlock (&self->control_lock);
  return due;
}

/* The streaming thread, no lock held: while the followed receiver's
 * estimate is 0 (its path dark), a keyframe every
 * MTCP_KEYFRAME_DARK_GAP_US (gst/mtcpkeyframeask.h). The flag is the
 * last report's: checked again before each ask, as no report may come
 * once the last receiver is gone. */
static void
ask_keyframe_while_dark (GstMultiTcpSink * self)
{
  gint64 now = g_get_monotonic_time ();
  MtcpServerEstimate followed;
  guint64 skips;
  gboolean control, strongest;

  if (!dark_keyframe_due (self, now, FALSE))
    return;
  GST_OBJECT_LOCK (self);
  control = self->bitrate_control == GST_MULTI_TCP_BITRATE_CONTROL_ENCODER;
  strongest = self->bitrate_follows == GST_MULTI_TCP_BITRATE_FOLLOWS_STRONGEST;
  GST_OBJECT_UNLOCK (self);
  if (!control || !mtcp_server_get_estimate (self->server, strongest,
          &followed, &skips) || followed.bps != 0) {
    g_atomic_int_set (&self->path_dark, FALSE);
    return;
  }
  if (dark_keyframe_due (self, now, TRUE))
    mtcp_encoder_request_keyframe (GST_BASE_SINK_PAD (self));
}

static gboolean
gst_multi_tcp_sink_set_caps (GstBaseSink * bsink, GstCaps * caps)
{
  GstMultiTcpSink *self = GST_MULTI_TCP_SINK (bsink);

  GST_DEBUG_OBJECT (self, "caps %" GST_PTR_FORMAT, caps);
  if (mtcp_ts_keyframes_init (&self->ts_keyframes, caps))
    GST_DEBUG_OBJECT (self, "MPEG-TS: keyframes by random access indicator");
  mtcp_server_push_caps (self->server, caps);
  return TRUE;
}

/* A live upstream must never wait for the network; a file may. */
static gboolean
upstream_is_live (GstMultiTcpSink * self)
{
  if (self->upstream_live < 0) {
    GstQuery *q = gst_query_new_latency ();
    gboolean live = FALSE, answered;

    answered = gst_pad_peer_query (GST_BASE_SINK_PAD (self), q);
    if (answered)
      gst_query_parse_latency (q, &live, NULL, NULL);
    gst_query_unref (q);
    self->upstream_live = !answered ? 2 : live ? 1 : 0;
    GST_INFO_OBJECT (self, "upstream %s: %s", !answered ?
        "did not answer the latency query" : live ? "is live" : "is not live",
        live ? "sessions that fall behind skip to a keyframe" :
        "the queue bound holds it back");
  }
  return self->upstream_live == 1;
}

/* Upstream said it is not live (a file): a failed query says nothing. */
static gboolean
upstream_said_not_live (GstMultiTcpSink * self)
{
  return !upstream_is_live (self) && self->upstream_live == 0;
}

static GstFlowReturn
gst_multi_tcp_sink_render (GstBaseSink * bsink, GstBuffer * buf)
{
  GstMultiTcpSink *self = GST_MULTI_TCP_SINK (bsink);
  GstSegment *segment = &bsink->segment;
  GstClockTime pts = GST_CLOCK_TIME_NONE, dts = GST_CLOCK_TIME_NONE;
  GstBuffer *marked = NULL;
  gboolean wait, pushed;

  if (segment->format == GST_FORMAT_TIME) {
    pts = gst_segment_to_running_time (segment, GST_FORMAT_TIME,
        GST_BUFFER_PTS (buf));
    dts = gst_segment_to_running_time (segment, GST_FORMAT_TIME,
        GST_BUFFER_DTS (buf));
  }
  if (g_atomic_int_get (&self->gave_up_posted))
    return GST_FLOW_ERROR;      /* posted by on_server_warning () */
  GST_OBJECT_LOCK (self);
  wait = self->wait_for_connection;
  GST_OBJECT_UNLOCK (self);
  if (G_UNLIKELY (!g_atomic_int_get (&self->encoder_started)))
    start_encoder_control (self);
  /* a stream that is not live (a file) waits for a receiver whatever the
   * property: with none it flows through the queue, which keeps only the
   * newest keyframe for a joiner, and a receiver a moment late starts near
   * the file's end */
  if (wait || upstream_said_not_live (self)) {
    while (!mtcp_server_wait_receiver (self->server)) {
      GstFlowReturn ret;
      gchar *gave_up = mtcp_server_gave_up (self->server);
      if (gave_up) {
        g_free (gave_up);
        return GST_FLOW_ERROR;  /* posted by on_server_warning () */
      }
      /* unlocked for PAUSED or a flush: basesink's own wait, then again */
      ret = gst_base_sink_wait_preroll (bsink);
      if (ret != GST_FLOW_OK)
        return ret;
    }
  }
  /* MPEG-TS marks no delta units: joiners and skips would start mid-GOP */
  if (self->ts_keyframes.packet_size > 0) {
    gboolean delta = mtcp_ts_keyframes_is_delta (&self->ts_keyframes, buf,
        GST_CLOCK_TIME_IS_VALID (pts) ? pts : dts);
    if (delta != GST_BUFFER_FLAG_IS_SET (buf, GST_BUFFER_FLAG_DELTA_UNIT)) {
      marked = gst_buffer_copy (buf);   /* the memory is shared */
      if (delta)
        GST_BUFFER_FLAG_SET (marked, GST_BUFFER_FLAG_DELTA_UNIT);
      else
        GST_BUFFER_FLAG_UNSET (marked, GST_BUFFER_FLAG_DELTA_UNIT);
    }
  }
  /* a stream that is not live waits for room in the queue: unlocked for
   * PAUSED or a flush, basesink's own wait, then again */
  while (!(pushed = mtcp_server_push_buffer (self->server, marked ? marked :
              buf, pts, dts, GST_BUFFER_DURATION (buf),
              upstream_is_live (self)))) {
    GstFlowReturn ret = gst_base_sink_wait_preroll (bsink);
    if (ret != GST_FLOW_OK) {
      gst_clear_buffer (&marked);
      return ret;
    }
  }
  gst_clear_buffer (&marked);
  if (G_UNLIKELY (g_atomic_int_get (&self->path_dark)))
    ask_keyframe_while_dark (self);
  return GST_FLOW_OK;
}

static gboolean
gst_multi_tcp_sink_event (GstBaseSink * bsink, GstEvent * event)
{
  GstMultiTcpSink *self = GST_MULTI_TCP_SINK (bsink);

  if (GST_EVENT_TYPE (event) == GST_EVENT_EOS && self->server) {
    mtcp_server_push_eos (self->server);
    /* nothing lost: EOS is posted once receivers have everything */
    if (!mtcp_server_wait_drained (self->server, EOS_DRAIN_TIMEOUT))
      GST_WARNING_OBJECT (self, "not every receiver took all data before EOS");
  }
  return GST_BASE_SINK_CLASS (parent_class)->event (bsink, event);
}

static gboolean
gst_multi_tcp_sink_unlock (GstBaseSink * bsink)
{
  GstMultiTcpSink *self = GST_MULTI_TCP_SINK (bsink);
  if (self->server)
    mtcp_server_set_flushing (self->server, TRUE);
  return TRUE;
}

static gboolean
gst_multi_tcp_sink_unlock_stop (GstBaseSink * bsink)
{
  GstMultiTcpSink *self = GST_MULTI_TCP_SINK (bsink);
  if (self->server)
    mtcp_server_set_flushing (self->server, FALSE);
  return TRUE;
}

/* ---- GstURIHandler: multitcp:// (gstmultitcpuri.h) ---- */

static GstURIType
gst_multi_tcp_sink_uri_get_type (GType type)
{
  return GST_URI_SINK;
}

static void
gst_multi_tcp_sink_uri_handler_init (gpointer g_iface, gpointer iface_data)
{
  GstURIHandlerInterface *iface = g_iface;

  iface->get_type = gst_multi_tcp_sink_uri_get_type;
  gst_multi_tcp_uri_handler_fill (iface);
}

static void
gst_multi_tcp_sink_class_init (GstMultiTcpSinkClass * klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);
  GstBaseSinkClass *basesink_class = GST_BASE_SINK_CLASS (klass);

  GST_DEBUG_CATEGORY_INIT (multitcpsink_debug, "multitcpsink", 0,
      "multitcp sink element");

  gst_multi_tcp_caller_install_signals (G_TYPE_FROM_CLASS (klass), signals);

  gobject_class->set_property = gst_multi_tcp_sink_set_property;
  gobject_class->get_property = gst_multi_tcp_sink_get_property;
  gobject_class->finalize = gst_multi_tcp_sink_finalize;

  /**
   * GstMultiTcpSink:mode:
   *
   * Since: 0.1
   */
  g_object_class_install_property (gobject_class, PROP_MODE,
      g_param_spec_enum ("mode", "Mode",
          "listener: receivers dial host:port; caller: dial the receiver "
          "(multitcpsrc mode=listener) at host:port, all of its connections, "
          "as many as it asks for (a camera behind NAT dials out)",
          GST_TYPE_MULTI_TCP_MODE, DEFAULT_MODE,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
  /**
   * GstMultiTcpSink:host:
   *
   * Since: 0.1
   */
  g_object_class_install_property (gobject_class, PROP_HOST,
      g_param_spec_string ("host", "Host",
          "listener: the address to listen on (0.0.0.0 = every IPv4 "
          "interface); caller: the receiver's host", DEFAULT_HOST,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
  /**
   * GstMultiTcpSink:port:
   *
   * Since: 0.1
   */
  g_object_class_install_property (gobject_class, PROP_PORT,
      g_param_spec_int ("port", "Port",
          "listener: the port to listen on (0 = pick a free port, see "
          "current-port); caller: the receiver's port", 0, G_MAXUINT16,
          DEFAULT_PORT, G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
  /**
   * GstMultiTcpSink:retry:
   *
   * Since: 0.1
   */
  g_object_class_install_property (gobject_class, PROP_RETRY,
      g_param_spec_uint ("retry", "Retry",
          "caller: failed dials in a row (with backoff and jitter, up to 5 s "
          "apart) before the sink gives up with an error; 0 = give up at the "
          "first failure, G_MAXUINT (4294967295) = never give up", 0,
          G_MAXUINT, DEFAULT_RETRY,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
  /**
   * GstMultiTcpSink:wait-for-connection:
   *
   * Since: 0.1
   */
  g_object_class_install_property (gobject_class, PROP_WAIT_FOR_CONNECTION,
      g_param_spec_boolean ("wait-for-connection", "Wait for connection",
          "Hold the stream back (render blocks) while no receiver has a "
          "connection, as srtsink's; off (default): buffers go on into the "
          "queue and a receiver that comes later starts at a keyframe. A "
          "stream whose upstream says it is not live (a file) is always "
          "held back so, also mid-file",
          DEFAULT_WAIT_FOR_CONNECTION,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
  /**
   * GstMultiTcpSink:uri:
   *
   * Since: 0.1
   */
  g_object_class_install_property (gobject_class, PROP_URI,
      g_param_spec_string ("uri", "URI",
          "multitcp://host:port to dial a listening receiver, "
          "multitcp://:port to listen; other properties as query keys "
          "(multitcp://cam.example:5600?passphrase=...&latency=...)", NULL,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
  /**
   * GstMultiTcpSink:current-port:
   *
   * Since: 0.1
   */
  g_object_class_install_property (gobject_class, PROP_CURRENT_PORT,
      g_param_spec_int ("current-port", "Current port",
          "The port listened on (0 when not listening)", 0, G_MAXUINT16, 0,
          G_PARAM_READABLE | G_PARAM_STATIC_STRINGS));
  /**
   * GstMultiTcpSink:scheduler:
   *
   * Since: 0.1
   */
  g_object_class_install_property (gobject_class, PROP_SCHEDULER,
      g_param_spec_enum ("scheduler", "Scheduler",
          "How frames are spread over a session's connections",
          GST_TYPE_MULTI_TCP_SCHEDULER, DEFAULT_SCHEDULER,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
  /**
   * GstMultiTcpSink:max-session-bytes:
   *
   * Since: 0.1
   */
  g_object_class_install_property (gobject_class, PROP_MAX_SESSION_BYTES,
      g_param_spec_uint64 ("max-session-bytes", "Max session bytes",
          "Bytes a session may fall behind before it skips to the latest "
          "keyframe (live) or holds upstream back (not live), and the most "
          "it keeps of what its receiver has not acknowledged; 0 = unlimited "
          "lag, 32 MiB kept",
          0, G_MAXUINT64, DEFAULT_MAX_SESSION_BYTES,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
  /**
   * GstMultiTcpSink:max-session-lag:
   *
   * Since: 0.1
   */
  g_object_class_install_property (gobject_class, PROP_MAX_SESSION_LAG,
      g_param_spec_uint64 ("max-session-lag", "Max session lag",
          "Stream time (ns) a session may fall behind before it skips to the "
          "latest keyframe (live; a receiver's latency, when smaller, bounds "
          "its own session) or holds upstream back (not live); "
          "18446744073709551615 (G_MAXUINT64, GST_CLOCK_TIME_NONE) = "
          "unlimited, 0 = no lag at all", 0, G_MAXUINT64,
          DEFAULT_MAX_SESSION_LAG,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
  /**
   * GstMultiTcpSink:notsent-lowat:
   *
   * Since: 0.1
   */
  g_object_class_install_property (gobject_class, PROP_NOTSENT_LOWAT,
      g_param_spec_uint ("notsent-lowat", "Unsent bytes low mark",
          "A connection takes new frames only while its kernel buffer holds "
          "fewer unsent bytes than one congestion window (at least 4 kB) "
          "and than this, and takes no more than that at a time "
          "(TCP_NOTSENT_LOWAT; 0 = kernel default, no mark)",
          0, G_MAXINT, DEFAULT_NOTSENT_LOWAT,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
  /**
   * GstMultiTcpSink:congestion-control:
   *
   * Since: 0.1
   */
  g_object_class_install_property (gobject_class, PROP_CONGESTION_CONTROL,
      g_param_spec_string ("congestion-control", "Congestion control",
          "TCP congestion control for every connection (e.g. reno, cubic, "
          "bbr; empty = the system's default). The default, bbr, falls back "
          "to the system's quietly where the kernel refuses it; one set here "
          "that the kernel refuses (net.ipv4.tcp_allowed_congestion_control) "
          "is a warning",
          DEFAULT_CONGESTION_CONTROL,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
  /**
   * GstMultiTcpSink:pacing:
   *
   * Since: 0.1
   */
  g_object_class_install_property (gobject_class, PROP_PACING,
      g_param_spec_boolean ("pacing", "Pacing",
          "Let TCP pace every connection at its own rate (SO_MAX_PACING_RATE)"
          ": a window leaves spread over the round trip, not in one burst "
          "that a full drop-tail queue drops", DEFAULT_PACING,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
  /**
   * GstMultiTcpSink:max-sessions:
   *
   * Since: 0.1
   */
  g_object_class_install_property (gobject_class, PROP_MAX_SESSIONS,
      g_param_spec_uint ("max-sessions", "Max sessions",
          "Receivers served at once; more are refused", 1, G_MAXINT,
          DEFAULT_MAX_SESSIONS, G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
  /**
   * GstMultiTcpSink:max-connections:
   *
   * Since: 0.1
   */
  g_object_class_install_property (gobject_class, PROP_MAX_CONNECTIONS,
      g_param_spec_uint ("max-connections", "Max connections",
          "Connections one session may open; more are refused", 1, 1024,
          DEFAULT_MAX_CONNECTIONS, G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
  /**
   * GstMultiTcpSink:handshake-timeout:
   *
   * Since: 0.1
   */
  g_object_class_install_property (gobject_class, PROP_HANDSHAKE_TIMEOUT,
      g_param_spec_uint ("handshake-timeout", "Handshake timeout",
          "Milliseconds a new connection has to send its HELLO", 1, G_MAXINT,
          DEFAULT_HANDSHAKE_TIMEOUT,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
  /**
   * GstMultiTcpSink:max-pending-handshakes:
   *
   * Since: 0.1
   */
  g_object_class_install_property (gobject_class, PROP_MAX_PENDING_HANDSHAKES,
      g_param_spec_uint ("max-pending-handshakes", "Max pending handshakes",
          "Connections accepted that have not finished their handshake yet; "
          "when one more arrives the oldest of them is closed (counted as "
          "connections-rejected in stats)", 1, 65536,
          DEFAULT_MAX_PENDING_HANDSHAKES,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
  /**
   * GstMultiTcpSink:bitrate-control:
   *
   * Since: 0.1
   */
  g_object_class_install_property (gobject_class, PROP_BITRATE_CONTROL,
      g_param_spec_enum ("bitrate-control", "Bitrate control",
          "encoder: set the bitrate of the video encoder upstream (x264enc, "
          "x265enc, vp8enc, vp9enc, openh264enc and others whose bitrate "
          "property gives its unit) from the weakest receiver's bandwidth "
          "estimate, between min-bitrate and max-bitrate, and ask it for a "
          "keyframe when a receiver had to skip and twice a second while "
          "its estimate is 0 (its path dark). Either way the estimate is "
          "in stats (estimated-bitrate) and in multitcpsink-estimate element "
          "messages", GST_TYPE_MULTI_TCP_BITRATE_CONTROL,
          DEFAULT_BITRATE_CONTROL, G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
  /**
   * GstMultiTcpSink:bitrate-follows:
   *
   * Since: 0.1
   */
  g_object_class_install_property (gobject_class, PROP_BITRATE_FOLLOWS,
      g_param_spec_enum ("bitrate-follows", "Bitrate follows",
          "bitrate-control=encoder with several receivers: the weakest one's "
          "estimate, or the strongest one's (the others then skip what they "
          "cannot take on time, and their skips and dark paths ask for no "
          "keyframe)",
          GST_TYPE_MULTI_TCP_BITRATE_FOLLOWS, DEFAULT_BITRATE_FOLLOWS,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
  /**
   * GstMultiTcpSink:bitrate-probe:
   *
   * Since: 0.1
   */
  g_object_class_install_property (gobject_class, PROP_BITRATE_PROBE,
      g_param_spec_enum ("bitrate-probe", "Bitrate probe",
          "bitrate-control=encoder: how it finds room above the stream. "
          "padding: PADDING frames for 0.7 s, the encoder raised only as far "
          "as what was delivered shows; encoder: the encoder raised a "
          "quarter at a time (three quarters for a receiver with 2 s of "
          "latency while the path moves) and on what TCP's windows would "
          "carry; "
          "after-outage: as encoder, but after the path was dark as padding "
          "until the encoder is back where the outage found it (10 s at most)",
          GST_TYPE_MULTI_TCP_BITRATE_PROBE, DEFAULT_BITRATE_PROBE,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
  /**
   * GstMultiTcpSink:min-bitrate:
   *
   * Since: 0.1
   */
  g_object_class_install_property (gobject_class, PROP_MIN_BITRATE,
      g_param_spec_uint ("min-bitrate", "Min bitrate",
          "bitrate-control=encoder: the least bitrate set (bits/s), and the "
          "one the stream starts at and comes back at after the path was "
          "dark", 1, G_MAXUINT, DEFAULT_MIN_BITRATE,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
  /**
   * GstMultiTcpSink:max-bitrate:
   *
   * Since: 0.1
   */
  g_object_class_install_property (gobject_class, PROP_MAX_BITRATE,
      g_param_spec_uint ("max-bitrate", "Max bitrate",
          "bitrate-control=encoder: the most bitrate set (bits/s); 0 = the "
          "encoder's own bitrate at the first buffer", 0, G_MAXUINT,
          DEFAULT_MAX_BITRATE, G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
  /**
   * GstMultiTcpSink:max-frame-size:
   *
   * Since: 0.1
   */
  g_object_class_install_property (gobject_class, PROP_MAX_FRAME_SIZE,
      g_param_spec_uint ("max-frame-size", "Max frame size",
          "Largest frame body accepted from a peer, in bytes",
          MTCP_MAX_FRAME_MIN,
          MTCP_MAX_FRAME_LIMIT, DEFAULT_MAX_FRAME_SIZE,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
  /**
   * GstMultiTcpSink:session-timeout:
   *
   * Since: 0.1
   */
  g_object_class_install_property (gobject_class, PROP_SESSION_TIMEOUT,
      g_param_spec_uint ("session-timeout", "Session timeout",
          "Milliseconds a session whose connections all dropped is kept, so "
          "that its receiver can reconnect and resume where it was (0 = end "
          "it at once)", 0, G_MAXINT, DEFAULT_SESSION_TIMEOUT,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
  /**
   * GstMultiTcpSink:stream-id:
   *
   * Since: 0.1
   */
  g_object_class_install_property (gobject_class, PROP_STREAM_ID,
      g_param_spec_string ("stream-id", "Stream ID",
          "Which stream, as SRT's streamid (at most 200 bytes of UTF-8): "
          "caller: sent to the listening multitcpsrc, which takes the call only if it is its own stream-id; listener: receivers must name this one (unset: any; one that names another gets a refusal it does not retry). Not covered by the passphrase's "
          "proofs: with TLS it is private, without it anyone on the path "
          "reads it", NULL, G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
  /**
   * GstMultiTcpSink:local-addresses:
   *
   * Since: 0.1
   */
  g_object_class_install_property (gobject_class, PROP_LOCAL_ADDRESSES,
      g_param_spec_string ("local-addresses", "Local addresses",
          "mode=caller: the uplinks to bond, by address: comma-separated "
          "local IP addresses, each dial from one of them (with "
          "`interfaces`, paired in order). Each uplink keeps at least one "
          "connection, is dialed again with backoff while it is down, and "
          "the receiver counts connections per uplink. Unset: one uplink, "
          "the kernel's choice", NULL,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
  /**
   * GstMultiTcpSink:interfaces:
   *
   * Since: 0.1
   */
  g_object_class_install_property (gobject_class, PROP_INTERFACES,
      g_param_spec_string ("interfaces", "Interfaces",
          "mode=caller: the uplinks to bond, by network device: "
          "comma-separated names (wwan0,wwan1), each dial bound to one "
          "(SO_BINDTODEVICE: out of that device whatever the routing "
          "table says; root or CAP_NET_RAW before Linux 5.7). See "
          "local-addresses", NULL,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
  /**
   * GstMultiTcpSink:passphrase:
   *
   * Since: 0.1
   */
  g_object_class_install_property (gobject_class, PROP_PASSPHRASE,
      g_param_spec_string ("passphrase", "Passphrase",
          "Receivers must prove they know it, and the sink proves it to them (PBKDF2 key, HMAC-SHA256 challenge on every connection), to get or join a session; empty = anyone may connect. Write-only", NULL,
          G_PARAM_WRITABLE | G_PARAM_STATIC_STRINGS));
  /**
   * GstMultiTcpSink:tls:
   *
   * Since: 0.1
   */
  g_object_class_install_property (gobject_class, PROP_TLS,
      g_param_spec_boolean ("tls", "TLS",
          "TLS on every connection (receivers need tls=true too)", FALSE,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
  /**
   * GstMultiTcpSink:tls-certificate:
   *
   * Since: 0.1
   */
  g_object_class_install_property (gobject_class, PROP_TLS_CERTIFICATE,
      g_param_spec_object ("tls-certificate", "TLS certificate",
          "The sink's certificate with its private key (else the files)",
          G_TYPE_TLS_CERTIFICATE,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
  /**
   * GstMultiTcpSink:tls-certificate-file:
   *
   * Since: 0.1
   */
  g_object_class_install_property (gobject_class, PROP_TLS_CERTIFICATE_FILE,
      g_param_spec_string ("tls-certificate-file", "TLS certificate file",
          "PEM file with the sink's certificate (and its key, unless "
          "tls-key-file is set)", NULL,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
  /**
   * GstMultiTcpSink:tls-key-file:
   *
   * Since: 0.1
   */
  g_object_class_install_property (gobject_class, PROP_TLS_KEY_FILE,
      g_param_spec_string ("tls-key-file", "TLS key file",
          "PEM file with the private key of tls-certificate-file", NULL,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
  /**
   * GstMultiTcpSink:idle-timeout:
   *
   * Since: 0.1
   */
  g_object_class_install_property (gobject_class, PROP_IDLE_TIMEOUT,
      g_param_spec_uint ("idle-timeout", "Idle timeout",
          "Milliseconds without feedback from the receiver (it sends some "
          "on each connection every 500 ms at least) before a connection is taken for dead and what it "
          "held goes out on the others (0 = never)", 0, G_MAXINT,
          DEFAULT_IDLE_TIMEOUT, G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
  /**
   * GstMultiTcpSink:copy-overhead:
   *
   * Since: 0.1
   */
  g_object_class_install_property (gobject_class, PROP_COPY_OVERHEAD,
      g_param_spec_uint ("copy-overhead", "Copy overhead",
          "A frame held by a connection stuck on a loss (TCP in loss "
          "recovery there, or no ACK for longer than RTT + 4 RTTVAR) goes "
          "out again, one RTT plus 60 ms before the receiver's deadline, on "
          "the connections that would deliver it soonest; such copies, and "
          "those of a frame the receiver waits for (hedges), cost at most "
          "this percentage of the stream together (0 = none; read when the "
          "sink starts)", 0, 100,
          DEFAULT_COPY_OVERHEAD, G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
  /**
   * GstMultiTcpSink:transfer-control:
   *
   * How a session fed by a non-live upstream (a file) is paced: `greedy`
   * sends as fast as the connections take it (bounded by the queue);
   * `network-friendly` passes each connection per RTT what the
   * receiver's playout buffer needs against the path's congestion level
   * (seed 004: its share of the playback rate, measured from the PTS, and
   * of the playout buffer the receiver reports), leaving the rest of the
   * link to other traffic; `burst` is the baseline that paper compares
   * with (80 MB at once, then 2.2 MB blocks at 128 kB per RTT with 1.5 s
   * pauses). A live upstream is paced by its encoder: the property does
   * nothing there. Read when the sink starts.
   *
   * Since: 0.1
   */
  g_object_class_install_property (gobject_class, PROP_TRANSFER_CONTROL,
      g_param_spec_enum ("transfer-control", "Transfer control",
          "Pacing of a non-live upstream (a file): greedy, network-friendly "
          "(seed 004: per RTT what the receiver's playout buffer needs) or "
          "burst (a first burst, then fixed blocks); nothing for a live "
          "upstream", GST_TYPE_MULTI_TCP_TRANSFER_CONTROL,
          MTCP_TRANSFER_GREEDY, G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
  /**
   * GstMultiTcpSink:friendly-alpha:
   *
   * Since: 0.1
   */
  g_object_class_install_property (gobject_class, PROP_FRIENDLY_ALPHA,
      g_param_spec_double ("friendly-alpha", "Friendly alpha",
          "network-friendly: seconds of past loss events whose congestion "
          "levels set the buffer targets (the paper's alpha)", 1, 86400,
          MTCP_FRIENDLY_DEFAULT_ALPHA_S,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
  /**
   * GstMultiTcpSink:friendly-beta:
   *
   * Since: 0.1
   */
  g_object_class_install_property (gobject_class, PROP_FRIENDLY_BETA,
      g_param_spec_double ("friendly-beta", "Friendly beta",
          "network-friendly: weight of a new RTT in its moving average "
          "(the paper's beta)", 0.01, 1, MTCP_FRIENDLY_DEFAULT_BETA,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
  /**
   * GstMultiTcpSink:friendly-gamma:
   *
   * Since: 0.1
   */
  g_object_class_install_property (gobject_class, PROP_FRIENDLY_GAMMA,
      g_param_spec_double ("friendly-gamma", "Friendly gamma",
          "network-friendly: RTT_max is the mean RTT plus this many "
          "deviations (the paper's gamma)", 0, 10,
          MTCP_FRIENDLY_DEFAULT_GAMMA,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
  /**
   * GstMultiTcpSink:stats:
   *
   * Since: 0.1
   */
  /**
   * GstMultiTcpSink:burst-scale:
   *
   * transfer-control=burst: the paper's byte amounts (80 MB first, 2.2 MB
   * blocks, 128 kB per RTT) times this, for a shortened experiment with a
   * shorter video (the blocks and the amount per RTT times
   * burst-rate-scale instead, when that is set); the pauses stay.
   *
   * Since: 0.1
   */
  g_object_class_install_property (gobject_class, PROP_BURST_SCALE,
      g_param_spec_double ("burst-scale", "Burst scale",
          "transfer-control=burst: the byte amounts of the YouTube-like "
          "baseline (80 MB first, 2.2 MB blocks at 128 kB per RTT) times "
          "this (the blocks and per RTT: burst-rate-scale when set); the "
          "pauses (2 s, 1.5 s) stay", 1e-6, 1000, 1.0,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
  /**
   * GstMultiTcpSink:burst-rate-scale:
   *
   * transfer-control=burst: scales the blocks and the amount per RTT in
   * place of burst-scale, for a video whose playback rate is not the
   * paper's 3.6 Mbit/s: set it to the playback rate over 3.6 Mbit/s, and
   * the blocks run above playback as the paper's did; burst-scale then
   * scales only the first burst, to the file's size.
   *
   * Since: 0.1
   */
  g_object_class_install_property (gobject_class, PROP_BURST_RATE_SCALE,
      g_param_spec_double ("burst-rate-scale", "Burst rate scale",
          "transfer-control=burst: the blocks (2.2 MB) and the amount per "
          "RTT (128 kB) times this instead of burst-scale, which then "
          "scales only the first burst (0 = burst-scale for all)", 0, 1000,
          0, G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
  g_object_class_install_property (gobject_class, PROP_STATS,
      g_param_spec_boxed ("stats", "Statistics",
          "Sessions and connections: bytes and buffers sent and dropped, "
          "queue depth, and the kernel's TCP_INFO of each connection",
          GST_TYPE_STRUCTURE, G_PARAM_READABLE | G_PARAM_STATIC_STRINGS));

  gst_element_class_add_static_pad_template (element_class, &sink_template);
  gst_element_class_set_static_metadata (element_class,
      "Multi-connection TCP sink", "Sink/Network",
      "Stripes a live stream over several TCP connections per receiver",
      "the multitcp authors");

  basesink_class->start = GST_DEBUG_FUNCPTR (gst_multi_tcp_sink_start);
  basesink_class->stop = GST_DEBUG_FUNCPTR (gst_multi_tcp_sink_stop);
  basesink_class->set_caps = GST_DEBUG_FUNCPTR (gst_multi_tcp_sink_set_caps);
  basesink_class->render = GST_DEBUG_FUNCPTR (gst_multi_tcp_sink_render);
  basesink_class->event = GST_DEBUG_FUNCPTR (gst_multi_tcp_sink_event);
  basesink_class->unlock = GST_DEBUG_FUNCPTR (gst_multi_tcp_sink_unlock);
  basesink_class->unlock_stop =
      GST_DEBUG_FUNCPTR (gst_multi_tcp_sink_unlock_stop);

  gst_type_mark_as_plugin_api (GST_TYPE_MULTI_TCP_SCHEDULER, 0);
  gst_type_mark_as_plugin_api (GST_TYPE_MULTI_TCP_TRANSFER_CONTROL, 0);
}

/* multitcp
 * Copyright (C) 2026 the multitcp authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
/**
 * SECTION:element-multitcpsrc
 * @title: multitcpsrc
 *
 * Receives a stream from multitcpsink over a session of several TCP
 * connections, restores the order of what arrives, and releases each
 * buffer by its playback deadline: the sender's running time mapped onto
 * the local clock, plus #GstMultiTcpSrc:latency. A gap still open at the
 * deadline of the buffer after it is skipped (that buffer carries
 * DISCONT); a buffer that comes after its slot was released is late,
 * dropped and counted. Caps, flags and stream headers come from the
 * sender.
 *
 * ## Example launch line
 * |[
 * gst-launch-1.0 multitcpsrc host=127.0.0.1 port=5600 connections=5 latency=1000 ! h264parse ! avdec_h264 ! autovideosink
 * ]|
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstmultitcpsrc.h"
#include "mtcpprotocol.h"

GST_DEBUG_CATEGORY_STATIC (multitcpsrc_debug);
#define GST_CAT_DEFAULT multitcpsrc_debug

#define DEFAULT_HOST "localhost"
#define DEFAULT_PORT 5600
#define DEFAULT_MODE GST_MULTI_TCP_MODE_CALLER
/* ParS's count from the path's RTT and loss: fixed 5 lost most frames on
 * long lossy and cellular paths where this lost few (docs/benchmarks.md) */
#define DEFAULT_CONNECTIONS 0
#define DEFAULT_LATENCY_MS 1000
#define DEFAULT_TIMEOUT 10
#define DEFAULT_STATS_INTERVAL 0
#define DEFAULT_MAX_FRAME_SIZE MTCP_MAX_FRAME_DEFAULT
#define FEEDBACK_INTERVAL_MS 100
#define DEFAULT_RETRY 30
#define DEFAULT_IDLE_TIMEOUT 3000
#define DEFAULT_DRIFT_CORRECTION TRUE
#define DEFAULT_KEEP_LISTENING FALSE
/* MultiTCP Tables II and III; MULTFRC leaves its constants open */
#define DEFAULT_WINDOW_CONTROL MTCP_WINDOW_CONTROL_NONE
#define DEFAULT_CONNECTION_CONTROL MTCP_CONNECTION_CONTROL_FIXED
#define DEFAULT_TARGET_BITRATE 0
#define DEFAULT_HEADROOM 1.6
#define DEFAULT_SAMPLING_INTERVAL 0
#define DEFAULT_SMOOTHING 0.9
#define DEFAULT_GUARD 3000.0
#define DEFAULT_SPIKE_FACTOR 10.0
#define DEFAULT_CONNECTION_BETA 1.0
#define DEFAULT_CONGESTION_FACTOR 5.0
#define DEFAULT_RTT_ALPHA 1.0
#define DEFAULT_RTT_BETA 1.0
#define DEFAULT_RTT_GAMMA 0.3
#define DEFAULT_RTT_REPORTS 5
#define DEFAULT_MIN_CONNECTIONS 1
/* carrier-grade NAT and firewalls limit connections per host */
#define DEFAULT_MAX_CONNECTIONS 16

enum {
  PROP_0,
  PROP_HOST,
  PROP_PORT,
  PROP_CONNECTIONS,
  PROP_LATENCY,
  PROP_TIMEOUT,
  PROP_STATS_INTERVAL,
  PROP_MAX_FRAME_SIZE,
  PROP_STATS,
  PROP_WINDOW_CONTROL,
  PROP_CONNECTION_CONTROL,
  PROP_TARGET_BITRATE,
  PROP_HEADROOM,
  PROP_SAMPLING_INTERVAL,
  PROP_SMOOTHING,
  PROP_GUARD,
  PROP_SPIKE_FACTOR,
  PROP_CONNECTION_BETA,
  PROP_CONGESTION_FACTOR,
  PROP_RTT_ALPHA,
  PROP_RTT_BETA,
  PROP_RTT_GAMMA,
  PROP_RTT_REPORTS,
  PROP_MIN_CONNECTIONS,
  PROP_MAX_CONNECTIONS,
  PROP_RETRY,
  PROP_IDLE_TIMEOUT,
  PROP_PASSPHRASE,
  PROP_STREAM_ID,
  PROP_LOCAL_ADDRESSES,
  PROP_TLS,
  PROP_TLS_CA_FILE,
  PROP_TLS_VALIDATION_FLAGS,
  PROP_TLS_SERVER_NAME,
  PROP_DRIFT_CORRECTION,
  PROP_KEEP_LISTENING,
  PROP_MODE,
  PROP_CURRENT_PORT,
  PROP_URI,
};

#define GST_TYPE_MULTI_TCP_WINDOW_CONTROL (gst_multi_tcp_window_control_get_type ())
static GType
gst_multi_tcp_window_control_get_type (void)
{
  static GType type = 0;
  static const GEnumValue values[] = {
    {MTCP_WINDOW_CONTROL_NONE, "The kernel's own receive windows", "none"},
    {MTCP_WINDOW_CONTROL_ADJUST, "MultiTCP AdjustWindowSize: receive windows "
          "hold the target throughput", "adjust"},
    {0, NULL, NULL},
  };
  if (g_once_init_enter (&type))
    g_once_init_leave (&type,
        g_enum_register_static ("GstMultiTcpWindowControl", values));
  return type;
}

#define GST_TYPE_MULTI_TCP_CONNECTION_CONTROL (gst_multi_tcp_connection_control_get_type ())
static GType
gst_multi_tcp_connection_control_get_type (void)
{
  static GType type = 0;
  static const GEnumValue values[] = {
    {MTCP_CONNECTION_CONTROL_FIXED, "The connections property (0: ParS's "
          "model from RTT and loss)", "fixed"},
    {MTCP_CONNECTION_CONTROL_CONGESTION, "MultiTCP AdjustNumConnections with "
          "AdjustWindowSize (VariedConnVariedWinSize)", "congestion"},
    {MTCP_CONNECTION_CONTROL_RTT, "MULTFRC: more while RTT stays near its "
          "minimum, fewer when a queue builds", "rtt"},
    {MTCP_CONNECTION_CONTROL_SHARE, "The connections property (0: ParS's "
          "model), and one more on trial while others' flows hold the "
          "stream back, kept if what arrives rose", "share"},
    {0, NULL, NULL},
  };
  if (g_once_init_enter (&type))
    g_once_init_leave (&type,
        g_enum_register_static ("GstMultiTcpConnectionControl", values));
  return type;
}

static GstStaticPadTemplate src_template = GST_STATIC_PAD_TEMPLATE ("src",
    GST_PAD_SRC, GST_PAD_ALWAYS, GST_STATIC_CAPS_ANY);

#define gst_multi_tcp_src_parent_class parent_class
static guint signals[GST_MULTI_TCP_CALLER_N_SIGNALS];

static void gst_multi_tcp_src_uri_handler_init (gpointer iface,
    gpointer iface_data);

G_DEFINE_TYPE_WITH_CODE (GstMultiTcpSrc, gst_multi_tcp_src,
    GST_TYPE_PUSH_SRC, G_IMPLEMENT_INTERFACE (GST_TYPE_URI_HANDLER,
        gst_multi_tcp_src_uri_handler_init));

static void
gst_multi_tcp_src_init (GstMultiTcpSrc * self)
{
  self->mode = DEFAULT_MODE;
  self->callers.signals = signals;
  self->callers.peer = "sink";
  self->host = g_strdup (DEFAULT_HOST);
  self->port = DEFAULT_PORT;
  self->connections = DEFAULT_CONNECTIONS;
  self->latency_ms = DEFAULT_LATENCY_MS;
  self->timeout = DEFAULT_TIMEOUT;
  self->stats_interval = DEFAULT_STATS_INTERVAL;
  self->max_frame_size = DEFAULT_MAX_FRAME_SIZE;
  self->retry = DEFAULT_RETRY;
  self->tls_validation_flags = G_TLS_CERTIFICATE_VALIDATE_ALL;
  self->idle_timeout = DEFAULT_IDLE_TIMEOUT;
  self->drift_correction = DEFAULT_DRIFT_CORRECTION;
  self->keep_listening = DEFAULT_KEEP_LISTENING;
  self->control.window = DEFAULT_WINDOW_CONTROL;
  self->control.connections = DEFAULT_CONNECTION_CONTROL;
  self->control.target_bitrate = DEFAULT_TARGET_BITRATE;
  self->control.headroom = DEFAULT_HEADROOM;
  self->control.sampling_interval_ms = DEFAULT_SAMPLING_INTERVAL;
  self->control.smoothing = DEFAULT_SMOOTHING;
  self->control.guard = DEFAULT_GUARD;
  self->control.spike_factor = DEFAULT_SPIKE_FACTOR;
  self->control.conn_beta = DEFAULT_CONNECTION_BETA;
  self->control.congestion_factor = DEFAULT_CONGESTION_FACTOR;
  self->control.iiad_alpha = DEFAULT_RTT_ALPHA;
  self->control.iiad_beta = DEFAULT_RTT_BETA;
  self->control.iiad_gamma = DEFAULT_RTT_GAMMA;
  self->control.iiad_reports = DEFAULT_RTT_REPORTS;
  self->control.min_connections = DEFAULT_MIN_CONNECTIONS;
  self->control.max_connections = DEFAULT_MAX_CONNECTIONS;
  self->cancellable = g_cancellable_new ();

  gst_base_src_set_live (GST_BASE_SRC (self), TRUE);
  gst_base_src_set_format (GST_BASE_SRC (self), GST_FORMAT_TIME);
  gst_base_src_set_do_timestamp (GST_BASE_SRC (self), FALSE);
}

static void
gst_multi_tcp_src_finalize (GObject * object)
{
  GstMultiTcpSrc *self = GST_MULTI_TCP_SRC (object);

  g_free (self->host);
  g_free (self->stream_id);
  g_free (self->passphrase);
  g_free (self->local_addresses);
  g_free (self->tls_ca_file);
  g_free (self->tls_server_name);
  g_object_unref (self->cancellable);
  G_OBJECT_CLASS (parent_class)->finalize (object);
}

static void
gst_multi_tcp_src_set_property (GObject * object, guint prop_id,
    const GValue * value, GParamSpec * pspec)
{
  GstMultiTcpSrc *self = GST_MULTI_TCP_SRC (object);
  MtcpClient *client = NULL;

  GST_OBJECT_LOCK (self);
  switch (prop_id) {
    case PROP_HOST:
      g_free (self->host);
      self->host = g_value_dup_string (value);
      break;
    case PROP_MODE:
      self->mode = g_value_get_enum (value);
      break;
    case PROP_URI:
      GST_OBJECT_UNLOCK (self);
      gst_multi_tcp_uri_set_property (GST_ELEMENT (self), value);
      return;
    case PROP_PORT:
      self->port = g_value_get_int (value);
      break;
    case PROP_CONNECTIONS:
      self->connections = g_value_get_uint (value);
      client = self->client;
      break;
    case PROP_LATENCY:
      self->latency_ms = g_value_get_uint (value);
      break;
    case PROP_WINDOW_CONTROL:
      self->control.window = g_value_get_enum (value);
      break;
    case PROP_CONNECTION_CONTROL:
      self->control.connections = g_value_get_enum (value);
      break;
    case PROP_TARGET_BITRATE:
      self->control.target_bitrate = g_value_get_uint64 (value);
      break;
    case PROP_HEADROOM:
      self->control.headroom = g_value_get_double (value);
      break;
    case PROP_SAMPLING_INTERVAL:
      self->control.sampling_interval_ms = g_value_get_uint (value);
      break;
    case PROP_SMOOTHING:
      self->control.smoothing = g_value_get_double (value);
      break;
    case PROP_GUARD:
      self->control.guard = g_value_get_double (value);
      break;
    case PROP_SPIKE_FACTOR:
      self->control.spike_factor = g_value_get_double (value);
      break;
    case PROP_CONNECTION_BETA:
      self->control.conn_beta = g_value_get_double (value);
      break;
    case PROP_CONGESTION_FACTOR:
      self->control.congestion_factor = g_value_get_double (value);
      break;
    case PROP_RTT_ALPHA:
      self->control.iiad_alpha = g_value_get_double (value);
      break;
    case PROP_RTT_BETA:
      self->control.iiad_beta = g_value_get_double (value);
      break;
    case PROP_RTT_GAMMA:
      self->control.iiad_gamma = g_value_get_double (value);
      break;
    case PROP_RTT_REPORTS:
      self->control.iiad_reports = g_value_get_uint (value);
      break;
    case PROP_MIN_CONNECTIONS:
      self->control.min_connections = g_value_get_uint (value);
      break;
    case PROP_MAX_CONNECTIONS:
      self->control.max_connections = g_value_get_uint (value);
      break;
    case PROP_RETRY:
      self->retry = g_value_get_uint (value);
      break;
    case PROP_IDLE_TIMEOUT:
      self->idle_timeout = g_value_get_uint (value);
      break;
    case PROP_DRIFT_CORRECTION:
      self->drift_correction = g_value_get_boolean (value);
      break;
    case PROP_KEEP_LISTENING:
      self->keep_listening = g_value_get_boolean (value);
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
    case PROP_TLS:
      self->tls = g_value_get_boolean (value);
      break;
    case PROP_TLS_CA_FILE:
      g_free (self->tls_ca_file);
      self->tls_ca_file = g_value_dup_string (value);
      break;
    case PROP_TLS_VALIDATION_FLAGS:
      self->tls_validation_flags = g_value_get_flags (value);
      break;
    case PROP_TLS_SERVER_NAME:
      g_free (self->tls_server_name);
      self->tls_server_name = g_value_dup_string (value);
      break;
    case PROP_TIMEOUT:
      self->timeout = g_value_get_uint (value);
      break;
    case PROP_STATS_INTERVAL:
      self->stats_interval = g_value_get_uint (value);
      break;
    case PROP_MAX_FRAME_SIZE:
      self->max_frame_size = g_value_get_uint (value);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
  GST_OBJECT_UNLOCK (self);
  /* a new count while playing: open or retire connections */
  if (client && self->connections > 0)
    mtcp_client_set_connections (client, self->connections);
}

static void
gst_multi_tcp_src_get_property (GObject * object, guint prop_id,
    GValue * value, GParamSpec * pspec)
{
  GstMultiTcpSrc *self = GST_MULTI_TCP_SRC (object);

  if (prop_id == PROP_STATS) {
    MtcpClient *client;
    GST_OBJECT_LOCK (self);
    client = self->client;
    GST_OBJECT_UNLOCK (self);
    g_value_take_boxed (value, client ? mtcp_client_get_stats (client) :
        gst_structure_new_empty ("multitcpsrc-stats"));
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
    case PROP_MODE:
      g_value_set_enum (value, self->mode);
      break;
    case PROP_CURRENT_PORT:
      g_value_set_int (value, self->current_port);
      break;
    case PROP_URI:
      GST_OBJECT_UNLOCK (self);
      g_value_take_string (value, gst_multi_tcp_uri_get (GST_ELEMENT (self)));
      return;
    case PROP_PORT:
      g_value_set_int (value, self->port);
      break;
    case PROP_CONNECTIONS:
      g_value_set_uint (value, self->connections);
      break;
    case PROP_LATENCY:
      g_value_set_uint (value, self->latency_ms);
      break;
    case PROP_TIMEOUT:
      g_value_set_uint (value, self->timeout);
      break;
    case PROP_STATS_INTERVAL:
      g_value_set_uint (value, self->stats_interval);
      break;
    case PROP_MAX_FRAME_SIZE:
      g_value_set_uint (value, self->max_frame_size);
      break;
    case PROP_DRIFT_CORRECTION:
      g_value_set_boolean (value, self->drift_correction);
      break;
    case PROP_KEEP_LISTENING:
      g_value_set_boolean (value, self->keep_listening);
      break;
    case PROP_WINDOW_CONTROL:
      g_value_set_enum (value, self->control.window);
      break;
    case PROP_CONNECTION_CONTROL:
      g_value_set_enum (value, self->control.connections);
      break;
    case PROP_TARGET_BITRATE:
      g_value_set_uint64 (value, self->control.target_bitrate);
      break;
    case PROP_HEADROOM:
      g_value_set_double (value, self->control.headroom);
      break;
    case PROP_SAMPLING_INTERVAL:
      g_value_set_uint (value, self->control.sampling_interval_ms);
      break;
    case PROP_SMOOTHING:
      g_value_set_double (value, self->control.smoothing);
      break;
    case PROP_GUARD:
      g_value_set_double (value, self->control.guard);
      break;
    case PROP_SPIKE_FACTOR:
      g_value_set_double (value, self->control.spike_factor);
      break;
    case PROP_CONNECTION_BETA:
      g_value_set_double (value, self->control.conn_beta);
      break;
    case PROP_CONGESTION_FACTOR:
      g_value_set_double (value, self->control.congestion_factor);
      break;
    case PROP_RTT_ALPHA:
      g_value_set_double (value, self->control.iiad_alpha);
      break;
    case PROP_RTT_BETA:
      g_value_set_double (value, self->control.iiad_beta);
      break;
    case PROP_RTT_GAMMA:
      g_value_set_double (value, self->control.iiad_gamma);
      break;
    case PROP_RTT_REPORTS:
      g_value_set_uint (value, self->control.iiad_reports);
      break;
    case PROP_MIN_CONNECTIONS:
      g_value_set_uint (value, self->control.min_connections);
      break;
    case PROP_MAX_CONNECTIONS:
      g_value_set_uint (value, self->control.max_connections);
      break;
    case PROP_RETRY:
      g_value_set_uint (value, self->retry);
      break;
    case PROP_IDLE_TIMEOUT:
      g_value_set_uint (value, self->idle_timeout);
      break;
    case PROP_LOCAL_ADDRESSES:
      g_value_set_string (value, self->local_addresses);
      break;
    case PROP_TLS:
      g_value_set_boolean (value, self->tls);
      break;
    case PROP_TLS_CA_FILE:
      g_value_set_string (value, self->tls_ca_file);
      break;
    case PROP_TLS_VALIDATION_FLAGS:
      g_value_set_flags (value, self->tls_validation_flags);
      break;
    case PROP_TLS_SERVER_NAME:
      g_value_set_string (value, self->tls_server_name);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
  GST_OBJECT_UNLOCK (self);
}

/* From the client's I/O thread, every stats-interval ms. */
/* From the I/O thread, no lock of the client held: listening, a calling
 * sink came, went or was turned away; calling, a reconnect failed. */
static void
on_client_caller (MtcpCallerEvent event, const gchar * session_id,
    GSocketAddress * address, const gchar * reason, const gchar * kind,
    guint attempt, gpointer user_data)
{
  GstMultiTcpSrc *self = user_data;

  gst_multi_tcp_caller_tell (GST_ELEMENT (self), &self->callers, event,
      session_id, address, reason, kind, attempt);
}

/* From the I/O thread, no lock of the client held: may a calling sink's
 * new session in (caller-connecting)? */
static gboolean
on_client_accept (GSocketAddress * address, const gchar * stream_id,
    gpointer user_data)
{
  GstMultiTcpSrc *self = user_data;

  return gst_multi_tcp_caller_accept (GST_ELEMENT (self), &self->callers,
      address, stream_id);
}

static void
on_client_stats (GstStructure * stats, gpointer user_data)
{
  GstMultiTcpSrc *self = user_data;

  gst_element_post_message (GST_ELEMENT (self),
      gst_message_new_element (GST_OBJECT (self), stats));
}

static gboolean
gst_multi_tcp_src_start (GstBaseSrc * bsrc)
{
  GstMultiTcpSrc *self = GST_MULTI_TCP_SRC (bsrc);
  MtcpClientConfig config;
  MtcpClient *client;
  GError *err = NULL;

  GST_OBJECT_LOCK (self);
  config.listener = self->mode == GST_MULTI_TCP_MODE_LISTENER;
  if (!config.listener && self->port == 0) {
    GST_OBJECT_UNLOCK (self);
    GST_ELEMENT_ERROR (self, RESOURCE, SETTINGS, ("port=0: a caller needs "
            "the sink's port"), (NULL));
    return FALSE;
  }
  config.host = g_strdup (self->host);
  config.port = self->port;
  config.connections = self->connections;
  config.control = self->control;
  /* VariedConnVariedWinSize runs both algorithms */
  if (config.control.connections == MTCP_CONNECTION_CONTROL_CONGESTION)
    config.control.window = MTCP_WINDOW_CONTROL_ADJUST;
  config.control.min_connections = MAX (config.control.min_connections, 1);
  config.control.max_connections = MAX (config.control.max_connections,
      config.control.min_connections);
  config.latency = (GstClockTime) self->latency_ms * GST_MSECOND;
  config.timeout_s = self->timeout;
  config.max_frame = self->max_frame_size;
  config.feedback_interval_ms = FEEDBACK_INTERVAL_MS;
  config.retry = self->retry;
  config.idle_timeout_ms = self->idle_timeout;
  config.drift_correction = self->drift_correction;
  config.keep_listening = self->keep_listening;
  config.passphrase = self->passphrase;
  config.stream_id = self->stream_id;
  config.local_addresses = self->local_addresses;
  config.tls = self->tls;
  config.tls_ca_file = self->tls_ca_file;
  config.tls_validation_flags = self->tls_validation_flags;
  config.tls_server_name = self->tls_server_name;
  config.stats_interval_ms = self->stats_interval;
  self->have_offset = FALSE;
  self->pending_discont = TRUE;
  GST_OBJECT_UNLOCK (self);

  g_cancellable_reset (self->cancellable);
  client = mtcp_client_new (&config, on_client_stats, self);
  mtcp_client_set_caller_func (client, on_client_caller, self);
  mtcp_client_set_accept_func (client, on_client_accept, self);
  if (!mtcp_client_start (client, self->cancellable, &err)) {
    if (g_error_matches (err, G_IO_ERROR, G_IO_ERROR_CANCELLED)) {
      GST_DEBUG_OBJECT (self, "connecting cancelled");
    } else {
      if (config.listener)
        GST_ELEMENT_ERROR (self, RESOURCE, OPEN_READ,
            ("Could not listen on %s:%u", config.host, config.port), ("%s",
                err->message));
      else
        GST_ELEMENT_ERROR (self, RESOURCE, OPEN_READ,
            ("Could not connect to multitcpsink at %s:%u", config.host,
                config.port), ("%s", err->message));
    }
    g_error_free (err);
    g_free (config.host);
    mtcp_client_free (client);
    return FALSE;
  }
  if (config.listener)
    GST_INFO_OBJECT (self, "listening on %s:%u for a sink's calls, latency "
        "%u ms", config.host, mtcp_client_get_port (client),
        (guint) (config.latency / GST_MSECOND));
  else
    GST_INFO_OBJECT (self, "session %s with %s:%u, %u connections, latency "
        "%u ms", mtcp_client_get_session_id (client), config.host,
        config.port, config.connections,
        (guint) (config.latency / GST_MSECOND));
  g_free (config.host);

  GST_OBJECT_LOCK (self);
  self->client = client;
  self->current_port = mtcp_client_get_port (client);
  GST_OBJECT_UNLOCK (self);
  g_object_notify (G_OBJECT (self), "current-port");
  return TRUE;
}

static gboolean
gst_multi_tcp_src_stop (GstBaseSrc * bsrc)
{
  GstMultiTcpSrc *self = GST_MULTI_TCP_SRC (bsrc);
  MtcpClient *client;

  GST_OBJECT_LOCK (self);
  client = self->client;
  self->client = NULL;
  self->current_port = 0;
  GST_OBJECT_UNLOCK (self);
  if (client)
    mtcp_client_free (client);
  return TRUE;
}

/* Local monotonic time -> running time, measured once so the mapping does
 * not jitter from buffer to buffer. */
static GstClockTime
to_running_time (GstMultiTcpSrc * self, GstClockTime local)
{
  gint64 t;

  if (!GST_CLOCK_TIME_IS_VALID (local))
    return GST_CLOCK_TIME_NONE;
  /* called with the first buffer's DTS first: the earliest time it maps */
  if (!self->have_offset) {
    GstClock *clock = gst_element_get_clock (GST_ELEMENT (self));
    GstClockTime base = gst_element_get_base_time (GST_ELEMENT (self));
    GstClockTime now_local = mtcp_client_now ();

    if (clock) {
      GstClockTime now = gst_clock_get_time (clock);
      self->running_offset = (gint64) (now - base) - (gint64) now_local;
      /* a first buffer mapped before the pipeline started would come out
       * at a negative time: start it at zero, later ones keep their spacing */
      if ((gint64) local + self->running_offset < 0)
        self->running_offset = -(gint64) local;
      gst_object_unref (clock);
    } else {
      /* no clock (not in a pipeline that runs): start at zero */
      self->running_offset = -(gint64) local;
    }
    self->have_offset = TRUE;
  }
  t = (gint64) local + self->running_offset;
  return t < 0 ? 0 : (GstClockTime) t;
}

static GstFlowReturn
gst_multi_tcp_src_create (GstPushSrc * psrc, GstBuffer ** outbuf)
{
  GstMultiTcpSrc *self = GST_MULTI_TCP_SRC (psrc);

  for (;;) {
    MtcpItem item = { 0, };
    GError *err = NULL;

    switch (mtcp_client_pop (self->client, &item, &err)) {
      case MTCP_POP_FLUSHING:
        return GST_FLOW_FLUSHING;
      case MTCP_POP_ERROR:
        GST_ELEMENT_ERROR (self, RESOURCE, READ,
            ("Lost the stream from %s:%u", self->host, self->port),
            ("%s", err->message));
        g_error_free (err);
        return GST_FLOW_ERROR;
      case MTCP_POP_OK:
        break;
    }
    if (item.discont)
      self->pending_discont = TRUE;

    switch (item.kind) {
      case MTCP_ITEM_CAPS:
        GST_DEBUG_OBJECT (self, "caps %" GST_PTR_FORMAT, item.caps);
        if (!gst_base_src_set_caps (GST_BASE_SRC (self), item.caps))
          GST_WARNING_OBJECT (self, "downstream refused %" GST_PTR_FORMAT,
              item.caps);
        mtcp_item_clear (&item);
        continue;
      case MTCP_ITEM_EOS:
        GST_INFO_OBJECT (self, "EOS from the sender");
        return GST_FLOW_EOS;
      case MTCP_ITEM_BUFFER:{
        GstBuffer *buf = item.buffer;

        GST_BUFFER_DTS (buf) = to_running_time (self, GST_BUFFER_DTS (buf));
        GST_BUFFER_PTS (buf) = to_running_time (self, GST_BUFFER_PTS (buf));
        if (self->pending_discont) {
          GST_BUFFER_FLAG_SET (buf, GST_BUFFER_FLAG_DISCONT);
          self->pending_discont = FALSE;
        }
        GST_LOG_OBJECT (self, "seq %" G_GUINT64_FORMAT " pts %" GST_TIME_FORMAT
            " size %" G_GSIZE_FORMAT, item.seq,
            GST_TIME_ARGS (GST_BUFFER_PTS (buf)), gst_buffer_get_size (buf));
        *outbuf = buf;
        return GST_FLOW_OK;
      }
    }
  }
}

static gboolean
gst_multi_tcp_src_query (GstBaseSrc * bsrc, GstQuery * query)
{
  GstMultiTcpSrc *self = GST_MULTI_TCP_SRC (bsrc);

  if (GST_QUERY_TYPE (query) == GST_QUERY_LATENCY) {
    GstClockTime latency;
    GST_OBJECT_LOCK (self);
    latency = (GstClockTime) self->latency_ms * GST_MSECOND;
    GST_OBJECT_UNLOCK (self);
    gst_query_set_latency (query, TRUE, latency, latency);
    return TRUE;
  }
  return GST_BASE_SRC_CLASS (parent_class)->query (bsrc, query);
}

static gboolean
gst_multi_tcp_src_unlock (GstBaseSrc * bsrc)
{
  GstMultiTcpSrc *self = GST_MULTI_TCP_SRC (bsrc);

  g_cancellable_cancel (self->cancellable);
  if (self->client)
    mtcp_client_set_flushing (self->client, TRUE);
  return TRUE;
}

static gboolean
gst_multi_tcp_src_unlock_stop (GstBaseSrc * bsrc)
{
  GstMultiTcpSrc *self = GST_MULTI_TCP_SRC (bsrc);

  g_cancellable_reset (self->cancellable);
  if (self->client)
    mtcp_client_set_flushing (self->client, FALSE);
  return TRUE;
}

/* ---- GstURIHandler: multitcp:// (gstmultitcpuri.h) ---- */

static GstURIType
gst_multi_tcp_src_uri_get_type (GType type)
{
  return GST_URI_SRC;
}

static void
gst_multi_tcp_src_uri_handler_init (gpointer g_iface, gpointer iface_data)
{
  GstURIHandlerInterface *iface = g_iface;

  iface->get_type = gst_multi_tcp_src_uri_get_type;
  gst_multi_tcp_uri_handler_fill (iface);
}

static void
gst_multi_tcp_src_class_init (GstMultiTcpSrcClass * klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);
  GstBaseSrcClass *basesrc_class = GST_BASE_SRC_CLASS (klass);
  GstPushSrcClass *pushsrc_class = GST_PUSH_SRC_CLASS (klass);

  GST_DEBUG_CATEGORY_INIT (multitcpsrc_debug, "multitcpsrc", 0,
      "multitcp source element");

  gst_multi_tcp_caller_install_signals (G_TYPE_FROM_CLASS (klass), signals);

  gobject_class->set_property = gst_multi_tcp_src_set_property;
  gobject_class->get_property = gst_multi_tcp_src_get_property;
  gobject_class->finalize = gst_multi_tcp_src_finalize;

  /**
   * GstMultiTcpSrc:mode:
   *
   * Since: 0.1
   */
  g_object_class_install_property (gobject_class, PROP_MODE,
      g_param_spec_enum ("mode", "Mode",
          "caller: dial the multitcpsink at host:port; listener: listen on "
          "host:port for a multitcpsink mode=caller (one stream; it dials as "
          "many connections as this source asks for, and this source still "
          "drives windows and the count)", GST_TYPE_MULTI_TCP_MODE,
          DEFAULT_MODE, G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
  /**
   * GstMultiTcpSrc:host:
   *
   * Since: 0.1
   */
  g_object_class_install_property (gobject_class, PROP_HOST,
      g_param_spec_string ("host", "Host", "caller: the multitcpsink to "
          "connect to; listener: the address to listen on (0.0.0.0 = every "
          "IPv4 interface)", DEFAULT_HOST,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
  /**
   * GstMultiTcpSrc:port:
   *
   * Since: 0.1
   */
  g_object_class_install_property (gobject_class, PROP_PORT,
      g_param_spec_int ("port", "Port", "caller: the sink's port; listener: "
          "the port to listen on (0 = pick a free one, see current-port)", 0,
          G_MAXUINT16, DEFAULT_PORT,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
  /**
   * GstMultiTcpSrc:current-port:
   *
   * Since: 0.1
   */
  g_object_class_install_property (gobject_class, PROP_CURRENT_PORT,
      g_param_spec_int ("current-port", "Current port",
          "listener: the port listened on (0 when not listening)", 0,
          G_MAXUINT16, 0, G_PARAM_READABLE | G_PARAM_STATIC_STRINGS));
  /**
   * GstMultiTcpSrc:uri:
   *
   * Since: 0.1
   */
  g_object_class_install_property (gobject_class, PROP_URI,
      g_param_spec_string ("uri", "URI",
          "multitcp://host:port to dial a multitcpsink, multitcp://:port to "
          "listen for one that dials; other properties as query keys "
          "(multitcp://ingest.example:5600?latency=2000&passphrase=...)",
          NULL, G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
  /**
   * GstMultiTcpSrc:connections:
   *
   * Since: 0.1
   */
  g_object_class_install_property (gobject_class, PROP_CONNECTIONS,
      g_param_spec_uint ("connections", "Connections",
          "TCP connections in the session (with connection-control=fixed, "
          "and where share starts from; "
          "can change while playing; 0 (default) = 5, then ParS's model, up "
          "to max-connections, once RTT and "
          "loss are known (for a sink on bbr, whose rate loss does not "
          "bound, as without loss: min-connections; otherwise, with fixed "
          "or share, once more 5 s later, from the loss after the "
          "connections' slow starts), and a connection-control goes on "
          "from there; with fixed, a stored stream the sink paces "
          "(network-friendly) gets its count from the playout buffer the "
          "sink keeps instead, from 5: half as many (two at least) after "
          "it held 80% of the latency's worth for 5 s, one more when it "
          "is below half or short for 10 s)",
          0, 1024, DEFAULT_CONNECTIONS,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
          GST_PARAM_MUTABLE_PLAYING));
  /**
   * GstMultiTcpSrc:window-control:
   *
   * Since: 0.1
   */
  g_object_class_install_property (gobject_class, PROP_WINDOW_CONTROL,
      g_param_spec_enum ("window-control", "Window control",
          "How each connection's receive window is set",
          GST_TYPE_MULTI_TCP_WINDOW_CONTROL, DEFAULT_WINDOW_CONTROL,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
  /**
   * GstMultiTcpSrc:connection-control:
   *
   * Since: 0.1
   */
  g_object_class_install_property (gobject_class, PROP_CONNECTION_CONTROL,
      g_param_spec_enum ("connection-control", "Connection control",
          "How many connections the session uses",
          GST_TYPE_MULTI_TCP_CONNECTION_CONTROL, DEFAULT_CONNECTION_CONTROL,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
  /**
   * GstMultiTcpSrc:target-bitrate:
   *
   * Since: 0.1
   */
  g_object_class_install_property (gobject_class, PROP_TARGET_BITRATE,
      g_param_spec_uint64 ("target-bitrate", "Target bitrate",
          "Throughput to hold, T_d, in bit/s (0 = the stream's bitrate as "
          "the sink measures it, times headroom)", 0, G_MAXUINT64,
          DEFAULT_TARGET_BITRATE, G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
  /**
   * GstMultiTcpSrc:headroom:
   *
   * Since: 0.1
   */
  g_object_class_install_property (gobject_class, PROP_HEADROOM,
      g_param_spec_double ("headroom", "Headroom",
          "Target over stream bitrate when target-bitrate is 0 "
          "(DMP-streaming: 1.6)", 1.0, 100.0, DEFAULT_HEADROOM,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
  /**
   * GstMultiTcpSrc:sampling-interval:
   *
   * Since: 0.1
   */
  g_object_class_install_property (gobject_class, PROP_SAMPLING_INTERVAL,
      g_param_spec_uint ("sampling-interval", "Sampling interval",
          "Controller interval delta in ms (0 = 6 RTT)", 0, 60000,
          DEFAULT_SAMPLING_INTERVAL,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
  /**
   * GstMultiTcpSrc:smoothing:
   *
   * Since: 0.1
   */
  g_object_class_install_property (gobject_class, PROP_SMOOTHING,
      g_param_spec_double ("smoothing", "Smoothing",
          "Throughput smoothing factor alpha: weight of the previous "
          "measurement", 0.0, 1.0, DEFAULT_SMOOTHING,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
  /**
   * GstMultiTcpSrc:guard:
   *
   * Since: 0.1
   */
  g_object_class_install_property (gobject_class, PROP_GUARD,
      g_param_spec_double ("guard", "Guard",
          "Guarding threshold lambda in bytes/s above the target before "
          "windows shrink", 0.0, G_MAXDOUBLE, DEFAULT_GUARD,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
  /**
   * GstMultiTcpSrc:spike-factor:
   *
   * Since: 0.1
   */
  g_object_class_install_property (gobject_class, PROP_SPIKE_FACTOR,
      g_param_spec_double ("spike-factor", "Spike factor",
          "f: the window sum stays under f * T_d * RTT / MSS", 1.0, 1000.0,
          DEFAULT_SPIKE_FACTOR, G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
  /**
   * GstMultiTcpSrc:connection-beta:
   *
   * Since: 0.1
   */
  g_object_class_install_property (gobject_class, PROP_CONNECTION_BETA,
      g_param_spec_double ("connection-beta", "Connection beta",
          "MultiTCP beta: change in congestion ratio before a connection is "
          "started or stopped", 0.0, 100.0, DEFAULT_CONNECTION_BETA,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
  /**
   * GstMultiTcpSrc:congestion-factor:
   *
   * Since: 0.1
   */
  g_object_class_install_property (gobject_class, PROP_CONGESTION_FACTOR,
      g_param_spec_double ("congestion-factor", "Congestion factor",
          "MultiTCP cf: congestion ratio from which connections are stopped",
          1.0, 1000.0, DEFAULT_CONGESTION_FACTOR,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
  /**
   * GstMultiTcpSrc:rtt-alpha:
   *
   * Since: 0.1
   */
  g_object_class_install_property (gobject_class, PROP_RTT_ALPHA,
      g_param_spec_double ("rtt-alpha", "RTT alpha",
          "MULTFRC alpha: n grows by alpha/n while RTT stays low", 0.0, 100.0,
          DEFAULT_RTT_ALPHA, G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
  /**
   * GstMultiTcpSrc:rtt-beta:
   *
   * Since: 0.1
   */
  g_object_class_install_property (gobject_class, PROP_RTT_BETA,
      g_param_spec_double ("rtt-beta", "RTT beta",
          "MULTFRC beta: n shrinks by beta when a queue builds", 0.0, 100.0,
          DEFAULT_RTT_BETA, G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
  /**
   * GstMultiTcpSrc:rtt-gamma:
   *
   * Since: 0.1
   */
  g_object_class_install_property (gobject_class, PROP_RTT_GAMMA,
      g_param_spec_double ("rtt-gamma", "RTT gamma",
          "MULTFRC gamma: tolerated RTT inflation over rtt_min, as a fraction",
          0.0, 100.0, DEFAULT_RTT_GAMMA,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
  /**
   * GstMultiTcpSrc:rtt-reports:
   *
   * Since: 0.1
   */
  g_object_class_install_property (gobject_class, PROP_RTT_REPORTS,
      g_param_spec_uint ("rtt-reports", "RTT reports",
          "MULTFRC m: RTT samples averaged per decision", 1, 1000,
          DEFAULT_RTT_REPORTS, G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
  /**
   * GstMultiTcpSrc:stream-id:
   *
   * Since: 0.1
   */
  g_object_class_install_property (gobject_class, PROP_STREAM_ID,
      g_param_spec_string ("stream-id", "Stream ID",
          "Which stream, as SRT's streamid (at most 200 bytes of UTF-8): "
          "caller: named to the listening multitcpsink, which refuses another (an error, no retries); listener: a calling multitcpsink must name this one (unset: any). Not covered by the passphrase's "
          "proofs: with TLS it is private, without it anyone on the path "
          "reads it", NULL, G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
  /**
   * GstMultiTcpSrc:passphrase:
   *
   * Since: 0.1
   */
  g_object_class_install_property (gobject_class, PROP_PASSPHRASE,
      g_param_spec_string ("passphrase", "Passphrase",
          "Proven to a sink that asks for one, which must prove it too (PBKDF2 key, HMAC-SHA256 challenge on every connection); a wrong one, or a sink that does not prove it, is an error, not retried. Write-only", NULL,
          G_PARAM_WRITABLE | G_PARAM_STATIC_STRINGS));
  /**
   * GstMultiTcpSrc:tls:
   *
   * Since: 0.1
   */
  g_object_class_install_property (gobject_class, PROP_TLS,
      g_param_spec_boolean ("tls", "TLS",
          "TLS on every connection (the sink needs tls=true too)", FALSE,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
  /**
   * GstMultiTcpSrc:tls-ca-file:
   *
   * Since: 0.1
   */
  g_object_class_install_property (gobject_class, PROP_TLS_CA_FILE,
      g_param_spec_string ("tls-ca-file", "TLS CA file",
          "PEM file of the certificate authorities (or the self-signed "
          "certificate) to trust; NULL = the system's", NULL,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
  /**
   * GstMultiTcpSrc:tls-validation-flags:
   *
   * Since: 0.1
   */
  g_object_class_install_property (gobject_class, PROP_TLS_VALIDATION_FLAGS,
      g_param_spec_flags ("tls-validation-flags", "TLS validation flags",
          "Certificate problems that refuse the sink", G_TYPE_TLS_CERTIFICATE_FLAGS,
          G_TLS_CERTIFICATE_VALIDATE_ALL,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
  /**
   * GstMultiTcpSrc:tls-server-name:
   *
   * Since: 0.1
   */
  g_object_class_install_property (gobject_class, PROP_TLS_SERVER_NAME,
      g_param_spec_string ("tls-server-name", "TLS server name",
          "mode=caller: name the sink's certificate must carry; NULL = host "
          "(a listening source is the TLS server: it has no use for it)", NULL,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
  /**
   * GstMultiTcpSrc:local-addresses:
   *
   * Since: 0.1
   */
  g_object_class_install_property (gobject_class, PROP_LOCAL_ADDRESSES,
      g_param_spec_string ("local-addresses", "Local addresses",
          "Comma-separated local IP addresses the connections are spread "
          "over evenly (one per uplink of a multihomed receiver; the "
          "system's routing must send each source address out of its "
          "interface); NULL = the kernel's choice", NULL,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
  /**
   * GstMultiTcpSrc:idle-timeout:
   *
   * Since: 0.1
   */
  g_object_class_install_property (gobject_class, PROP_IDLE_TIMEOUT,
      g_param_spec_uint ("idle-timeout", "Idle timeout",
          "Milliseconds without anything from the sink on a connection (it "
          "sends a report every 400 ms at least) before it is taken for dead and "
          "replaced (0 = never)", 0, G_MAXINT, DEFAULT_IDLE_TIMEOUT,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
  /**
   * GstMultiTcpSrc:retry:
   *
   * Since: 0.1
   */
  g_object_class_install_property (gobject_class, PROP_RETRY,
      g_param_spec_uint ("retry", "Retry",
          "Failed attempts in a row to replace lost connections (with "
          "backoff and jitter, up to 1 s apart) before the source gives up "
          "with an error; 0 = do not reconnect", 0, G_MAXINT, DEFAULT_RETRY,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
  /**
   * GstMultiTcpSrc:min-connections:
   *
   * Since: 0.1
   */
  g_object_class_install_property (gobject_class, PROP_MIN_CONNECTIONS,
      g_param_spec_uint ("min-connections", "Min connections",
          "Fewest connections the controllers use", 1, 1024,
          DEFAULT_MIN_CONNECTIONS, G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
  /**
   * GstMultiTcpSrc:max-connections:
   *
   * Since: 0.1
   */
  g_object_class_install_property (gobject_class, PROP_MAX_CONNECTIONS,
      g_param_spec_uint ("max-connections", "Max connections",
          "Most connections the controllers use, and the bound on ParS's count "
          "(connections=0)", 1, 1024,
          DEFAULT_MAX_CONNECTIONS, G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
  /**
   * GstMultiTcpSrc:latency:
   *
   * Since: 0.1
   */
  g_object_class_install_property (gobject_class, PROP_LATENCY,
      g_param_spec_uint ("latency", "Latency",
          "Milliseconds between a buffer's mapped sender time and its "
          "playback deadline: the startup delay the reorder buffer may use",
          0, G_MAXINT, DEFAULT_LATENCY_MS,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
  /**
   * GstMultiTcpSrc:timeout:
   *
   * Since: 0.1
   */
  g_object_class_install_property (gobject_class, PROP_TIMEOUT,
      g_param_spec_uint ("timeout", "Timeout",
          "Seconds to wait for connecting and for data before failing; "
          "mode=listener: seconds without a connection after which the "
          "sender has left (see keep-listening); a listener waits for its "
          "first sender without limit, as srtsrc does (0 = wait forever)", 0,
          G_MAXINT, DEFAULT_TIMEOUT,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
  /**
   * GstMultiTcpSrc:stats-interval:
   *
   * Since: 0.1
   */
  g_object_class_install_property (gobject_class, PROP_STATS_INTERVAL,
      g_param_spec_uint ("stats-interval", "Stats interval",
          "Post the stats as an element message every this many ms "
          "(0 = never)", 0, G_MAXINT, DEFAULT_STATS_INTERVAL,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
  /**
   * GstMultiTcpSrc:max-frame-size:
   *
   * Since: 0.1
   */
  g_object_class_install_property (gobject_class, PROP_MAX_FRAME_SIZE,
      g_param_spec_uint ("max-frame-size", "Max frame size",
          "Largest frame body accepted from the sink, in bytes",
          MTCP_MAX_FRAME_MIN,
          MTCP_MAX_FRAME_LIMIT, DEFAULT_MAX_FRAME_SIZE,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
  /**
   * GstMultiTcpSrc:drift-correction:
   *
   * Since: 0.1
   */
  g_object_class_install_property (gobject_class, PROP_DRIFT_CORRECTION,
      g_param_spec_boolean ("drift-correction", "Drift correction",
          "Follow the sender's clock rate: estimate the skew from the lowest "
          "arrival delays and move the sender-to-local time mapping with it, "
          "so that a sender clock faster or slower than ours neither fills "
          "the buffer nor makes buffers late", DEFAULT_DRIFT_CORRECTION,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
  /**
   * GstMultiTcpSrc:keep-listening:
   *
   * Since: 0.1
   */
  g_object_class_install_property (gobject_class, PROP_KEEP_LISTENING,
      g_param_spec_boolean ("keep-listening", "Keep listening",
          "mode=listener: after the sender leaves (its end of stream, or no "
          "connection from it for `timeout` seconds), wait for the next "
          "sender and go on with its stream (DISCONT, its caps) instead of "
          "ending the stream (EOS)", DEFAULT_KEEP_LISTENING,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
  /**
   * GstMultiTcpSrc:stats:
   *
   * Since: 0.1
   */
  g_object_class_install_property (gobject_class, PROP_STATS,
      g_param_spec_boxed ("stats", "Statistics",
          "Bitrate, buffers pushed, late, skipped, late fraction, reorder "
          "depth, clock skew (ppm) and drift correction (ns), and per "
          "connection bytes, RTT and state",
          GST_TYPE_STRUCTURE, G_PARAM_READABLE | G_PARAM_STATIC_STRINGS));

  gst_element_class_add_static_pad_template (element_class, &src_template);
  gst_element_class_set_static_metadata (element_class,
      "Multi-connection TCP source", "Source/Network",
      "Receives a stream from multitcpsink over several TCP connections",
      "the multitcp authors");

  basesrc_class->start = GST_DEBUG_FUNCPTR (gst_multi_tcp_src_start);
  basesrc_class->stop = GST_DEBUG_FUNCPTR (gst_multi_tcp_src_stop);
  basesrc_class->query = GST_DEBUG_FUNCPTR (gst_multi_tcp_src_query);
  basesrc_class->unlock = GST_DEBUG_FUNCPTR (gst_multi_tcp_src_unlock);
  basesrc_class->unlock_stop = GST_DEBUG_FUNCPTR (gst_multi_tcp_src_unlock_stop);
  pushsrc_class->create = GST_DEBUG_FUNCPTR (gst_multi_tcp_src_create);

  gst_type_mark_as_plugin_api (GST_TYPE_MULTI_TCP_WINDOW_CONTROL, 0);
  gst_type_mark_as_plugin_api (GST_TYPE_MULTI_TCP_CONNECTION_CONTROL, 0);
}

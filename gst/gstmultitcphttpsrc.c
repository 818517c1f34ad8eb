/* multitcp
 * Copyright (C) 2026 the multitcp authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
/**
 * SECTION:element-multitcphttpsrc
 * @title: multitcphttpsrc
 *
 * Reads an http:// or https:// resource chunk by chunk, each chunk fetched
 * as byte ranges over several TCP connections at once (ParS, Algorithm 1):
 * on a path where one connection gets a fraction of the link (loss, long
 * RTT), n connections get more, and every chunk arrives sooner than if each
 * connection fetched a chunk of its own.
 *
 * |[
 * gst-launch-1.0 multitcphttpsrc location=https://example.com/video.mp4 \
 *     connections=4 ! qtdemux ! h264parse ! avdec_h264 ! autovideosink
 * ]|
 *
 * Seekable in bytes, and works in pull mode (qtdemux reads an MP4 whose
 * index is at its end). A server that ignores Range (answers 200) is read
 * over one connection, not seekable. To have playbin, uridecodebin or
 * hlsdemux pick it over souphttpsrc, raise its rank with GStreamer's own
 * variable: `GST_PLUGIN_FEATURE_RANK=multitcphttpsrc:257` (PRIMARY + 1;
 * the variable takes a number or a rank name, not a sum).
 *
 * Since: 0.1
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstmultitcphttpsrc.h"

#include <string.h>

GST_DEBUG_CATEGORY_STATIC (gst_multi_tcp_http_src_debug);
#define GST_CAT_DEFAULT gst_multi_tcp_http_src_debug

#define DEFAULT_CONNECTIONS 4
#define MAX_CONNECTIONS 16
/* connections=0: the most the model picks (the 1-8 range) and the
 * share of the link Eq. 1's count aims at */
#define MODEL_MAX_CONNECTIONS 8
#define MODEL_SHARE 0.8
#define DEFAULT_CHUNK_SIZE (2 * 1024 * 1024)
#define MIN_CHUNK_SIZE 1024
/* chunks smaller than this (a resource's tail) tell the model nothing */
#define MODEL_MIN_CHUNK (64 * 1024)
#define DEFAULT_REASSEMBLY GST_MULTI_TCP_HTTP_REASSEMBLY_IN_ORDER
#define DEFAULT_KEEP_ALIVE TRUE
#define DEFAULT_USER_AGENT "multitcphttpsrc/" VERSION
#define DEFAULT_TIMEOUT 15
#define DEFAULT_RETRIES 3
#define DEFAULT_SSL_STRICT TRUE

enum {
  PROP_0,
  PROP_LOCATION,
  PROP_CONNECTIONS,
  PROP_CHUNK_SIZE,
  PROP_REASSEMBLY,
  PROP_KEEP_ALIVE,
  PROP_USER_AGENT,
  PROP_TIMEOUT,
  PROP_RETRIES,
  PROP_SSL_STRICT,
  PROP_STATS,
};

static GstStaticPadTemplate src_template = GST_STATIC_PAD_TEMPLATE ("src",
    GST_PAD_SRC, GST_PAD_ALWAYS, GST_STATIC_CAPS_ANY);

static void gst_multi_tcp_http_src_uri_init (gpointer g_iface,
    gpointer iface_data);

G_DEFINE_TYPE_WITH_CODE (GstMultiTcpHttpSrc, gst_multi_tcp_http_src,
    GST_TYPE_BASE_SRC, G_IMPLEMENT_INTERFACE (GST_TYPE_URI_HANDLER,
        gst_multi_tcp_http_src_uri_init));

#define GST_TYPE_MULTI_TCP_HTTP_REASSEMBLY \
    (gst_multi_tcp_http_reassembly_get_type ())
static GType
gst_multi_tcp_http_reassembly_get_type (void)
{
  static GType type = 0;
  static const GEnumValue values[] = {
    {GST_MULTI_TCP_HTTP_REASSEMBLY_CHUNK,
          "Push a chunk once all its parts are in (ParS, Alg. 1 line 14)",
        "chunk"},
    {GST_MULTI_TCP_HTTP_REASSEMBLY_IN_ORDER,
        "Push what is in without a gap as it arrives", "in-order"},
    {0, NULL, NULL},
  };

  if (g_once_init_enter (&type)) {
    GType t = g_enum_register_static ("GstMultiTcpHttpReassembly", values);
    g_once_init_leave (&type, t);
  }
  return type;
}

static void
gst_multi_tcp_http_src_init (GstMultiTcpHttpSrc * self)
{
  self->connections = DEFAULT_CONNECTIONS;
  self->chunk_size = DEFAULT_CHUNK_SIZE;
  self->reassembly = DEFAULT_REASSEMBLY;
  self->keep_alive = DEFAULT_KEEP_ALIVE;
  self->user_agent = g_strdup (DEFAULT_USER_AGENT);
  self->timeout = DEFAULT_TIMEOUT;
  self->retries = DEFAULT_RETRIES;
  self->ssl_strict = DEFAULT_SSL_STRICT;
  self->size = G_MAXUINT64;
  self->stop = G_MAXUINT64;
  gst_base_src_set_format (GST_BASE_SRC (self), GST_FORMAT_BYTES);
}

static void
gst_multi_tcp_http_src_finalize (GObject * object)
{
  GstMultiTcpHttpSrc *self = GST_MULTI_TCP_HTTP_SRC (object);

  g_free (self->location);
  g_free (self->user_agent);
  G_OBJECT_CLASS (gst_multi_tcp_http_src_parent_class)->finalize (object);
}

static gboolean
set_location (GstMultiTcpHttpSrc * self, const gchar * uri, GError ** error)
{
  GstState state;

  GST_OBJECT_LOCK (self);
  state = GST_STATE (self);
  if (state != GST_STATE_READY && state != GST_STATE_NULL) {
    GST_OBJECT_UNLOCK (self);
    g_set_error (error, GST_URI_ERROR, GST_URI_ERROR_BAD_STATE,
        "the location can only change in the NULL or READY state");
    return FALSE;
  }
  if (uri && !g_str_has_prefix (uri, "http://") &&
      !g_str_has_prefix (uri, "https://")) {
    GST_OBJECT_UNLOCK (self);
    g_set_error (error, GST_URI_ERROR, GST_URI_ERROR_UNSUPPORTED_PROTOCOL,
        "%s: not an http:// or https:// URI", uri);
    return FALSE;
  }
  g_free (self->location);
  self->location = g_strdup (uri);
  GST_OBJECT_UNLOCK (self);
  return TRUE;
}

static GstStructure *
get_stats (GstMultiTcpHttpSrc * self)
{
  GstStructure *s = gst_structure_new ("multitcphttpsrc-stats",
      "connections", G_TYPE_UINT, self->count,
      "one-connection", G_TYPE_BOOLEAN, self->one_connection,
      "size", G_TYPE_UINT64, self->size, NULL);

  if (self->probe.count && self->probe.capacity > 0)
    gst_structure_set (s, "model-capacity", G_TYPE_DOUBLE,
        self->probe.capacity * 8, "model-others", G_TYPE_DOUBLE,
        self->probe.others, NULL);
  if (self->fetch) {
    gchar *uri = mtcp_http_fetch_get_uri (self->fetch);
    gst_structure_set (s, "uri", G_TYPE_STRING, uri, NULL);
    g_free (uri);
    mtcp_http_fetch_add_stats (self->fetch, s);
  }
  return s;
}

static void
gst_multi_tcp_http_src_set_property (GObject * object, guint prop_id,
    const GValue * value, GParamSpec * pspec)
{
  GstMultiTcpHttpSrc *self = GST_MULTI_TCP_HTTP_SRC (object);
  GError *err = NULL;

  if (prop_id == PROP_LOCATION) {
    if (!set_location (self, g_value_get_string (value), &err)) {
      GST_WARNING_OBJECT (self, "location not set: %s", err->message);
      g_error_free (err);
    }
    return;
  }
  GST_OBJECT_LOCK (self);
  switch (prop_id) {
    case PROP_CONNECTIONS:
      self->connections = g_value_get_uint (value);
      break;
    case PROP_CHUNK_SIZE:
      self->chunk_size = g_value_get_uint (value);
      break;
    case PROP_REASSEMBLY:
      self->reassembly = g_value_get_enum (value);
      break;
    case PROP_KEEP_ALIVE:
      self->keep_alive = g_value_get_boolean (value);
      break;
    case PROP_USER_AGENT:
      g_free (self->user_agent);
      self->user_agent = g_value_dup_string (value);
      break;
    case PROP_TIMEOUT:
      self->timeout = g_value_get_uint (value);
      break;
    case PROP_RETRIES:
      self->retries = g_value_get_uint (value);
      break;
    case PROP_SSL_STRICT:
      self->ssl_strict = g_value_get_boolean (value);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
  GST_OBJECT_UNLOCK (self);
}

static void
gst_multi_tcp_http_src_get_property (GObject * object, guint prop_id,
    GValue * value, GParamSpec * pspec)
{
  GstMultiTcpHttpSrc *self = GST_MULTI_TCP_HTTP_SRC (object);

  GST_OBJECT_LOCK (self);
  switch (prop_id) {
    case PROP_LOCATION:
      g_value_set_string (value, self->location);
      break;
    case PROP_CONNECTIONS:
      g_value_set_uint (value, self->connections);
      break;
    case PROP_CHUNK_SIZE:
      g_value_set_uint (value, self->chunk_size);
      break;
    case PROP_REASSEMBLY:
      g_value_set_enum (value, self->reassembly);
      break;
    case PROP_KEEP_ALIVE:
      g_value_set_boolean (value, self->keep_alive);
      break;
    case PROP_USER_AGENT:
      g_value_set_string (value, self->user_agent);
      break;
    case PROP_TIMEOUT:
      g_value_set_uint (value, self->timeout);
      break;
    case PROP_RETRIES:
      g_value_set_uint (value, self->retries);
      break;
    case PROP_SSL_STRICT:
      g_value_set_boolean (value, self->ssl_strict);
      break;
    case PROP_STATS:
      g_value_take_boxed (value, get_stats (self));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
  GST_OBJECT_UNLOCK (self);
}

/* An HTTP failure as the element error a user can act on: the URL, what
 * the server said. */
static void
post_error (GstMultiTcpHttpSrc * self, const GError * err, gboolean opening)
{
  gchar *uri = self->fetch ? mtcp_http_fetch_get_uri (self->fetch) :
      g_strdup (self->location);

  if (err->domain == MTCP_HTTP_ERROR && err->code == 404) {
    GST_ELEMENT_ERROR (self, RESOURCE, NOT_FOUND, ("Not found: %s", uri),
        ("%s", err->message));
  } else if (err->domain == MTCP_HTTP_ERROR && (err->code == 401 ||
          err->code == 403)) {
    GST_ELEMENT_ERROR (self, RESOURCE, NOT_AUTHORIZED,
        ("Not authorized to read %s", uri), ("%s", err->message));
  } else if (opening) {
    GST_ELEMENT_ERROR (self, RESOURCE, OPEN_READ, ("Could not open %s", uri),
        ("%s", err->message));
  } else {
    GST_ELEMENT_ERROR (self, RESOURCE, READ, ("Could not read %s", uri),
        ("%s", err->message));
  }
  g_free (uri);
}

static gboolean
gst_multi_tcp_http_src_start (GstBaseSrc * src)
{
  GstMultiTcpHttpSrc *self = GST_MULTI_TCP_HTTP_SRC (src);
  MtcpHttpFetchConfig config;
  GError *err = NULL;
  gchar *location;
  gboolean ranges;

  GST_OBJECT_LOCK (self);
  location = g_strdup (self->location);
  config.user_agent = self->user_agent;
  config.timeout_s = self->timeout;
  config.retries = self->retries;
  config.ssl_strict = self->ssl_strict;
  config.keep_alive = self->keep_alive;
  if (location)
    self->fetch = mtcp_http_fetch_new (location, &config, &err);
  mtcp_pars_probe_init (&self->probe, MODEL_MAX_CONNECTIONS, MODEL_SHARE);
  self->chunks_noted = 0;
  self->count = 0;
  self->size = G_MAXUINT64;
  self->stop = G_MAXUINT64;
  self->one_connection = FALSE;
  self->stream_open = FALSE;
  self->stream_pos = 0;
  GST_OBJECT_UNLOCK (self);
  if (location == NULL) {
    GST_ELEMENT_ERROR (self, RESOURCE, NOT_FOUND, ("No URL set."),
        ("set location or uri"));
    return FALSE;
  }
  if (self->fetch == NULL) {
    GST_ELEMENT_ERROR (self, RESOURCE, NOT_FOUND, ("Bad URL: %s", location),
        ("%s", err->message));
    g_error_free (err);
    g_free (location);
    return FALSE;
  }
  g_free (location);
  /* Alg. 1's HEAD: the size, and where redirects lead */
  if (!mtcp_http_fetch_head (self->fetch, &self->size, &ranges, &err)) {
    post_error (self, err, TRUE);
    g_error_free (err);
    GST_OBJECT_LOCK (self);
    g_clear_pointer (&self->fetch, mtcp_http_fetch_free);
    GST_OBJECT_UNLOCK (self);
    return FALSE;
  }
  /* a size not said (chunked encoding): no ranges to split */
  self->one_connection = self->size == G_MAXUINT64;
  self->ranges_said = ranges;
  return TRUE;
}

static gboolean
gst_multi_tcp_http_src_stop (GstBaseSrc * src)
{
  GstMultiTcpHttpSrc *self = GST_MULTI_TCP_HTTP_SRC (src);
  MtcpHttpFetch *fetch;

  GST_OBJECT_LOCK (self);
  fetch = self->fetch;
  self->fetch = NULL;
  GST_OBJECT_UNLOCK (self);
  mtcp_http_fetch_free (fetch);
  return TRUE;
}

static gboolean
gst_multi_tcp_http_src_unlock (GstBaseSrc * src)
{
  GstMultiTcpHttpSrc *self = GST_MULTI_TCP_HTTP_SRC (src);

  /* under the object lock: stop () frees the fetcher under it */
  GST_OBJECT_LOCK (self);
  if (self->fetch)
    mtcp_http_fetch_set_flushing (self->fetch, TRUE);
  GST_OBJECT_UNLOCK (self);
  return TRUE;
}

static gboolean
gst_multi_tcp_http_src_unlock_stop (GstBaseSrc * src)
{
  GstMultiTcpHttpSrc *self = GST_MULTI_TCP_HTTP_SRC (src);

  GST_OBJECT_LOCK (self);
  if (self->fetch)
    mtcp_http_fetch_set_flushing (self->fetch, FALSE);
  GST_OBJECT_UNLOCK (self);
  return TRUE;
}

static gboolean
gst_multi_tcp_http_src_is_seekable (GstBaseSrc * src)
{
  GstMultiTcpHttpSrc *self = GST_MULTI_TCP_HTTP_SRC (src);

  /* random access (pull mode, seeks) only where the server said it takes
   * ranges: a 200 after qtdemux jumped to the index could not go back */
  return self->fetch && !self->one_connection && self->ranges_said;
}

static gboolean
gst_multi_tcp_http_src_get_size (GstBaseSrc * src, guint64 * size)
{
  GstMultiTcpHttpSrc *self = GST_MULTI_TCP_HTTP_SRC (src);

  if (self->size == G_MAXUINT64)
    return FALSE;
  *size = self->size;
  return TRUE;
}

static gboolean
gst_multi_tcp_http_src_do_seek (GstBaseSrc * src, GstSegment * segment)
{
  GstMultiTcpHttpSrc *self = GST_MULTI_TCP_HTTP_SRC (src);

  if (segment->rate < 0) {
    GST_WARNING_OBJECT (self, "cannot read backwards (rate %f)", segment->rate);
    return FALSE;
  }
  if (self->one_connection && segment->start != self->stream_pos) {
    GST_WARNING_OBJECT (self, "cannot seek to %" G_GUINT64_FORMAT ": the "
        "server does not take ranges", segment->start);
    return FALSE;
  }
  /* a byte range (hlsdemux's EXT-X-BYTERANGE): read up to its stop */
  self->stop = segment->stop == (guint64) - 1 ? G_MAXUINT64 : segment->stop;
  GST_DEBUG_OBJECT (self, "seek to %" G_GUINT64_FORMAT "-%" G_GINT64_FORMAT,
      segment->start, (gint64) segment->stop);
  return TRUE;
}

/* The count for the next chunk, the model's with connections=0 (fed the
 * rate of each whole chunk the fetcher finished since). */
static guint
next_count (GstMultiTcpHttpSrc * self)
{
  guint connections, n;
  guint64 chunks, bytes;
  gdouble rate;

  GST_OBJECT_LOCK (self);
  connections = self->connections;
  GST_OBJECT_UNLOCK (self);
  if (connections)
    return MIN (connections, MAX_CONNECTIONS);
  rate = mtcp_http_fetch_last_rate (self->fetch, &n, &chunks, &bytes);
  if (chunks > self->chunks_noted) {
    self->chunks_noted = chunks;
    /* a small chunk (a resource's tail, a demuxer's read of an index)
     * is mostly handshake and slow start: not a sample */
    if (bytes >= MODEL_MIN_CHUNK)
      mtcp_pars_probe_note (&self->probe, n, rate);
    if (self->probe.count)
      GST_INFO_OBJECT (self, "Eq. 3: C %.0f bit/s, M %.2f other flows: %u "
          "connections", self->probe.capacity * 8, self->probe.others,
          self->probe.count);
  }
  return mtcp_pars_probe_next (&self->probe);
}

/* the end of what may be read: the resource's, or a seek's stop */
static guint64
read_end (GstMultiTcpHttpSrc * self)
{
  return MIN (self->size, self->stop);
}

static void
start_chunk (GstMultiTcpHttpSrc * self, guint64 offset)
{
  guint64 end;
  guint chunk_size, n = next_count (self);

  GST_OBJECT_LOCK (self);
  chunk_size = MAX (self->chunk_size, MIN_CHUNK_SIZE);
  self->count = n;
  GST_OBJECT_UNLOCK (self);
  end = offset + MIN ((guint64) chunk_size, read_end (self) - offset);
  GST_DEBUG_OBJECT (self, "chunk %" G_GUINT64_FORMAT "-%" G_GUINT64_FORMAT
      " over %u connections", offset, end, n);
  mtcp_http_fetch_chunk (self->fetch, offset, end, n);
}

/* One connection (a server that ignores ranges, or a size it does not
 * say): the plain GET's body from its start. */
static GstFlowReturn
create_from_stream (GstMultiTcpHttpSrc * self, guint64 offset, guint length,
    gboolean pull, GstBuffer ** out)
{
  GstBuffer *buf;
  GstMapInfo map;
  GError *err = NULL;
  gsize filled = 0;
  guint8 skip[16384];

  if (offset < self->stream_pos) {
    GST_ELEMENT_ERROR (self, RESOURCE, SEEK, ("Cannot go back in %s: the "
            "server does not take ranges", self->location),
        ("asked for %" G_GUINT64_FORMAT ", at %" G_GUINT64_FORMAT, offset,
            self->stream_pos));
    return GST_FLOW_ERROR;
  }
  /* forward over what the new GET sent again */
  while (self->stream_pos < offset) {
    gssize n = mtcp_http_fetch_read (self->fetch, skip,
        MIN (sizeof (skip), offset - self->stream_pos), &err);
    if (n <= 0)
      goto failed;
    self->stream_pos += n;
  }
  if (length == 0)
    length = 4096;
  buf = gst_buffer_new_allocate (NULL, length, NULL);
  gst_buffer_map (buf, &map, GST_MAP_WRITE);
  while (filled < length) {
    gssize n = mtcp_http_fetch_read (self->fetch, map.data + filled,
        length - filled, &err);
    if (n < 0) {
      gst_buffer_unmap (buf, &map);
      gst_buffer_unref (buf);
      goto failed;
    }
    if (n == 0)
      break;
    filled += n;
    self->stream_pos += n;
    if (!pull)
      break;                    /* push what came */
  }
  gst_buffer_unmap (buf, &map);
  if (filled == 0) {
    gst_buffer_unref (buf);
    return GST_FLOW_EOS;
  }
  gst_buffer_set_size (buf, filled);
  GST_BUFFER_OFFSET (buf) = offset;
  GST_BUFFER_OFFSET_END (buf) = offset + filled;
  *out = buf;
  return GST_FLOW_OK;

failed:
  if (err == NULL)
    return GST_FLOW_EOS;
  if (g_error_matches (err, G_IO_ERROR, G_IO_ERROR_CANCELLED)) {
    g_error_free (err);
    return GST_FLOW_FLUSHING;
  }
  post_error (self, err, FALSE);
  g_error_free (err);
  return GST_FLOW_ERROR;
}

static GstFlowReturn
to_one_connection (GstMultiTcpHttpSrc * self)
{
  GError *err = NULL;

  GST_ELEMENT_WARNING (self, RESOURCE, READ, ("%s: the server ignores byte "
          "ranges; reading it over one connection", self->location),
      ("a range request was answered with 200"));
  self->one_connection = TRUE;
  self->stream_pos = 0;
  if (!mtcp_http_fetch_open_stream (self->fetch, &err)) {
    if (g_error_matches (err, G_IO_ERROR, G_IO_ERROR_CANCELLED)) {
      g_error_free (err);
      return GST_FLOW_FLUSHING;
    }
    post_error (self, err, TRUE);
    g_error_free (err);
    return GST_FLOW_ERROR;
  }
  self->stream_open = TRUE;
  return GST_FLOW_OK;
}

static GstFlowReturn
gst_multi_tcp_http_src_create (GstBaseSrc * src, guint64 offset,
    guint length, GstBuffer ** out)
{
  GstMultiTcpHttpSrc *self = GST_MULTI_TCP_HTTP_SRC (src);
  gboolean pull = GST_PAD_MODE (GST_BASE_SRC_PAD (src)) == GST_PAD_MODE_PULL;
  gboolean whole_chunk;
  guint64 end = read_end (self), pos = offset;
  GstBuffer *buf = NULL;
  GstFlowReturn ret;

  if (self->one_connection && !self->stream_open) {
    GError *err = NULL;
    /* the size was not said: one plain GET */
    if (!mtcp_http_fetch_open_stream (self->fetch, &err)) {
      gboolean flushing = g_error_matches (err, G_IO_ERROR,
          G_IO_ERROR_CANCELLED);
      if (!flushing)
        post_error (self, err, TRUE);
      g_error_free (err);
      return flushing ? GST_FLOW_FLUSHING : GST_FLOW_ERROR;
    }
    self->stream_open = TRUE;
  }
  if (self->one_connection)
    return create_from_stream (self, offset, length, pull, out);
  if (offset >= end)
    return GST_FLOW_EOS;
  GST_OBJECT_LOCK (self);
  whole_chunk = self->reassembly == GST_MULTI_TCP_HTTP_REASSEMBLY_CHUNK;
  GST_OBJECT_UNLOCK (self);
  if (pull)
    length = (guint) MIN ((guint64) length, end - offset);

  /* push: what is in from @offset, within one chunk; pull: exactly
   * @length, across chunks if it must */
  while (pos < end && (buf == NULL || (pull && pos < offset + length))) {
    const guint8 *data;
    guint64 start, avail, take;
    GError *err = NULL;

    if (!mtcp_http_fetch_covers (self->fetch, pos))
      start_chunk (self, pos);
    switch (mtcp_http_fetch_wait (self->fetch, whole_chunk ? G_MAXUINT64 :
            pull ? offset + length : pos + 1, &data, &start, &avail, &err)) {
      case MTCP_HTTP_WAIT_OK:
        break;
      case MTCP_HTTP_WAIT_FLUSHING:
        g_clear_pointer (&buf, gst_buffer_unref);
        return GST_FLOW_FLUSHING;
      case MTCP_HTTP_WAIT_NO_RANGES:
        g_clear_pointer (&buf, gst_buffer_unref);
        ret = to_one_connection (self);
        if (ret != GST_FLOW_OK)
          return ret;
        return create_from_stream (self, offset, length, pull, out);
      case MTCP_HTTP_WAIT_ERROR:
      default:
        if (g_error_matches (err, G_IO_ERROR, G_IO_ERROR_CANCELLED)) {
          /* a flush came and went while we waited: ask again */
          g_error_free (err);
          continue;
        }
        g_clear_pointer (&buf, gst_buffer_unref);
        post_error (self, err, FALSE);
        g_error_free (err);
        return GST_FLOW_ERROR;
    }
    /* never past the end or a seek's stop */
    take = MIN (start + avail, end) - pos;
    if (pull)
      take = MIN (take, offset + length - pos);
    if (buf == NULL)
      buf = gst_buffer_new_memdup (data + (pos - start), take);
    else
      buf = gst_buffer_append (buf, gst_buffer_new_memdup (data + (pos -
                  start), take));
    pos += take;
  }
  if (buf == NULL)
    return GST_FLOW_EOS;
  GST_BUFFER_OFFSET (buf) = offset;
  GST_BUFFER_OFFSET_END (buf) = pos;
  *out = buf;
  return GST_FLOW_OK;
}

static void
gst_multi_tcp_http_src_class_init (GstMultiTcpHttpSrcClass * klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);
  GstBaseSrcClass *basesrc_class = GST_BASE_SRC_CLASS (klass);

  gobject_class->set_property = gst_multi_tcp_http_src_set_property;
  gobject_class->get_property = gst_multi_tcp_http_src_get_property;
  gobject_class->finalize = gst_multi_tcp_http_src_finalize;

  /**
   * GstMultiTcpHttpSrc:location:
   *
   * The http:// or https:// URL to read.
   *
   * Since: 0.1
   */
  g_object_class_install_property (gobject_class, PROP_LOCATION,
      g_param_spec_string ("location", "Location",
          "The http:// or https:// URL to read", NULL,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
  /**
   * GstMultiTcpHttpSrc:connections:
   *
   * Connections (parts) per chunk. 1 reads as souphttpsrc does (one range
   * a chunk); 0 picks the count from ParS's model (Eq. 3): the first chunk
   * over one connection, the second over two, more while the rate still
   * grows with the count, then Eq. 1's count for 80% of the link (1-8).
   *
   * Since: 0.1
   */
  g_object_class_install_property (gobject_class, PROP_CONNECTIONS,
      g_param_spec_uint ("connections", "Connections",
          "TCP connections (byte-range parts) per chunk; 0 = from ParS's "
          "model (Eq. 3: 1 then 2 connections measured, then the count that "
          "gets 80% of the link, at most 8)", 0, MAX_CONNECTIONS,
          DEFAULT_CONNECTIONS, G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
  /**
   * GstMultiTcpHttpSrc:chunk-size:
   *
   * Bytes fetched per round; a resource smaller than this (an HLS
   * segment) is one round.
   *
   * Since: 0.1
   */
  g_object_class_install_property (gobject_class, PROP_CHUNK_SIZE,
      g_param_spec_uint ("chunk-size", "Chunk size",
          "Bytes per round of parallel range requests (a smaller resource "
          "is one round)", MIN_CHUNK_SIZE, G_MAXINT, DEFAULT_CHUNK_SIZE,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
  /**
   * GstMultiTcpHttpSrc:reassembly:
   *
   * When data leaves: once a whole chunk is in (`chunk`, as ParS's
   * Algorithm 1), or as soon as it is in without a gap (`in-order`, the
   * default: never later, usually sooner).
   *
   * Since: 0.1
   */
  g_object_class_install_property (gobject_class, PROP_REASSEMBLY,
      g_param_spec_enum ("reassembly", "Reassembly",
          "Push a chunk once all its parts are in, or what is in without a "
          "gap as it arrives", GST_TYPE_MULTI_TCP_HTTP_REASSEMBLY,
          DEFAULT_REASSEMBLY, G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
  /**
   * GstMultiTcpHttpSrc:keep-alive:
   *
   * Reuse each part's connection for the same part of the next chunk.
   *
   * Since: 0.1
   */
  g_object_class_install_property (gobject_class, PROP_KEEP_ALIVE,
      g_param_spec_boolean ("keep-alive", "Keep alive",
          "Reuse the connections across chunks (off: a new connection per "
          "request)", DEFAULT_KEEP_ALIVE,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
  /**
   * GstMultiTcpHttpSrc:user-agent:
   *
   * Since: 0.1
   */
  g_object_class_install_property (gobject_class, PROP_USER_AGENT,
      g_param_spec_string ("user-agent", "User-Agent",
          "The User-Agent header of each request", DEFAULT_USER_AGENT,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
  /**
   * GstMultiTcpHttpSrc:timeout:
   *
   * Seconds a request may wait on the network before it fails (and is
   * asked again, within `retries`).
   *
   * Since: 0.1
   */
  g_object_class_install_property (gobject_class, PROP_TIMEOUT,
      g_param_spec_uint ("timeout", "Timeout",
          "Seconds a request waits on the network before it fails, 0 = no "
          "limit", 0, 3600, DEFAULT_TIMEOUT,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
  /**
   * GstMultiTcpHttpSrc:retries:
   *
   * A part that fails or is cut is asked again from where it stopped this
   * many times before the element fails.
   *
   * Since: 0.1
   */
  g_object_class_install_property (gobject_class, PROP_RETRIES,
      g_param_spec_uint ("retries", "Retries",
          "Times a failed or cut part is asked again (from where it "
          "stopped) before an error", 0, 100, DEFAULT_RETRIES,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
  /**
   * GstMultiTcpHttpSrc:ssl-strict:
   *
   * Refuse servers whose certificate does not verify.
   *
   * Since: 0.1
   */
  g_object_class_install_property (gobject_class, PROP_SSL_STRICT,
      g_param_spec_boolean ("ssl-strict", "SSL strict",
          "Refuse a server whose certificate does not verify",
          DEFAULT_SSL_STRICT, G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
  /**
   * GstMultiTcpHttpSrc:stats:
   *
   * `connections` (of the chunk asked last), `chunks`, `bytes`,
   * `parts-asked-again`, `last-chunk-rate` (bit/s), `one-connection`,
   * `size`, `uri` (after redirects), with connections=0 `model-capacity`
   * (bit/s) and `model-others` (Eq. 3), and `parts`: per part of the
   * last chunk its range (`first`, `last`), `bytes`, `time-ms`, `status`,
   * `attempts` and its connection's `rtt-us`, `retransmits`, `cwnd`,
   * `delivery-rate` (bit/s) from TCP_INFO.
   *
   * Since: 0.1
   */
  g_object_class_install_property (gobject_class, PROP_STATS,
      g_param_spec_boxed ("stats", "Statistics",
          "Chunks, bytes, the model's fit and per part of the last chunk: "
          "range, bytes, time, HTTP status, attempts and TCP state",
          GST_TYPE_STRUCTURE, G_PARAM_READABLE | G_PARAM_STATIC_STRINGS));

  gst_element_class_add_static_pad_template (element_class, &src_template);
  gst_element_class_set_static_metadata (element_class,
      "Parallel-range HTTP source", "Source/Network",
      "Reads an HTTP resource chunk by chunk, each chunk as byte ranges over "
      "several TCP connections at once (ParS)",
      "the multitcp authors");

  basesrc_class->start = GST_DEBUG_FUNCPTR (gst_multi_tcp_http_src_start);
  basesrc_class->stop = GST_DEBUG_FUNCPTR (gst_multi_tcp_http_src_stop);
  basesrc_class->unlock = GST_DEBUG_FUNCPTR (gst_multi_tcp_http_src_unlock);
  basesrc_class->unlock_stop =
      GST_DEBUG_FUNCPTR (gst_multi_tcp_http_src_unlock_stop);
  basesrc_class->is_seekable =
      GST_DEBUG_FUNCPTR (gst_multi_tcp_http_src_is_seekable);
  basesrc_class->get_size = GST_DEBUG_FUNCPTR (gst_multi_tcp_http_src_get_size);
  basesrc_class->do_seek = GST_DEBUG_FUNCPTR (gst_multi_tcp_http_src_do_seek);
  basesrc_class->create = GST_DEBUG_FUNCPTR (gst_multi_tcp_http_src_create);

  GST_DEBUG_CATEGORY_INIT (gst_multi_tcp_http_src_debug, "multitcphttpsrc", 0,
      "multitcphttpsrc");
  gst_type_mark_as_plugin_api (GST_TYPE_MULTI_TCP_HTTP_REASSEMBLY, 0);
}

static GstURIType
uri_get_type (GType type)
{
  return GST_URI_SRC;
}

static const gchar *const *
uri_get_protocols (GType type)
{
  static const gchar *protocols[] = { "http", "https", NULL };
  return protocols;
}

static gchar *
uri_get_uri (GstURIHandler * handler)
{
  GstMultiTcpHttpSrc *self = GST_MULTI_TCP_HTTP_SRC (handler);
  gchar *uri;

  GST_OBJECT_LOCK (self);
  uri = g_strdup (self->location);
  GST_OBJECT_UNLOCK (self);
  return uri;
}

static gboolean
uri_set_uri (GstURIHandler * handler, const gchar * uri, GError ** error)
{
  return set_location (GST_MULTI_TCP_HTTP_SRC (handler), uri, error);
}

static void
gst_multi_tcp_http_src_uri_init (gpointer g_iface, gpointer iface_data)
{
  GstURIHandlerInterface *iface = g_iface;

  iface->get_type = uri_get_type;
  iface->get_protocols = uri_get_protocols;
  iface->get_uri = uri_get_uri;
  iface->set_uri = uri_set_uri;
}

/* multitcp
 * Copyright (C) 2026 the multitcp authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

/* ParS's download (Alg. 1) on libsoup 3 (>= 3.2: messages may be sent from
 * any thread). Worker i fetches part i of every chunk with the sync API, so
 * its keep-alive connection carries part i chunk after chunk; it writes
 * straight into the chunk (its own slice) and tells the element's thread
 * how far it got under the lock. */

#include "mtcphttpfetch.h"
#include "mtcphttpchunk.h"
#include "mtcptcpinfo.h"

#include <libsoup/soup.h>
#include <string.h>

GST_DEBUG_CATEGORY_STATIC (mtcp_http_fetch_debug);
#define GST_CAT_DEFAULT mtcp_http_fetch_debug

/* a worker reads a response's body this much at a time */
#define READ_SIZE (64 * 1024)
/* before asking a failed part again: this, times the attempts so far */
#define RETRY_PAUSE_US (100 * G_TIME_SPAN_MILLISECOND)

typedef struct {
  MtcpHttpFetch *fetch;
  guint index;
  GThread *thread;
  gboolean pending;             /* has a part of the current chunk to fetch */
  GSocket *socket;              /* its last connection's, for TCP_INFO */
} Worker;

typedef struct {
  gint64 started_us, done_us;
  guint status;
  guint attempts;
  gboolean done;
  gboolean have_info;
  MtcpTcpInfo info;
} PartState;

struct _MtcpHttpFetch {
  MtcpHttpFetchConfig config;
  SoupSession *session;
  GUri *uri;

  GMutex lock;                  /* the rest */
  GCond cond;
  Worker workers[MTCP_HTTP_MAX_PARTS];
  guint n_threads;
  guint generation;             /* of the chunk */
  MtcpHttpChunk *chunk;
  PartState parts[MTCP_HTTP_MAX_PARTS];
  guint running;                /* workers busy with the chunk */
  GCancellable *cancellable;    /* the chunk's */
  gint64 chunk_started_us;
  gdouble last_rate;            /* of the last whole chunk, bytes/s */
  guint last_parts;
  gboolean no_ranges;
  GError *error;                /* why the chunk failed */
  gboolean flushing;
  gboolean stopping;
  guint64 size;                 /* from the HEAD, G_MAXUINT64: unknown */
  guint64 last_bytes;           /* of the last whole chunk */
  guint64 chunks, bytes, asked_again;

  /* the one-connection fallback, used from the element's thread */
  SoupMessage *stream_msg;
  GInputStream *stream;
  GCancellable *stream_cancellable;
};

GQuark
mtcp_http_error_quark (void)
{
  return g_quark_from_static_string ("mtcp-http-error-quark");
}

static void
init_debug (void)
{
  static gsize done = 0;

  if (g_once_init_enter (&done)) {
    GST_DEBUG_CATEGORY_INIT (mtcp_http_fetch_debug, "multitcphttpfetch", 0,
        "multitcphttpsrc's parallel range requests");
    g_once_init_leave (&done, 1);
  }
}

MtcpHttpFetch *
mtcp_http_fetch_new (const gchar * uri, const MtcpHttpFetchConfig * config,
    GError ** error)
{
  MtcpHttpFetch *f;
  GUri *parsed;
  const gchar *scheme;

  init_debug ();
  parsed = g_uri_parse (uri, SOUP_HTTP_URI_FLAGS, error);
  if (parsed == NULL)
    return NULL;
  scheme = g_uri_get_scheme (parsed);
  if (g_ascii_strcasecmp (scheme, "http") != 0 &&
      g_ascii_strcasecmp (scheme, "https") != 0) {
    g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
        "%s: not an http or https URI", uri);
    g_uri_unref (parsed);
    return NULL;
  }
  f = g_new0 (MtcpHttpFetch, 1);
  f->config = *config;
  f->config.user_agent = g_strdup (config->user_agent);
  f->uri = parsed;
  g_mutex_init (&f->lock);
  g_cond_init (&f->cond);
  /* configured here, before any request, as libsoup asks */
  f->session = soup_session_new_with_options ("timeout", config->timeout_s,
      "max-conns", 2 * MTCP_HTTP_MAX_PARTS + 2,
      "max-conns-per-host", MTCP_HTTP_MAX_PARTS + 2, NULL);
  if (config->user_agent)
    soup_session_set_user_agent (f->session, config->user_agent);
  /* byte ranges count the bytes on the wire: a decoder that inflated a
   * compressed 206 would place other bytes there */
  soup_session_remove_feature_by_type (f->session, SOUP_TYPE_CONTENT_DECODER);
  f->size = G_MAXUINT64;
  f->cancellable = g_cancellable_new ();
  f->stream_cancellable = g_cancellable_new ();
  return f;
}

static void close_stream (MtcpHttpFetch * f);

void
mtcp_http_fetch_free (MtcpHttpFetch * f)
{
  guint i;

  if (f == NULL)
    return;
  g_mutex_lock (&f->lock);
  f->stopping = TRUE;
  g_cancellable_cancel (f->cancellable);
  g_cond_broadcast (&f->cond);
  g_mutex_unlock (&f->lock);
  for (i = 0; i < f->n_threads; i++) {
    g_thread_join (f->workers[i].thread);
    g_clear_object (&f->workers[i].socket);
  }
  close_stream (f);
  soup_session_abort (f->session);
  g_object_unref (f->session);
  g_object_unref (f->cancellable);
  g_object_unref (f->stream_cancellable);
  mtcp_http_chunk_free (f->chunk);
  g_clear_error (&f->error);
  g_uri_unref (f->uri);
  g_free (f->config.user_agent);
  g_mutex_clear (&f->lock);
  g_cond_clear (&f->cond);
  g_free (f);
}

static gboolean
accept_any_certificate (SoupMessage * msg, GTlsCertificate * cert,
    GTlsCertificateFlags errors, gpointer user_data)
{
  return TRUE;
}

/* the worker's connection, when libsoup makes a new one (none is made for
 * a request on a kept-alive connection: the socket stays) */
static void
on_network_event (SoupMessage * msg, GSocketClientEvent event,
    GIOStream * connection, gpointer user_data)
{
  Worker *w = user_data;

  if (event == G_SOCKET_CLIENT_CONNECTED && G_IS_SOCKET_CONNECTION (connection))
    g_set_object (&w->socket,
        g_socket_connection_get_socket (G_SOCKET_CONNECTION (connection)));
}

/* A message for fetch->uri. Takes the lock for the URI. */
static SoupMessage *
new_message (MtcpHttpFetch * f, const gchar * method)
{
  SoupMessage *msg;

  g_mutex_lock (&f->lock);
  msg = soup_message_new_from_uri (method, f->uri);
  g_mutex_unlock (&f->lock);
  if (!f->config.ssl_strict)
    g_signal_connect (msg, "accept-certificate",
        G_CALLBACK (accept_any_certificate), NULL);
  if (!f->config.keep_alive) {
    soup_message_headers_replace (soup_message_get_request_headers (msg),
        "Connection", "close");
    soup_message_add_flags (msg, SOUP_MESSAGE_NEW_CONNECTION);
  }
  return msg;
}

static void
set_status_error (GError ** error, SoupMessage * msg, const gchar * uri)
{
  guint status = soup_message_get_status (msg);

  g_set_error (error, MTCP_HTTP_ERROR, status, "%s: HTTP %u %s", uri,
      status, soup_message_get_reason_phrase (msg) ?
      soup_message_get_reason_phrase (msg) : "");
}

gboolean
mtcp_http_fetch_head (MtcpHttpFetch * f, guint64 * size, gboolean * ranges,
    GError ** error)
{
  SoupMessage *msg = new_message (f, "HEAD");
  SoupMessageHeaders *h;
  GInputStream *body;
  const gchar *accept;
  guint status;
  gchar *uri = mtcp_http_fetch_get_uri (f);

  *size = G_MAXUINT64;
  *ranges = FALSE;
  body = soup_session_send (f->session, msg, f->stream_cancellable, error);
  if (body == NULL) {
    g_prefix_error (error, "%s: ", uri);
    g_free (uri);
    g_object_unref (msg);
    return FALSE;
  }
  g_input_stream_close (body, NULL, NULL);
  g_object_unref (body);
  status = soup_message_get_status (msg);
  if (status == SOUP_STATUS_METHOD_NOT_ALLOWED ||
      status == SOUP_STATUS_NOT_IMPLEMENTED) {
    /* no HEAD here: the size stays unknown, the GET tells */
    GST_INFO ("%s answered HEAD with %u", uri, status);
  } else if (!SOUP_STATUS_IS_SUCCESSFUL (status)) {
    set_status_error (error, msg, uri);
    g_free (uri);
    g_object_unref (msg);
    return FALSE;
  } else {
    h = soup_message_get_response_headers (msg);
    /* a length no file has (a hostile server's) is no length */
    if (soup_message_headers_get_encoding (h) == SOUP_ENCODING_CONTENT_LENGTH
        && soup_message_headers_get_content_length (h) >= 0 &&
        soup_message_headers_get_content_length (h) < ((goffset) 1 << 53))
      *size = soup_message_headers_get_content_length (h);
    accept = soup_message_headers_get_list (h, "Accept-Ranges");
    *ranges = accept && soup_header_contains (accept, "bytes");
  }
  /* redirects followed: the parts ask where they led */
  g_mutex_lock (&f->lock);
  g_uri_unref (f->uri);
  f->uri = g_uri_ref (soup_message_get_uri (msg));
  f->size = *size;
  g_mutex_unlock (&f->lock);
  GST_INFO ("%s: size %" G_GUINT64_FORMAT ", ranges %s", uri, *size,
      *ranges ? "yes" : "not said");
  g_free (uri);
  g_object_unref (msg);
  return TRUE;
}

gchar *
mtcp_http_fetch_get_uri (MtcpHttpFetch * f)
{
  gchar *s;

  g_mutex_lock (&f->lock);
  s = g_uri_to_string (f->uri);
  g_mutex_unlock (&f->lock);
  return s;
}

/* f->lock held. The chunk failed: the first reason is kept, the other
 * parts stop. */
static void
fail_chunk (MtcpHttpFetch * f, GError * error)
{
  if (f->error == NULL)
    f->error = error;
  else
    g_error_free (error);
  g_cancellable_cancel (f->cancellable);
  g_cond_broadcast (&f->cond);
}

/* no Content-Encoding, or identity: the range counts these bytes */
static gboolean
identity_encoding (SoupMessage * msg)
{
  const gchar *e = soup_message_headers_get_one
      (soup_message_get_response_headers (msg), "Content-Encoding");
  return e == NULL || g_ascii_strcasecmp (e, "identity") == 0;
}

/* Reads one 206's body into @part's tail. Returns the bytes it took; sets
 * @error if the body broke off (a short body without error is a cut too,
 * seen by the caller). No lock held; takes it per read. */
static guint64
read_body (MtcpHttpFetch * f, guint part, GInputStream * body,
    guint64 expect, GCancellable * cancellable, GError ** error)
{
  guint64 got = 0;

  while (got < expect) {
    guint8 *tail;
    gsize missing;
    gssize n;

    g_mutex_lock (&f->lock);
    tail = mtcp_http_chunk_part_tail (f->chunk, part, &missing);
    g_mutex_unlock (&f->lock);
    /* the slice is this worker's: written without the lock */
    n = g_input_stream_read (body, tail, MIN (MIN (missing, expect - got),
            READ_SIZE), cancellable, error);
    if (n <= 0)
      break;
    g_mutex_lock (&f->lock);
    mtcp_http_chunk_part_advance (f->chunk, part, n);
    f->bytes += n;
    g_cond_broadcast (&f->cond);
    g_mutex_unlock (&f->lock);
    got += n;
  }
  if (got == expect) {
    guint8 end;
    /* a read that returns 0 ends the message, which lets its connection
     * serve the next request (keep-alive) */
    g_input_stream_read (body, &end, 1, cancellable, NULL);
  }
  return got;
}

/* One part of the chunk of @generation: asked, and asked again from where
 * it stopped while attempts are left. No lock held. */
static void
fetch_part (Worker * w, guint generation, GCancellable * cancellable)
{
  MtcpHttpFetch *f = w->fetch;
  guint part = w->index;
  PartState *ps = &f->parts[part];
  GError *last = NULL;

  for (;;) {
    MtcpByteRange ask;
    SoupMessage *msg;
    GInputStream *body;
    GError *err = NULL;
    MtcpByteRange got_range;
    guint64 total, took;
    const gchar *cr;
    gchar *range, *uri;
    gsize missing;
    guint status;

    g_mutex_lock (&f->lock);
    if (generation != f->generation ||
        g_cancellable_is_cancelled (cancellable)) {
      g_mutex_unlock (&f->lock);
      break;
    }
    mtcp_http_chunk_part_tail (f->chunk, part, &missing);
    ask = *mtcp_http_chunk_part (f->chunk, part);
    ask.first = ask.last + 1 - missing;
    if (missing == 0) {
      ps->done = TRUE;
      ps->done_us = g_get_monotonic_time ();
      g_mutex_unlock (&f->lock);
      break;
    }
    if (ps->attempts > f->config.retries) {
      if (last == NULL)
        last = g_error_new (MTCP_HTTP_ERROR, MTCP_HTTP_ERROR_CUT,
            "part %u: the body ended early %u times", part, ps->attempts);
      g_prefix_error (&last, "bytes %" G_GUINT64_FORMAT "-%" G_GUINT64_FORMAT
          " after %u attempts: ", ask.first, ask.last, ps->attempts);
      fail_chunk (f, last);
      last = NULL;
      g_mutex_unlock (&f->lock);
      break;
    }
    if (ps->attempts > 0) {
      /* a pause before asking again, cut short by a cancel (whoever
       * cancels broadcasts) */
      gint64 until = g_get_monotonic_time () + RETRY_PAUSE_US * ps->attempts;
      f->asked_again++;
      while (!g_cancellable_is_cancelled (cancellable) &&
          g_cond_wait_until (&f->cond, &f->lock, until));
    }
    ps->attempts++;
    g_mutex_unlock (&f->lock);

    msg = new_message (f, "GET");
    range = mtcp_http_range_header (&ask);
    soup_message_headers_replace (soup_message_get_request_headers (msg),
        "Range", range);
    g_signal_connect (msg, "network-event", G_CALLBACK (on_network_event), w);
    uri = mtcp_http_fetch_get_uri (f);
    GST_DEBUG ("part %u: GET %s Range: %s (attempt %u)", part, uri, range,
        ps->attempts);
    g_free (range);
    body = soup_session_send (f->session, msg, cancellable, &err);
    if (body == NULL) {
      GST_INFO ("part %u: %s", part, err->message);
      g_clear_error (&last);
      last = err;
      g_object_unref (msg);
      g_free (uri);
      continue;
    }
    status = soup_message_get_status (msg);
    g_mutex_lock (&f->lock);
    ps->status = status;
    g_mutex_unlock (&f->lock);
    if (status == SOUP_STATUS_OK) {
      /* the whole resource: the server ignores ranges */
      GST_INFO ("part %u: 200 to a range request: one connection", part);
      g_mutex_lock (&f->lock);
      f->no_ranges = TRUE;
      g_cancellable_cancel (f->cancellable);
      g_cond_broadcast (&f->cond);
      g_mutex_unlock (&f->lock);
    } else if (status != SOUP_STATUS_PARTIAL_CONTENT) {
      set_status_error (&err, msg, uri);
      g_clear_error (&last);
      last = err;
      err = NULL;
      /* a server error may pass; anything else will not */
      if (!SOUP_STATUS_IS_SERVER_ERROR (status)) {
        g_mutex_lock (&f->lock);
        fail_chunk (f, last);
        last = NULL;
        g_mutex_unlock (&f->lock);
      }
    } else if ((cr = soup_message_headers_get_one
            (soup_message_get_response_headers (msg), "Content-Range")) ==
        NULL || !mtcp_http_parse_content_range (cr, &got_range, &total) ||
        got_range.first != ask.first || got_range.last > ask.last ||
        (total != G_MAXUINT64 && f->size != G_MAXUINT64 && total != f->size) ||
        !identity_encoding (msg)) {
      /* a range that is not where it was asked cannot be placed */
      g_clear_error (&last);
      g_mutex_lock (&f->lock);
      fail_chunk (f, g_error_new (MTCP_HTTP_ERROR, MTCP_HTTP_ERROR_BAD_RANGE,
              "%s: asked bytes %" G_GUINT64_FORMAT "-%" G_GUINT64_FORMAT
              " of %" G_GUINT64_FORMAT ", got Content-Range \"%s\" (a "
              "resource that changed, or not the bytes asked)", uri,
              ask.first, ask.last, f->size, cr ? cr : "(none)"));
      g_mutex_unlock (&f->lock);
    } else {
      took = read_body (f, part, body, got_range.last - got_range.first + 1,
          cancellable, &err);
      if (took < got_range.last - got_range.first + 1) {
        GST_INFO ("part %u: cut after %" G_GUINT64_FORMAT " of %"
            G_GUINT64_FORMAT " bytes%s%s", part, took,
            got_range.last - got_range.first + 1, err ? ": " : "",
            err ? err->message : "");
        g_clear_error (&last);
        last = err ? err : g_error_new (MTCP_HTTP_ERROR, MTCP_HTTP_ERROR_CUT,
            "%s: the connection closed %" G_GUINT64_FORMAT " bytes into "
            "bytes %" G_GUINT64_FORMAT "-%" G_GUINT64_FORMAT, uri, took,
            got_range.first, got_range.last);
        err = NULL;
      } else if (w->socket) {
        MtcpTcpInfo info;
        gboolean have = mtcp_tcp_info_read (w->socket, &info);
        g_mutex_lock (&f->lock);
        ps->have_info = have;
        ps->info = info;
        g_mutex_unlock (&f->lock);
      }
    }
    g_clear_error (&err);
    g_input_stream_close (body, NULL, NULL);
    g_object_unref (body);
    g_object_unref (msg);
    g_free (uri);
    g_mutex_lock (&f->lock);
    if (f->no_ranges || f->error) {
      g_mutex_unlock (&f->lock);
      break;
    }
    g_mutex_unlock (&f->lock);
  }
  g_clear_error (&last);
}

static gpointer
worker_main (gpointer data)
{
  Worker *w = data;
  MtcpHttpFetch *f = w->fetch;

  g_mutex_lock (&f->lock);
  for (;;) {
    guint generation;
    GCancellable *cancellable;

    while (!f->stopping && !w->pending)
      g_cond_wait (&f->cond, &f->lock);
    if (f->stopping)
      break;
    w->pending = FALSE;
    generation = f->generation;
    cancellable = g_object_ref (f->cancellable);
    f->parts[w->index].started_us = g_get_monotonic_time ();
    g_mutex_unlock (&f->lock);

    fetch_part (w, generation, cancellable);
    g_object_unref (cancellable);

    g_mutex_lock (&f->lock);
    if (generation == f->generation && f->chunk &&
        mtcp_http_chunk_complete (f->chunk) && f->running == 1) {
      gint64 took = g_get_monotonic_time () - f->chunk_started_us;
      guint64 len = mtcp_http_chunk_end (f->chunk) -
          mtcp_http_chunk_start (f->chunk);
      f->last_rate = took > 0 ? len * (gdouble) G_USEC_PER_SEC / took : 0;
      f->last_parts = mtcp_http_chunk_n_parts (f->chunk);
      f->last_bytes = len;
      f->chunks++;
      GST_DEBUG ("chunk %" G_GUINT64_FORMAT "-%" G_GUINT64_FORMAT " in %"
          G_GINT64_FORMAT " ms over %u parts: %.0f B/s",
          mtcp_http_chunk_start (f->chunk), mtcp_http_chunk_end (f->chunk),
          took / 1000, f->last_parts, f->last_rate);
    }
    f->running--;
    g_cond_broadcast (&f->cond);
  }
  g_mutex_unlock (&f->lock);
  return NULL;
}

void
mtcp_http_fetch_chunk (MtcpHttpFetch * f, guint64 start, guint64 end, guint n)
{
  guint i, parts;

  g_mutex_lock (&f->lock);
  /* the chunk before: its workers stop and let go of it; a whole one's
   * finish their responses, so their connections stay open */
  if (f->chunk == NULL || !mtcp_http_chunk_complete (f->chunk))
    g_cancellable_cancel (f->cancellable);
  while (f->running > 0)
    g_cond_wait (&f->cond, &f->lock);
  g_object_unref (f->cancellable);
  f->cancellable = g_cancellable_new ();
  if (f->flushing)
    g_cancellable_cancel (f->cancellable);      /* asked for after a flush */
  mtcp_http_chunk_free (f->chunk);
  f->chunk = mtcp_http_chunk_new (start, end, n);
  g_clear_error (&f->error);
  f->no_ranges = FALSE;
  f->generation++;
  memset (f->parts, 0, sizeof (f->parts));
  parts = mtcp_http_chunk_n_parts (f->chunk);
  f->chunk_started_us = g_get_monotonic_time ();
  for (i = 0; i < parts; i++) {
    Worker *w = &f->workers[i];
    if (i >= f->n_threads) {
      gchar *name = g_strdup_printf ("mtcphttp%u", i);
      w->fetch = f;
      w->index = i;
      w->thread = g_thread_new (name, worker_main, w);
      g_free (name);
      f->n_threads = i + 1;
    }
    w->pending = TRUE;
  }
  f->running = parts;
  GST_DEBUG ("chunk %" G_GUINT64_FORMAT "-%" G_GUINT64_FORMAT " as %u parts",
      start, end, parts);
  g_cond_broadcast (&f->cond);
  g_mutex_unlock (&f->lock);
}

gboolean
mtcp_http_fetch_covers (MtcpHttpFetch * f, guint64 offset)
{
  gboolean yes;

  g_mutex_lock (&f->lock);
  /* a chunk a flush cancelled before it was whole is asked anew; one that
   * failed, or met a server that ignores ranges, is not: the wait says so */
  yes = f->chunk && offset >= mtcp_http_chunk_start (f->chunk) &&
      offset < mtcp_http_chunk_end (f->chunk) && (f->error || f->no_ranges ||
      mtcp_http_chunk_complete (f->chunk) ||
      !g_cancellable_is_cancelled (f->cancellable));
  g_mutex_unlock (&f->lock);
  return yes;
}

MtcpHttpWait
mtcp_http_fetch_wait (MtcpHttpFetch * f, guint64 until,
    const guint8 ** data, guint64 * start, guint64 * avail, GError ** error)
{
  MtcpHttpWait r;

  g_mutex_lock (&f->lock);
  for (;;) {
    guint64 in;

    if (f->flushing) {
      r = MTCP_HTTP_WAIT_FLUSHING;
      break;
    }
    if (f->chunk == NULL) {
      g_set_error (error, MTCP_HTTP_ERROR, MTCP_HTTP_ERROR_CUT, "no chunk");
      r = MTCP_HTTP_WAIT_ERROR;
      break;
    }
    in = mtcp_http_chunk_contiguous (f->chunk);
    if (mtcp_http_chunk_start (f->chunk) + in >= MIN (until,
            mtcp_http_chunk_end (f->chunk))) {
      *data = mtcp_http_chunk_data (f->chunk);
      *start = mtcp_http_chunk_start (f->chunk);
      *avail = in;
      r = MTCP_HTTP_WAIT_OK;
      break;
    }
    if (f->no_ranges) {
      r = MTCP_HTTP_WAIT_NO_RANGES;
      break;
    }
    if (f->error) {
      g_propagate_error (error, g_error_copy (f->error));
      r = MTCP_HTTP_WAIT_ERROR;
      break;
    }
    if (f->running == 0) {
      /* every worker stopped short of it: a flush that is over */
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED,
          "the chunk's requests were cancelled");
      r = MTCP_HTTP_WAIT_ERROR;
      break;
    }
    g_cond_wait (&f->cond, &f->lock);
  }
  g_mutex_unlock (&f->lock);
  return r;
}

gdouble
mtcp_http_fetch_last_rate (MtcpHttpFetch * f, guint * n, guint64 * chunks,
    guint64 * bytes)
{
  gdouble rate;

  g_mutex_lock (&f->lock);
  rate = f->last_rate;
  if (bytes)
    *bytes = f->last_bytes;
  if (n)
    *n = f->last_parts;
  if (chunks)
    *chunks = f->chunks;
  g_mutex_unlock (&f->lock);
  return rate;
}

void
mtcp_http_fetch_set_flushing (MtcpHttpFetch * f, gboolean flushing)
{
  g_mutex_lock (&f->lock);
  f->flushing = flushing;
  if (flushing) {
    g_cancellable_cancel (f->cancellable);
    g_cancellable_cancel (f->stream_cancellable);
  } else if (g_cancellable_is_cancelled (f->stream_cancellable)) {
    g_object_unref (f->stream_cancellable);
    f->stream_cancellable = g_cancellable_new ();
  }
  g_cond_broadcast (&f->cond);
  g_mutex_unlock (&f->lock);
}

static void
close_stream (MtcpHttpFetch * f)
{
  if (f->stream) {
    g_input_stream_close (f->stream, NULL, NULL);
    g_clear_object (&f->stream);
  }
  g_clear_object (&f->stream_msg);
}

gboolean
mtcp_http_fetch_open_stream (MtcpHttpFetch * f, GError ** error)
{
  SoupMessage *msg = new_message (f, "GET");
  GCancellable *cancellable;
  gchar *uri;

  close_stream (f);
  g_mutex_lock (&f->lock);
  cancellable = g_object_ref (f->stream_cancellable);
  g_mutex_unlock (&f->lock);
  f->stream = soup_session_send (f->session, msg, cancellable, error);
  g_object_unref (cancellable);
  uri = mtcp_http_fetch_get_uri (f);
  if (f->stream == NULL) {
    g_prefix_error (error, "%s: ", uri);
    g_free (uri);
    g_object_unref (msg);
    return FALSE;
  }
  if (!SOUP_STATUS_IS_SUCCESSFUL (soup_message_get_status (msg))) {
    set_status_error (error, msg, uri);
    g_free (uri);
    g_object_unref (msg);
    close_stream (f);
    return FALSE;
  }
  g_free (uri);
  f->stream_msg = msg;
  return TRUE;
}

gssize
mtcp_http_fetch_read (MtcpHttpFetch * f, guint8 * buf, gsize size,
    GError ** error)
{
  GCancellable *cancellable;
  gssize n;

  if (f->stream == NULL)
    return 0;
  g_mutex_lock (&f->lock);
  cancellable = g_object_ref (f->stream_cancellable);
  g_mutex_unlock (&f->lock);
  n = g_input_stream_read (f->stream, buf, size, cancellable, error);
  g_object_unref (cancellable);
  return n;
}

void
mtcp_http_fetch_add_stats (MtcpHttpFetch * f, GstStructure * s)
{
  GValue parts = G_VALUE_INIT;
  guint i, n;

  g_value_init (&parts, GST_TYPE_ARRAY);
  g_mutex_lock (&f->lock);
  gst_structure_set (s, "chunks", G_TYPE_UINT64, f->chunks,
      "bytes", G_TYPE_UINT64, f->bytes,
      "parts-asked-again", G_TYPE_UINT64, f->asked_again,
      "last-chunk-rate", G_TYPE_DOUBLE, f->last_rate * 8, NULL);
  n = f->chunk ? mtcp_http_chunk_n_parts (f->chunk) : 0;
  for (i = 0; i < n; i++) {
    const MtcpByteRange *r = mtcp_http_chunk_part (f->chunk, i);
    PartState *ps = &f->parts[i];
    GValue v = G_VALUE_INIT;
    GstStructure *p = gst_structure_new ("part",
        "first", G_TYPE_UINT64, r->first,
        "last", G_TYPE_UINT64, r->last,
        "bytes", G_TYPE_UINT64, mtcp_http_chunk_part_received (f->chunk, i),
        "time-ms", G_TYPE_INT64, ps->done ? (ps->done_us - ps->started_us) /
        1000 : (gint64) - 1,
        "status", G_TYPE_UINT, ps->status,
        "attempts", G_TYPE_UINT, ps->attempts, NULL);
    if (ps->have_info)
      gst_structure_set (p, "rtt-us", G_TYPE_UINT, ps->info.rtt_us,
          "retransmits", G_TYPE_UINT, ps->info.total_retrans,
          "cwnd", G_TYPE_UINT, ps->info.snd_cwnd,
          "delivery-rate", G_TYPE_UINT64, ps->info.delivery_rate * 8, NULL);
    g_value_init (&v, GST_TYPE_STRUCTURE);
    g_value_take_boxed (&v, p);
    gst_value_array_append_and_take_value (&parts, &v);
  }
  g_mutex_unlock (&f->lock);
  gst_structure_take_value (s, "parts", &parts);
}

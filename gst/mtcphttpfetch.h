/* multitcp
 * Copyright (C) 2026 the multitcp authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
/* Fetching an HTTP resource chunk by chunk, each chunk as byte-range parts
 * over several connections at once (ParS, Alg. 1), on libsoup 3: one
 * worker thread per part, each with its own keep-alive connection. No
 * element inside; multitcphttpsrc drives it. */
#ifndef __MTCP_HTTP_FETCH_H__
#define __MTCP_HTTP_FETCH_H__

#include <gst/gst.h>
#include <gio/gio.h>

G_BEGIN_DECLS

typedef struct {
  gchar *user_agent;            /* NULL: libsoup's */
  guint timeout_s;              /* of each request's I/O, 0 = none */
  guint retries;                /* a failed or cut part is asked again this
                                 * many times (from where it stopped) */
  gboolean ssl_strict;          /* FALSE: accept any certificate */
  gboolean keep_alive;          /* reuse connections across chunks */
} MtcpHttpFetchConfig;

#define MTCP_HTTP_ERROR (mtcp_http_error_quark ())
GQuark mtcp_http_error_quark (void);
/* MTCP_HTTP_ERROR codes: an HTTP status (100-599) the server answered
 * with, or one of these */
enum {
  MTCP_HTTP_ERROR_BAD_RANGE = 1,        /* a 206 for another range */
  MTCP_HTTP_ERROR_CUT = 2,      /* the body ended early, retries spent */
};

typedef enum {
  MTCP_HTTP_WAIT_OK,
  MTCP_HTTP_WAIT_ERROR,
  MTCP_HTTP_WAIT_FLUSHING,
  MTCP_HTTP_WAIT_NO_RANGES,     /* the server answered a range with 200 */
} MtcpHttpWait;

typedef struct _MtcpHttpFetch MtcpHttpFetch;

/* NULL with @error set if @uri is not an http or https URI */
MtcpHttpFetch *mtcp_http_fetch_new (const gchar * uri,
    const MtcpHttpFetchConfig * config, GError ** error);
void mtcp_http_fetch_free (MtcpHttpFetch * fetch);

/* Alg. 1's HEAD, following redirects (the parts then ask the final URI):
 * the size (G_MAXUINT64 when the server does not say) and whether the
 * server says it takes byte ranges. Blocks. */
gboolean mtcp_http_fetch_head (MtcpHttpFetch * fetch, guint64 * size,
    gboolean * ranges, GError ** error);
/* the URI asked, after redirects */
gchar *mtcp_http_fetch_get_uri (MtcpHttpFetch * fetch);

/* Fetch [start, end) as @n parts, all asked at once; the chunk before is
 * dropped (its requests cancelled). */
void mtcp_http_fetch_chunk (MtcpHttpFetch * fetch, guint64 start,
    guint64 end, guint n);
/* Whether the chunk asked last covers @offset (and was not cancelled
 * before it was whole: a flush). */
gboolean mtcp_http_fetch_covers (MtcpHttpFetch * fetch, guint64 offset);
/* Blocks until the chunk is in without a gap up to offset @until of the
 * resource, or to its end if that comes first (G_MAXUINT64: all of it).
 * On OK, *data is the chunk's start (valid until the next
 * mtcp_http_fetch_chunk), *start its offset in the resource and *avail
 * what is in from there without a gap. */
MtcpHttpWait mtcp_http_fetch_wait (MtcpHttpFetch * fetch, guint64 until,
    const guint8 ** data, guint64 * start, guint64 * avail, GError ** error);
/* bytes/s of the last whole chunk, from its requests to its last byte;
 * 0 before the first; @n its parts, @bytes its length, @chunks how many
 * were whole so far */
gdouble mtcp_http_fetch_last_rate (MtcpHttpFetch * fetch, guint * n,
    guint64 * chunks, guint64 * bytes);

/* unblocks mtcp_http_fetch_wait and cancels what is in flight */
void mtcp_http_fetch_set_flushing (MtcpHttpFetch * fetch, gboolean flushing);

/* The whole resource over one connection (a server that ignores ranges):
 * a plain GET's body, read with mtcp_http_fetch_read. */
gboolean mtcp_http_fetch_open_stream (MtcpHttpFetch * fetch,
    GError ** error);
/* at most @size bytes of that body; 0 at its end, -1 on error (or
 * flushing: @error G_IO_ERROR_CANCELLED) */
gssize mtcp_http_fetch_read (MtcpHttpFetch * fetch, guint8 * buf, gsize size,
    GError ** error);

/* chunks, bytes, parts asked again, and the parts of the last chunk
 * (range, bytes, time, status, attempts, and their connection's TCP state:
 * rtt, retransmissions, cwnd, delivery rate) */
void mtcp_http_fetch_add_stats (MtcpHttpFetch * fetch, GstStructure * s);

G_END_DECLS

#endif

/* multitcp
 * Copyright (C) 2026 the multitcp authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
/* A chunk [start, end) of an HTTP resource fetched as parts over several
 * connections at once (ParS, Alg. 1), reassembled in place; and the HTTP
 * byte ranges of its parts. No locking: the fetcher's lock covers it. */
#ifndef __MTCP_HTTP_CHUNK_H__
#define __MTCP_HTTP_CHUNK_H__

#include <glib.h>

G_BEGIN_DECLS

/* at most this many parts a chunk (connections a fetch) */
#define MTCP_HTTP_MAX_PARTS 16

/* One byte range, both ends included, as HTTP's Range and Content-Range
 * have it. */
typedef struct {
  guint64 first;
  guint64 last;
} MtcpByteRange;

/* [start, end) split into at most @n parts (fewer when it has fewer
 * bytes), in order, sizes differing by one byte at most, no overlap, no
 * byte left out. Returns the number of parts written to @parts. */
guint mtcp_http_split (guint64 start, guint64 end, guint n,
    MtcpByteRange * parts);

/* "bytes=FIRST-LAST" (newly allocated) */
gchar *mtcp_http_range_header (const MtcpByteRange * range);

/* A Content-Range value: "bytes FIRST-LAST/TOTAL" or "bytes FIRST-LAST/(star)"
 * (@total G_MAXUINT64), or "bytes * / TOTAL" of a 416 (@range NULL allowed;
 * first > last then). FALSE on anything else, or on a range past its
 * total. */
gboolean mtcp_http_parse_content_range (const gchar * value,
    MtcpByteRange * range, guint64 * total);

typedef struct _MtcpHttpChunk MtcpHttpChunk;

MtcpHttpChunk *mtcp_http_chunk_new (guint64 start, guint64 end, guint n);
void mtcp_http_chunk_free (MtcpHttpChunk * chunk);

guint64 mtcp_http_chunk_start (const MtcpHttpChunk * chunk);
guint64 mtcp_http_chunk_end (const MtcpHttpChunk * chunk);
guint mtcp_http_chunk_n_parts (const MtcpHttpChunk * chunk);
const MtcpByteRange *mtcp_http_chunk_part (const MtcpHttpChunk * chunk,
    guint part);

/* Where @part's next bytes go and how many it still misses: the range to
 * ask for again after a cut is [first + received, last]. */
guint8 *mtcp_http_chunk_part_tail (MtcpHttpChunk * chunk, guint part,
    gsize * missing);
guint64 mtcp_http_chunk_part_received (const MtcpHttpChunk * chunk,
    guint part);
/* @n more bytes of @part are in (written at its tail); FALSE if that is
 * more than it misses. */
gboolean mtcp_http_chunk_part_advance (MtcpHttpChunk * chunk, guint part,
    gsize n);

/* bytes from the chunk's start that are in, without a gap */
guint64 mtcp_http_chunk_contiguous (const MtcpHttpChunk * chunk);
gboolean mtcp_http_chunk_complete (const MtcpHttpChunk * chunk);
/* the chunk's bytes, valid up to mtcp_http_chunk_contiguous */
const guint8 *mtcp_http_chunk_data (const MtcpHttpChunk * chunk);

G_END_DECLS

#endif

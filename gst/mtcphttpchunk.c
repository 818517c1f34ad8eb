/* multitcp
 * Copyright (C) 2026 the multitcp authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "mtcphttpchunk.h"

#include <string.h>

struct _MtcpHttpChunk {
  guint64 start, end;
  guint n_parts;
  MtcpByteRange parts[MTCP_HTTP_MAX_PARTS];
  guint64 received[MTCP_HTTP_MAX_PARTS];
  guint8 *data;
};

guint
mtcp_http_split (guint64 start, guint64 end, guint n, MtcpByteRange * parts)
{
  guint64 len = end > start ? end - start : 0, share, extra, at = start;
  guint i;

  n = (guint) MIN ((guint64) CLAMP (n, 1, MTCP_HTTP_MAX_PARTS), len);
  if (n == 0)
    return 0;
  share = len / n;
  extra = len % n;
  for (i = 0; i < n; i++) {
    guint64 size = share + (i < extra ? 1 : 0);
    parts[i].first = at;
    parts[i].last = at + size - 1;
    at += size;
  }
  return n;
}

gchar *
mtcp_http_range_header (const MtcpByteRange * range)
{
  return g_strdup_printf ("bytes=%" G_GUINT64_FORMAT "-%" G_GUINT64_FORMAT,
      range->first, range->last);
}

/* a decimal of at most 19 digits up to the next @stop */
static gboolean
parse_number (const gchar ** p, gchar stop, guint64 * out)
{
  const gchar *s = *p;
  guint64 v = 0;
  guint digits = 0;

  while (g_ascii_isdigit (*s)) {
    if (++digits > 19)
      return FALSE;
    v = v * 10 + (guint64) (*s - '0');
    s++;
  }
  if (digits == 0 || *s != stop)
    return FALSE;
  *out = v;
  *p = s + (stop ? 1 : 0);
  return TRUE;
}

gboolean
mtcp_http_parse_content_range (const gchar * value, MtcpByteRange * range,
    guint64 * total)
{
  MtcpByteRange r = { 1, 0 };
  guint64 t = G_MAXUINT64;
  const gchar *p = value;

  if (p == NULL)
    return FALSE;
  while (*p == ' ')
    p++;
  if (g_ascii_strncasecmp (p, "bytes", 5) != 0)
    return FALSE;
  p += 5;
  if (*p != ' ')
    return FALSE;
  while (*p == ' ')
    p++;
  if (*p == '*') {
    p++;
    if (*p++ != '/' || !parse_number (&p, 0, &t))
      return FALSE;
  } else {
    if (!parse_number (&p, '-', &r.first) || !parse_number (&p, '/', &r.last)
        || r.first > r.last)
      return FALSE;
    if (*p == '*' && p[1] == 0)
      t = G_MAXUINT64;
    else if (!parse_number (&p, 0, &t) || r.last >= t)
      return FALSE;
  }
  if (range)
    *range = r;
  *total = t;
  return TRUE;
}

MtcpHttpChunk *
mtcp_http_chunk_new (guint64 start, guint64 end, guint n)
{
  MtcpHttpChunk *chunk = g_new0 (MtcpHttpChunk, 1);

  chunk->start = start;
  chunk->end = MAX (end, start);
  chunk->n_parts = mtcp_http_split (start, chunk->end, n, chunk->parts);
  chunk->data = g_malloc (MAX (chunk->end - start, 1));
  return chunk;
}

void
mtcp_http_chunk_free (MtcpHttpChunk * chunk)
{
  if (chunk == NULL)
    return;
  g_free (chunk->data);
  g_free (chunk);
}

guint64
mtcp_http_chunk_start (const MtcpHttpChunk * chunk)
{
  return chunk->start;
}

guint64
mtcp_http_chunk_end (const MtcpHttpChunk * chunk)
{
  return chunk->end;
}

guint
mtcp_http_chunk_n_parts (const MtcpHttpChunk * chunk)
{
  return chunk->n_parts;
}

const MtcpByteRange *
mtcp_http_chunk_part (const MtcpHttpChunk * chunk, guint part)
{
  g_return_val_if_fail (part < chunk->n_parts, NULL);
  return &chunk->parts[part];
}

static guint64
part_size (const MtcpHttpChunk * chunk, guint part)
{
  return chunk->parts[part].last - chunk->parts[part].first + 1;
}

guint8 *
mtcp_http_chunk_part_tail (MtcpHttpChunk * chunk, guint part, gsize * missing)
{
  g_return_val_if_fail (part < chunk->n_parts, NULL);
  *missing = part_size (chunk, part) - chunk->received[part];
  return chunk->data + (chunk->parts[part].first - chunk->start) +
      chunk->received[part];
}

guint64
mtcp_http_chunk_part_received (const MtcpHttpChunk * chunk, guint part)
{
  g_return_val_if_fail (part < chunk->n_parts, 0);
  return chunk->received[part];
}

gboolean
mtcp_http_chunk_part_advance (MtcpHttpChunk * chunk, guint part, gsize n)
{
  g_return_val_if_fail (part < chunk->n_parts, FALSE);
  if (n > part_size (chunk, part) - chunk->received[part])
    return FALSE;
  chunk->received[part] += n;
  return TRUE;
}

guint64
mtcp_http_chunk_contiguous (const MtcpHttpChunk * chunk)
{
  guint64 in = 0;
  guint i;

  for (i = 0; i < chunk->n_parts; i++) {
    in += chunk->received[i];
    if (chunk->received[i] < part_size (chunk, i))
      break;
  }
  return in;
}

gboolean
mtcp_http_chunk_complete (const MtcpHttpChunk * chunk)
{
  return mtcp_http_chunk_contiguous (chunk) == chunk->end - chunk->start;
}

const guint8 *
mtcp_http_chunk_data (const MtcpHttpChunk * chunk)
{
  return chunk->data;
}

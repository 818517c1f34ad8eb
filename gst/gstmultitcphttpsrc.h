/* multitcp
 * Copyright (C) 2026 the multitcp authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef __GST_MULTI_TCP_HTTP_SRC_H__
#define __GST_MULTI_TCP_HTTP_SRC_H__

#include <gst/gst.h>
#include <gst/base/gstbasesrc.h>

#include "mtcphttpfetch.h"
#include "mtcppars.h"

G_BEGIN_DECLS

#define GST_TYPE_MULTI_TCP_HTTP_SRC (gst_multi_tcp_http_src_get_type ())
G_DECLARE_FINAL_TYPE (GstMultiTcpHttpSrc, gst_multi_tcp_http_src, GST,
    MULTI_TCP_HTTP_SRC, GstBaseSrc)

typedef enum {
  GST_MULTI_TCP_HTTP_REASSEMBLY_CHUNK,
  GST_MULTI_TCP_HTTP_REASSEMBLY_IN_ORDER,
} GstMultiTcpHttpReassembly;

struct _GstMultiTcpHttpSrc {
  GstBaseSrc parent;

  /* properties, under the object lock */
  gchar *location;
  guint connections;
  guint chunk_size;
  GstMultiTcpHttpReassembly reassembly;
  gboolean keep_alive;
  gchar *user_agent;
  guint timeout;
  guint retries;
  gboolean ssl_strict;

  /* the streaming thread's (start, stop and the stats under the object
   * lock) */
  MtcpHttpFetch *fetch;
  guint64 size;                 /* G_MAXUINT64: unknown */
  guint64 stop;                 /* a seek's end, G_MAXUINT64: none */
  gboolean one_connection;      /* the server ignores ranges */
  gboolean ranges_said;         /* the HEAD's Accept-Ranges: bytes */
  gboolean stream_open;         /* one connection: its GET was sent */
  guint64 stream_pos;           /* one connection: bytes read so far */
  MtcpParsProbe probe;          /* connections=0 */
  guint64 chunks_noted;
  guint count;                  /* connections of the chunk asked last */
};

G_END_DECLS

#endif

/* multitcp
 * Copyright (C) 2026 the multitcp authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
/* What both elements share as GStreamer elements: the `mode` enum
 * (listener or caller) and applying a multitcp:// URI (mtcpuri.h) to an
 * element's properties, for their GstURIHandler. */
#ifndef __GST_MULTI_TCP_URI_H__
#define __GST_MULTI_TCP_URI_H__

#include <gst/gst.h>

G_BEGIN_DECLS

typedef enum {
  GST_MULTI_TCP_MODE_LISTENER,
  GST_MULTI_TCP_MODE_CALLER,
} GstMultiTcpMode;

GType gst_multi_tcp_mode_get_type (void);
#define GST_TYPE_MULTI_TCP_MODE (gst_multi_tcp_mode_get_type ())

/* Sets `mode`, `host`, `port` and every property the query names on
 * @element; FALSE (G_URI_ERROR or GST_URI_ERROR) and nothing set for a
 * bad URI, a key that names no property (or `uri`), or a value that does
 * not parse. */
gboolean gst_multi_tcp_uri_apply (GstElement * element, const gchar * uri,
    GError ** error);
/* multitcp:// from the element's mode, host and port. */
gchar *gst_multi_tcp_uri_get (GstElement * element);
/* The `uri` property's set (a bad URI is a warning, nothing set). */
void gst_multi_tcp_uri_set_property (GstElement * element,
    const GValue * value);
/* Fills a GstURIHandler for multitcp:// but for get_type. */
void gst_multi_tcp_uri_handler_fill (GstURIHandlerInterface * iface);

G_END_DECLS

#endif

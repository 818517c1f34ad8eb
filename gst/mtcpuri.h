/* multitcp
 * Copyright (C) 2026 the multitcp authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
/* multitcp:// URIs, as srt:// ones: multitcp://host:port dials host (the
 * caller), multitcp://:port listens on every address (the listener);
 * ?mode=listener with a host listens on that address, ?mode=caller says
 * the default. Every other query key names a property of the element
 * (`_` may stand for `-`), its value as gst-launch would parse it. IPv6
 * literals go in brackets: multitcp://[::1]:5600. */
#ifndef __MTCP_URI_H__
#define __MTCP_URI_H__

#include <glib.h>

G_BEGIN_DECLS

#define MTCP_URI_SCHEME "multitcp"

typedef struct {
  gboolean listener;
  gchar *host;                  /* listener: "" = every address */
  guint port;
  gchar **keys;                 /* other query keys, `_` made `-`, in order */
  gchar **values;
} MtcpUri;

/* FALSE with a message (G_URI_ERROR) for what is not a multitcp URI, has
 * no port, a port out of range, a bad mode, or a caller without a host or
 * with port 0 (a listener's 0: any free port). */
gboolean mtcp_uri_parse (const gchar * uri, MtcpUri * out, GError ** error);
void mtcp_uri_clear (MtcpUri * uri);
/* multitcp://host:port, or multitcp://:port for a listener on every
 * address (with ?mode=listener when it listens on @host). */
gchar *mtcp_uri_build (gboolean listener, const gchar * host, guint port);

G_END_DECLS

#endif

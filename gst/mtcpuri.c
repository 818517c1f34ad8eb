/* multitcp
 * Copyright (C) 2026 the multitcp authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "mtcpuri.h"

#include <string.h>

static gboolean
is_every_address (const gchar * host)
{
  return host == NULL || *host == '\0' || g_str_equal (host, "0.0.0.0") ||
      g_str_equal (host, "::");
}

gboolean
mtcp_uri_parse (const gchar * uri, MtcpUri * out, GError ** error)
{
  GUri *u;
  const gchar *host, *query;
  GPtrArray *keys, *values;
  gboolean mode_given = FALSE, listener = FALSE;
  gint port;

  memset (out, 0, sizeof (*out));
  u = g_uri_parse (uri, G_URI_FLAGS_NONE, error);
  if (u == NULL)
    return FALSE;
  if (g_ascii_strcasecmp (g_uri_get_scheme (u), MTCP_URI_SCHEME) != 0) {
    g_set_error (error, G_URI_ERROR, G_URI_ERROR_BAD_SCHEME, "%s: not a "
        MTCP_URI_SCHEME ":// URI", uri);
    g_uri_unref (u);
    return FALSE;
  }
  port = g_uri_get_port (u);
  if (port < 0 || port > 65535) {
    g_set_error (error, G_URI_ERROR, G_URI_ERROR_BAD_PORT, "%s: a port is "
        "needed (multitcp://host:port, or multitcp://:port to listen)", uri);
    g_uri_unref (u);
    return FALSE;
  }
  host = g_uri_get_host (u);
  keys = g_ptr_array_new ();
  values = g_ptr_array_new ();
  query = g_uri_get_query (u);
  if (query && *query) {
    GUriParamsIter iter;
    gchar *key, *value;
    GError *err = NULL;

    g_uri_params_iter_init (&iter, query, -1, "&", G_URI_PARAMS_NONE);
    while (g_uri_params_iter_next (&iter, &key, &value, &err)) {
      g_strdelimit (key, "_", '-');
      if (g_str_equal (key, "mode")) {
        mode_given = TRUE;
        if (g_str_equal (value, "listener") || g_str_equal (value, "server"))
          listener = TRUE;
        else if (g_str_equal (value, "caller") || g_str_equal (value,
                "client"))
          listener = FALSE;
        else
          g_set_error (&err, G_URI_ERROR, G_URI_ERROR_BAD_QUERY,
              "%s: mode is caller or listener, not %s", uri, value);
        g_free (key);
        g_free (value);
        if (err)
          break;
        continue;
      }
      g_ptr_array_add (keys, key);
      g_ptr_array_add (values, value);
    }
    if (err) {
      g_propagate_error (error, err);
      g_ptr_array_free (keys, TRUE);
      g_ptr_array_free (values, TRUE);
      g_uri_unref (u);
      return FALSE;
    }
  }
  if (!mode_given)
    listener = host == NULL || *host == '\0';
  if (!listener && (host == NULL || *host == '\0' || port == 0)) {
    g_set_error (error, G_URI_ERROR, G_URI_ERROR_BAD_HOST, "%s: a caller "
        "needs the host and port to dial", uri);
    g_ptr_array_free (keys, TRUE);
    g_ptr_array_free (values, TRUE);
    g_uri_unref (u);
    return FALSE;
  }
  g_ptr_array_add (keys, NULL);
  g_ptr_array_add (values, NULL);
  out->listener = listener;
  out->host = g_strdup (host ? host : "");
  out->port = port;
  out->keys = (gchar **) g_ptr_array_free (keys, FALSE);
  out->values = (gchar **) g_ptr_array_free (values, FALSE);
  g_uri_unref (u);
  return TRUE;
}

void
mtcp_uri_clear (MtcpUri * uri)
{
  g_free (uri->host);
  g_strfreev (uri->keys);
  g_strfreev (uri->values);
  memset (uri, 0, sizeof (*uri));
}

gchar *
mtcp_uri_build (gboolean listener, const gchar * host, guint port)
{
  gboolean v6 = host && strchr (host, ':') != NULL;

  if (listener && is_every_address (host))
    return g_strdup_printf (MTCP_URI_SCHEME "://:%u", port);
  return g_strdup_printf (MTCP_URI_SCHEME "://%s%s%s:%u%s", v6 ? "[" : "",
      host ? host : "", v6 ? "]" : "", port, listener ? "?mode=listener" : "");
}

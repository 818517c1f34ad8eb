/* multitcp
 * Copyright (C) 2026 the multitcp authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstmultitcpuri.h"
#include "mtcpuri.h"

GType
gst_multi_tcp_mode_get_type (void)
{
  static gsize type = 0;
  static const GEnumValue values[] = {
    {GST_MULTI_TCP_MODE_LISTENER, "Listen on host:port for the other end to "
          "dial", "listener"},
    {GST_MULTI_TCP_MODE_CALLER, "Dial the other end at host:port", "caller"},
    {0, NULL, NULL}
  };

  if (g_once_init_enter (&type))
    g_once_init_leave (&type, g_enum_register_static ("GstMultiTcpMode",
            values));
  return type;
}

gboolean
gst_multi_tcp_uri_apply (GstElement * element, const gchar * uri,
    GError ** error)
{
  GObjectClass *klass = G_OBJECT_GET_CLASS (element);
  MtcpUri parsed;
  GValue *values;
  guint i, n;
  gboolean ok = TRUE;

  if (!mtcp_uri_parse (uri, &parsed, error))
    return FALSE;
  n = g_strv_length (parsed.keys);
  values = g_new0 (GValue, n);
  /* every value parses before anything is set */
  for (i = 0; i < n && ok; i++) {
    GParamSpec *pspec = g_object_class_find_property (klass, parsed.keys[i]);

    if (pspec == NULL || g_str_equal (parsed.keys[i], "uri") ||
        !(pspec->flags & G_PARAM_WRITABLE)) {
      g_set_error (error, GST_URI_ERROR, GST_URI_ERROR_BAD_URI, "%s: %s has "
          "no settable property %s", uri, GST_ELEMENT_NAME (element),
          parsed.keys[i]);
      ok = FALSE;
      break;
    }
    g_value_init (&values[i], G_PARAM_SPEC_VALUE_TYPE (pspec));
    if (!gst_value_deserialize (&values[i], parsed.values[i])) {
      g_set_error (error, GST_URI_ERROR, GST_URI_ERROR_BAD_URI, "%s: %s=%s "
          "is not a valid value for that property", uri, parsed.keys[i],
          parsed.values[i]);
      ok = FALSE;
    }
  }
  if (ok) {
    g_object_set (element, "mode", parsed.listener ?
        GST_MULTI_TCP_MODE_LISTENER : GST_MULTI_TCP_MODE_CALLER,
        "host", *parsed.host ? parsed.host : "0.0.0.0", "port", parsed.port,
        NULL);
    for (i = 0; i < n; i++)
      g_object_set_property (G_OBJECT (element), parsed.keys[i], &values[i]);
  }
  for (i = 0; i < n; i++)
    if (G_IS_VALUE (&values[i]))
      g_value_unset (&values[i]);
  g_free (values);
  mtcp_uri_clear (&parsed);
  return ok;
}

void
gst_multi_tcp_uri_set_property (GstElement * element, const GValue * value)
{
  GError *err = NULL;
  const gchar *uri = g_value_get_string (value);

  if (uri && !gst_multi_tcp_uri_apply (element, uri, &err)) {
    GST_WARNING_OBJECT (element, "%s", err->message);
    g_error_free (err);
  }
}

static const gchar *const *
uri_get_protocols (GType type)
{
  static const gchar *protocols[] = { MTCP_URI_SCHEME, NULL };
  return protocols;
}

static gchar *
uri_get_uri (GstURIHandler * handler)
{
  return gst_multi_tcp_uri_get (GST_ELEMENT (handler));
}

static gboolean
uri_set_uri (GstURIHandler * handler, const gchar * uri, GError ** error)
{
  return gst_multi_tcp_uri_apply (GST_ELEMENT (handler), uri, error);
}

void
gst_multi_tcp_uri_handler_fill (GstURIHandlerInterface * iface)
{
  iface->get_protocols = uri_get_protocols;
  iface->get_uri = uri_get_uri;
  iface->set_uri = uri_set_uri;
}

gchar *
gst_multi_tcp_uri_get (GstElement * element)
{
  GstMultiTcpMode mode;
  gchar *host, *uri;
  guint port;

  g_object_get (element, "mode", &mode, "host", &host, "port", &port, NULL);
  uri = mtcp_uri_build (mode == GST_MULTI_TCP_MODE_LISTENER, host, port);
  g_free (host);
  return uri;
}

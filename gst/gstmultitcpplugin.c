/* multitcp
 * Copyright (C) 2026 the multitcp authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
/* multitcp: live streams striped over several TCP connections. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstmultitcpsink.h"
#include "gstmultitcpsrc.h"
#ifdef HAVE_MULTITCP_HTTP
#include "gstmultitcphttpsrc.h"
#endif

static gboolean
plugin_init (GstPlugin * plugin)
{
  gboolean ok = TRUE;

  ok &= gst_element_register (plugin, "multitcpsink", GST_RANK_NONE,
      GST_TYPE_MULTI_TCP_SINK);
  ok &= gst_element_register (plugin, "multitcpsrc", GST_RANK_NONE,
      GST_TYPE_MULTI_TCP_SRC);
#ifdef HAVE_MULTITCP_HTTP
  /* below souphttpsrc: GST_PLUGIN_FEATURE_RANK raises it for playbin and
   * hlsdemux */
  ok &= gst_element_register (plugin, "multitcphttpsrc", GST_RANK_NONE,
      GST_TYPE_MULTI_TCP_HTTP_SRC);
#endif
  return ok;
}

GST_PLUGIN_DEFINE (GST_VERSION_MAJOR, GST_VERSION_MINOR, multitcp,
    "Live streaming over several TCP connections with a shared send queue "
    "and a receiver-driven reorder buffer",
    plugin_init, VERSION, GST_LICENSE, GST_PACKAGE_NAME, GST_PACKAGE_ORIGIN)

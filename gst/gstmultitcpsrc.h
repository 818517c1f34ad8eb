/* multitcp
 * Copyright (C) 2026 the multitcp authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef __GST_MULTI_TCP_SRC_H__
#define __GST_MULTI_TCP_SRC_H__

#include <gst/gst.h>
#include <gst/base/gstpushsrc.h>

#include "gstmultitcpuri.h"
#include "gstmultitcpcaller.h"
#include "mtcpclient.h"

G_BEGIN_DECLS

#define GST_TYPE_MULTI_TCP_SRC (gst_multi_tcp_src_get_type ())
G_DECLARE_FINAL_TYPE (GstMultiTcpSrc, gst_multi_tcp_src, GST, MULTI_TCP_SRC,
    GstPushSrc)

struct _GstMultiTcpSrc {
  GstPushSrc parent;

  /* properties, under the object lock */
  GstMultiTcpMode mode;
  gchar *host;
  guint current_port;
  guint port;
  guint connections;
  guint latency_ms;
  guint timeout;
  guint stats_interval;
  guint max_frame_size;
  guint retry;
  guint idle_timeout;
  gboolean drift_correction;
  gboolean keep_listening;
  gchar *passphrase;
  gchar *stream_id;
  gchar *local_addresses;
  gboolean tls;
  gchar *tls_ca_file, *tls_server_name;
  GTlsCertificateFlags tls_validation_flags;
  MtcpControlConfig control;

  MtcpClient *client;
  GstMultiTcpCallers callers;
  GCancellable *cancellable;
  /* local monotonic time -> running time, fixed at the first output */
  gboolean have_offset;
  gint64 running_offset;
  gboolean pending_discont;
};

G_END_DECLS

#endif

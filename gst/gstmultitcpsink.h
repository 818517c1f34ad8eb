/* multitcp
 * Copyright (C) 2026 the multitcp authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef __GST_MULTI_TCP_SINK_H__
#define __GST_MULTI_TCP_SINK_H__

#include <gst/gst.h>
#include <gst/base/gstbasesink.h>

#include "gstmultitcpuri.h"

#include "mtcpserver.h"
#include "gstmultitcpcaller.h"
#include "mtcpbitrate.h"
#include "mtcpencoder.h"
#include "mtcpkeyframeask.h"
#include "mtcptskeyframe.h"

G_BEGIN_DECLS

#define GST_TYPE_MULTI_TCP_SINK (gst_multi_tcp_sink_get_type ())
G_DECLARE_FINAL_TYPE (GstMultiTcpSink, gst_multi_tcp_sink, GST, MULTI_TCP_SINK,
    GstBaseSink)

typedef enum {
  GST_MULTI_TCP_BITRATE_CONTROL_NONE,
  GST_MULTI_TCP_BITRATE_CONTROL_ENCODER,
} GstMultiTcpBitrateControl;

typedef enum {
  GST_MULTI_TCP_BITRATE_FOLLOWS_WEAKEST,
  GST_MULTI_TCP_BITRATE_FOLLOWS_STRONGEST,
} GstMultiTcpBitrateFollows;

typedef enum {
  GST_MULTI_TCP_BITRATE_PROBE_PADDING,
  GST_MULTI_TCP_BITRATE_PROBE_ENCODER,
  GST_MULTI_TCP_BITRATE_PROBE_AFTER_OUTAGE,
} GstMultiTcpBitrateProbe;

struct _GstMultiTcpSink {
  GstBaseSink parent;

  /* properties, under the object lock */
  GstMultiTcpMode mode;
  gchar *host;
  guint port;
  guint retry;
  gboolean wait_for_connection;
  MtcpScheduler scheduler;
  guint64 max_session_bytes;
  guint64 max_session_lag;
  guint notsent_lowat;
  gchar *congestion_control;
  gboolean congestion_control_set;      /* by the application */
  gboolean pacing;
  guint max_sessions;
  guint max_connections;
  guint handshake_timeout;
  guint max_pending_handshakes;
  guint max_frame_size;
  guint session_timeout;
  guint idle_timeout;
  guint copy_overhead;           /* %, copies ahead of deadlines */
  MtcpTransferControl transfer_control;
  MtcpFriendlyParams friendly;
  gdouble burst_scale;
  gdouble burst_rate_scale;     /* 0: burst_scale */
  gchar *passphrase;
  gchar *stream_id;
  gchar *local_addresses;       /* caller: uplinks to dial from */
  gchar *interfaces;
  gboolean tls;
  GTlsCertificate *tls_certificate;
  gchar *tls_certificate_file, *tls_key_file;
  GstMultiTcpBitrateControl bitrate_control;
  GstMultiTcpBitrateFollows bitrate_follows;
  GstMultiTcpBitrateProbe bitrate_probe;
  guint min_bitrate, max_bitrate;       /* bits/s; max 0: the encoder's own */

  MtcpServer *server;
  /* MPEG-TS: which buffers are keyframes (streaming thread only) */
  MtcpTsKeyframes ts_keyframes;
  guint current_port;
  gint upstream_live;           /* -1 unknown, 0, 1, 2: the query failed */
  gint64 last_warning_us;
  GstMultiTcpCallers callers;
  gint gave_up_posted;          /* atomic: a caller gave up, error posted */

  /* bitrate-control=encoder: the I/O thread's estimate callback drives it
   * (stop frees it once that thread is gone); stats read it */
  GMutex control_lock;
  /* held around setting the encoder's bitrate (never with control_lock
   * held across the set): the render and I/O threads' sets go in the
   * order of the controller's decisions */
  GMutex set_lock;
  MtcpEncoder *encoder;
  MtcpBitrateControl *bitrate;
  gboolean encoder_looked_for;
  guint64 encoder_ceiling_bps;  /* control_lock: the most the encoder
                                 * found is given */
  gint encoder_started;         /* atomic: the first buffer looked for it */
  MtcpKeyframeAsk *keyframes;   /* control_lock */
  gint path_dark;               /* atomic: the followed receiver's path */
};

G_END_DECLS

#endif

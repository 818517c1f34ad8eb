/* multitcp
 * Copyright (C) 2026 the multitcp authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
/* Where an MPEG-TS stream can be entered. mpegtsmux (GStreamer 1.22, its
 * aligned output) marks no buffer DELTA_UNIT, so to the send queue every
 * TS buffer was a keyframe: a joiner or a skip started mid-GOP. A buffer
 * holding the packet that starts a video PES with the adaptation field's
 * random_access_indicator set (a keyframe's first packet) is a keyframe;
 * once a stream has shown one, the others are delta units. Where it cannot
 * tell (not aligned on packets), and when no random access point came for
 * MTCP_TS_RANDOM_ACCESS_GONE of stream time, the buffer's own flag says,
 * so a stream whose muxer stops setting it is not left without keyframes.
 * Pure: bytes in, flags out. */
#ifndef __MTCP_TS_KEYFRAME_H__
#define __MTCP_TS_KEYFRAME_H__

#include <gst/gst.h>

G_BEGIN_DECLS

#define MTCP_TS_RANDOM_ACCESS_GONE (10 * GST_SECOND)

typedef struct {
  guint packet_size;            /* 188, 192 (M2TS: 4 bytes before each) or
                                 * 204; 0: not TS */
  gboolean seen_random_access;  /* a keyframe has come: flags are ours now */
  GstClockTime last_random_access;      /* its time, NONE: none known */
} MtcpTsKeyframes;

typedef enum {
  MTCP_TS_NO_RANDOM_ACCESS,
  MTCP_TS_RANDOM_ACCESS,
  MTCP_TS_CANNOT_TELL,          /* not aligned on packets */
} MtcpTsRandomAccess;

/* From the caps: TRUE for video/mpegts (packetsize, 188 by default), FALSE
 * otherwise. What was seen stays while the packet size does. */
gboolean mtcp_ts_keyframes_init (MtcpTsKeyframes * tk, const GstCaps * caps);

MtcpTsRandomAccess mtcp_ts_random_access (const MtcpTsKeyframes * tk,
    const guint8 * data, gsize size);

/* What the queue should take @buffer (stream time @time, or NONE) for:
 * TRUE a delta unit. */
gboolean mtcp_ts_keyframes_is_delta (MtcpTsKeyframes * tk, GstBuffer * buffer,
    GstClockTime time);

G_END_DECLS

#endif

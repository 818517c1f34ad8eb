/* multitcp
 * Copyright (C) 2026 the multitcp authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
/* Where an MPEG-TS stream can be entered. mpegtsmux (GStreamer 1.22) marks
 * none of its output DELTA_UNIT, so to the send queue every TS buffer was
 * a keyframe: a joiner or a skip started mid-GOP. A buffer that holds a
 * packet with the adaptation field's random_access_indicator (set on the
 * packet that starts a keyframe's PES) is a keyframe; once a stream has
 * shown one, the others are delta units. Pure: bytes in, flags out. */
#ifndef __MTCP_TS_KEYFRAME_H__
#define __MTCP_TS_KEYFRAME_H__

#include <gst/gst.h>

G_BEGIN_DECLS

typedef struct {
  guint packet_size;            /* 188, 192 (M2TS: 4 bytes before each) or 204 */
  gboolean seen_random_access;  /* a keyframe has come: flags are ours now */
} MtcpTsKeyframes;

/* From the caps: TRUE and @tk reset for video/mpegts (packetsize, 188 by
 * default), FALSE otherwise. */
gboolean mtcp_ts_keyframes_init (MtcpTsKeyframes * tk, const GstCaps * caps);

/* TRUE if @data holds a TS packet with random_access_indicator set. */
gboolean mtcp_ts_has_random_access (const MtcpTsKeyframes * tk,
    const guint8 * data, gsize size);

/* What the queue should take @buffer for: TRUE a delta unit. After the
 * stream's first random access point, a buffer without one is; before
 * it (or not TS, or not aligned on packets) the buffer's own flag says. */
gboolean mtcp_ts_keyframes_is_delta (MtcpTsKeyframes * tk, GstBuffer * buffer);

G_END_DECLS

#endif

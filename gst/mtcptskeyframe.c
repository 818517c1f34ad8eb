/* multitcp
 * Copyright (C) 2026 the multitcp authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "mtcptskeyframe.h"

#define TS_SYNC 0x47

gboolean
mtcp_ts_keyframes_init (MtcpTsKeyframes * tk, const GstCaps * caps)
{
  const GstStructure *s;
  gint size = 188;
  guint was = tk->packet_size;

  tk->packet_size = 0;
  if (caps != NULL && gst_caps_get_size (caps) > 0) {
    s = gst_caps_get_structure (caps, 0);
    if (gst_structure_has_name (s, "video/mpegts")) {
      gst_structure_get_int (s, "packetsize", &size);
      if (size == 188 || size == 192 || size == 204)
        tk->packet_size = size;
    }
  }
  /* mpegtsmux sends its caps again with each stream header: no news */
  if (tk->packet_size != was) {
    tk->seen_random_access = FALSE;
    tk->last_random_access = GST_CLOCK_TIME_NONE;
  }
  return tk->packet_size > 0;
}

/* The packet at @p (188 bytes) starts a video PES (stream_id 0xE0-0xEF)
 * and its adaptation field sets random_access_indicator. */
static gboolean
video_random_access (const guint8 * p)
{
  guint af_len, pes;

  if (!(p[1] & 0x40) || !(p[3] & 0x20) || !(p[3] & 0x10))
    return FALSE;               /* no PES start, no adaptation field, or no
                                 * payload */
  af_len = p[4];
  if (af_len == 0 || !(p[5] & 0x40))
    return FALSE;
  pes = 5 + af_len;
  return pes + 4 <= 188 && p[pes] == 0 && p[pes + 1] == 0 &&
      p[pes + 2] == 1 && (p[pes + 3] & 0xf0) == 0xe0;
}

MtcpTsRandomAccess
mtcp_ts_random_access (const MtcpTsKeyframes * tk, const guint8 * data,
    gsize size)
{
  /* M2TS puts a 4-byte timecode before each packet */
  gsize lead = tk->packet_size == 192 ? 4 : 0, off;

  if (tk->packet_size == 0 || size < lead + 188 ||
      size % tk->packet_size != 0)
    return MTCP_TS_CANNOT_TELL;
  for (off = 0; off + lead + 188 <= size; off += tk->packet_size) {
    const guint8 *p = data + off + lead;
    if (p[0] != TS_SYNC)
      return MTCP_TS_CANNOT_TELL;
    if (video_random_access (p))
      return MTCP_TS_RANDOM_ACCESS;
  }
  return MTCP_TS_NO_RANDOM_ACCESS;
}

gboolean
mtcp_ts_keyframes_is_delta (MtcpTsKeyframes * tk, GstBuffer * buffer,
    GstClockTime time)
{
  gboolean own = GST_BUFFER_FLAG_IS_SET (buffer, GST_BUFFER_FLAG_DELTA_UNIT);
  MtcpTsRandomAccess ra;
  GstMapInfo map;

  if (tk->packet_size == 0 || !gst_buffer_map (buffer, &map, GST_MAP_READ))
    return own;
  ra = mtcp_ts_random_access (tk, map.data, map.size);
  gst_buffer_unmap (buffer, &map);
  if (ra == MTCP_TS_RANDOM_ACCESS) {
    tk->seen_random_access = TRUE;
    tk->last_random_access = time;
    return FALSE;
  }
  /* none for long: the muxer stopped setting it */
  if (tk->seen_random_access && GST_CLOCK_TIME_IS_VALID (time) &&
      GST_CLOCK_TIME_IS_VALID (tk->last_random_access) &&
      time > tk->last_random_access + MTCP_TS_RANDOM_ACCESS_GONE)
    tk->seen_random_access = FALSE;
  if (ra == MTCP_TS_CANNOT_TELL || !tk->seen_random_access)
    return own;
  return TRUE;
}

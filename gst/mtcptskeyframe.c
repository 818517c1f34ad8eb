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

  tk->packet_size = 0;
  tk->seen_random_access = FALSE;
  if (caps == NULL || gst_caps_get_size (caps) == 0)
    return FALSE;
  s = gst_caps_get_structure (caps, 0);
  if (!gst_structure_has_name (s, "video/mpegts"))
    return FALSE;
  gst_structure_get_int (s, "packetsize", &size);
  if (size != 188 && size != 192 && size != 204)
    return FALSE;
  tk->packet_size = size;
  return TRUE;
}

gboolean
mtcp_ts_has_random_access (const MtcpTsKeyframes * tk, const guint8 * data,
    gsize size)
{
  /* M2TS puts a 4-byte timecode before each packet */
  gsize lead = tk->packet_size == 192 ? 4 : 0, off;

  if (tk->packet_size == 0)
    return FALSE;
  for (off = 0; off + lead + 6 <= size; off += tk->packet_size) {
    const guint8 *p = data + off + lead;
    if (p[0] != TS_SYNC)
      return FALSE;             /* not aligned on packets: cannot tell */
    /* adaptation_field_control 2 or 3, a field of one byte at least,
     * random_access_indicator (0x40 of its flags) */
    if ((p[3] & 0x20) && p[4] > 0 && (p[5] & 0x40))
      return TRUE;
  }
  return FALSE;
}

gboolean
mtcp_ts_keyframes_is_delta (MtcpTsKeyframes * tk, GstBuffer * buffer)
{
  GstMapInfo map;
  gboolean random_access;

  if (tk->packet_size == 0 || !gst_buffer_map (buffer, &map, GST_MAP_READ))
    return GST_BUFFER_FLAG_IS_SET (buffer, GST_BUFFER_FLAG_DELTA_UNIT);
  random_access = mtcp_ts_has_random_access (tk, map.data, map.size);
  gst_buffer_unmap (buffer, &map);
  if (random_access)
    tk->seen_random_access = TRUE;
  if (!tk->seen_random_access)
    return GST_BUFFER_FLAG_IS_SET (buffer, GST_BUFFER_FLAG_DELTA_UNIT);
  return !random_access;
}

/* multitcp
 * Copyright (C) 2026 the multitcp authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "mtcptimemap.h"
#include "mtcpskew.h"

GST_DEBUG_CATEGORY_STATIC (mtcp_time_map_debug);
#define GST_CAT_DEFAULT mtcp_time_map_debug

/* clock skew: minima of 1 s windows, a line through the last 60 */
#define SKEW_WINDOW GST_SECOND
#define SKEW_WINDOWS 60
/* a deadline lies at most this much beyond latency ahead of arrival */
#define HORIZON_MARGIN GST_SECOND
/* released this much before the deadline (a tenth of latency at most) */
#define RELEASE_MARGIN_MAX (20 * GST_MSECOND)

struct _MtcpTimeMap {
  GstClockTime latency;
  gboolean drift_correction;
  gboolean mapped;
  gint64 offset;                /* local - sender, fixed by the first */
  MtcpSkew *skew;
  GstClockTime last_sender_time;        /* the latest observed */
};

MtcpTimeMap *
mtcp_time_map_new (GstClockTime latency, gboolean drift_correction)
{
  MtcpTimeMap *map = g_new0 (MtcpTimeMap, 1);
  static gsize done = 0;

  if (g_once_init_enter (&done)) {
    GST_DEBUG_CATEGORY_INIT (mtcp_time_map_debug, "multitcptimemap", 0,
        "multitcp receiver's time base");
    g_once_init_leave (&done, 1);
  }
  map->latency = MIN (latency, (GstClockTime) MTCP_TIME_MAP_MAX);
  map->drift_correction = drift_correction;
  map->skew = mtcp_skew_new (SKEW_WINDOW, SKEW_WINDOWS);
  map->last_sender_time = GST_CLOCK_TIME_NONE;
  return map;
}

void
mtcp_time_map_free (MtcpTimeMap * map)
{
  mtcp_skew_free (map->skew);
  g_free (map);
}

void
mtcp_time_map_reset (MtcpTimeMap * map)
{
  map->mapped = FALSE;
  map->last_sender_time = GST_CLOCK_TIME_NONE;
}

/* a + b saturated to [0, MTCP_TIME_MAP_MAX] */
static gint64
add_time (gint64 a, gint64 b)
{
  gint64 t;

  if (__builtin_add_overflow (a, b, &t))
    return a > 0 ? MTCP_TIME_MAP_MAX : 0;
  return CLAMP (t, 0, MTCP_TIME_MAP_MAX);
}

void
mtcp_time_map_observe (MtcpTimeMap * map, GstClockTime sender_time,
    GstClockTime arrival)
{
  g_return_if_fail (sender_time <= MTCP_TIME_MAP_MAX);

  if (!map->mapped) {
    /* both in [0, MTCP_TIME_MAP_MAX]: no overflow */
    map->offset = (gint64) MIN (arrival, MTCP_TIME_MAP_MAX) -
        (gint64) sender_time;
    map->mapped = TRUE;
    mtcp_skew_reset (map->skew);
    GST_DEBUG ("sender time %" GST_TIME_FORMAT " maps to local %"
        GST_TIME_FORMAT, GST_TIME_ARGS (sender_time), GST_TIME_ARGS (arrival));
  }
  /* estimated even when not applied: the stats show the drift */
  mtcp_skew_observe (map->skew, sender_time, arrival);
  map->last_sender_time = sender_time;
}

GstClockTime
mtcp_time_map_to_local (MtcpTimeMap * map, GstClockTime sender_time)
{
  gint64 t;

  if (!GST_CLOCK_TIME_IS_VALID (sender_time) || !map->mapped)
    return GST_CLOCK_TIME_NONE;
  sender_time = MIN (sender_time, (GstClockTime) MTCP_TIME_MAP_MAX);
  t = add_time ((gint64) sender_time, map->offset);
  if (map->drift_correction)
    t = add_time (t, mtcp_skew_correction (map->skew, sender_time));
  return (GstClockTime) t;
}

GstClockTime
mtcp_time_map_deadline (MtcpTimeMap * map, GstClockTime sender_time)
{
  GstClockTime local = mtcp_time_map_to_local (map, sender_time);

  if (!GST_CLOCK_TIME_IS_VALID (local))
    return GST_CLOCK_TIME_NONE;
  /* local and latency <= MTCP_TIME_MAP_MAX: no wrap; the reorder buffer
   * pulls it in to the horizon */
  return local + map->latency - MIN (map->latency / 10, RELEASE_MARGIN_MAX);
}

GstClockTime
mtcp_time_map_horizon (MtcpTimeMap * map)
{
  return map->latency + HORIZON_MARGIN;
}

gboolean
mtcp_time_map_is_mapped (MtcpTimeMap * map)
{
  return map->mapped;
}

gdouble
mtcp_time_map_skew_ppm (MtcpTimeMap * map)
{
  return mtcp_skew_get_ppm (map->skew);
}

gboolean
mtcp_time_map_skew_valid (MtcpTimeMap * map)
{
  return mtcp_skew_is_valid (map->skew);
}

gint64
mtcp_time_map_correction (MtcpTimeMap * map)
{
  if (!map->mapped || !map->drift_correction ||
      !GST_CLOCK_TIME_IS_VALID (map->last_sender_time))
    return 0;
  return mtcp_skew_correction (map->skew, map->last_sender_time);
}

/* multitcp
 * Copyright (C) 2026 the multitcp authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
/* The receiver's time base: a sender's running time maps to the local time
 * (CLOCK_MONOTONIC, ns) it is due at. The first timestamp of a session
 * fixes the offset (it is due `latency` after it arrived); from there the
 * clock skew estimate (mtcpskew.h) moves the mapping as the sender's
 * clock runs faster or slower than ours, so deadlines keep their distance
 * to arrivals.
 *
 * No clock of its own: the owner passes arrival times (tests pass a clock
 * they drive). No locking. Times in ns. */
#ifndef __MTCP_TIME_MAP_H__
#define __MTCP_TIME_MAP_H__

#include <gst/gst.h>

G_BEGIN_DECLS

/* A sender timestamp beyond this (146 years) is a protocol error, and
 * mapped times saturate here: sums with them cannot overflow a gint64. */
#define MTCP_TIME_MAP_MAX (G_MAXINT64 / 2)

typedef struct _MtcpTimeMap MtcpTimeMap;

/* @latency: how long after its mapped time a buffer is due downstream;
 * @drift_correction: follow the sender's clock rate (else the first
 * offset holds for ever). */
MtcpTimeMap *mtcp_time_map_new (GstClockTime latency,
    gboolean drift_correction);
void mtcp_time_map_free (MtcpTimeMap * map);

/* A new session: the next timestamp fixes the mapping again. */
void mtcp_time_map_reset (MtcpTimeMap * map);

/* A buffer stamped @sender_time (its DTS, else its PTS; at most
 * MTCP_TIME_MAP_MAX) arrived at @arrival: the first fixes the mapping,
 * every one feeds the skew estimate. */
void mtcp_time_map_observe (MtcpTimeMap * map, GstClockTime sender_time,
    GstClockTime arrival);

/* The local time @sender_time maps to (saturated at MTCP_TIME_MAP_MAX);
 * GST_CLOCK_TIME_NONE for NONE or before the first observation. */
GstClockTime mtcp_time_map_to_local (MtcpTimeMap * map,
    GstClockTime sender_time);
/* When the buffer stamped @sender_time leaves the reorder buffer: its
 * local time plus latency, less a margin so downstream still has time. */
GstClockTime mtcp_time_map_deadline (MtcpTimeMap * map,
    GstClockTime sender_time);
/* How far ahead of its arrival a deadline may lie: latency plus a second.
 * A sender whose clock jumps, or lies, cannot make a gap wait longer. */
GstClockTime mtcp_time_map_horizon (MtcpTimeMap * map);

gboolean mtcp_time_map_is_mapped (MtcpTimeMap * map);
/* The skew estimate: ppm (positive: the sender's clock runs fast), whether
 * a line was fitted, and the correction applied now to the latest sender
 * time observed (ns; 0 without drift correction). */
gdouble mtcp_time_map_skew_ppm (MtcpTimeMap * map);
gboolean mtcp_time_map_skew_valid (MtcpTimeMap * map);
gint64 mtcp_time_map_correction (MtcpTimeMap * map);

G_END_DECLS

#endif

/* multitcp
 * Copyright (C) 2026 the multitcp authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
/* Clock skew between a sender and this receiver, from arrival times alone.
 *
 * Every buffer gives one sample d = arrival - sender_time. Network and
 * queueing delay only ever add to d, so the smallest d of each window of
 * arrival time is close to the propagation delay plus the clocks' offset,
 * and those minima move along a line whose slope is the clocks' rate
 * difference. A least-squares line through the last minima gives the slope;
 * the correction is a continuous piecewise-linear function of sender time
 * that runs at that slope plus a small pull towards the line, so it neither
 * jumps nor wanders off.
 *
 * The owner maps a sender time s to s + offset + correction (s), offset
 * fixed by the first buffer: buffers then keep their distance to their
 * deadline however far the clocks drift apart.
 *
 * No locking, no GStreamer elements; times in ns. */
#ifndef __MTCP_SKEW_H__
#define __MTCP_SKEW_H__

#include <gst/gst.h>

G_BEGIN_DECLS

typedef struct _MtcpSkew MtcpSkew;

/* Rates beyond this are not clock drift (a sender bursting or pausing, a
 * path that changed): the estimate starts over instead of following. */
#define MTCP_SKEW_MAX_PPM 10000.0

/* @window: arrival time over which one minimum is taken (e.g. 1 s);
 * @n_windows: how many minima the line is fitted through (e.g. 60). */
MtcpSkew *mtcp_skew_new (GstClockTime window, guint n_windows);
void mtcp_skew_free (MtcpSkew * skew);

/* Forget everything: a new stream, a new mapping. */
void mtcp_skew_reset (MtcpSkew * skew);

/* A buffer stamped @sender_time arrived at local time @arrival. */
void mtcp_skew_observe (MtcpSkew * skew, GstClockTime sender_time,
    GstClockTime arrival);

/* How much later (ns, may be negative) than by the first buffer's offset
 * a buffer stamped @sender_time is to be mapped. 0 until enough windows
 * were seen. */
gint64 mtcp_skew_correction (MtcpSkew * skew, GstClockTime sender_time);

/* The sender's clock rate relative to ours, in ppm (positive: its clock
 * runs fast), as last estimated; 0 while unknown. */
gdouble mtcp_skew_get_ppm (MtcpSkew * skew);

/* TRUE once a line has been fitted. */
gboolean mtcp_skew_is_valid (MtcpSkew * skew);

G_END_DECLS

#endif

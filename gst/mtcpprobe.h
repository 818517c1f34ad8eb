/* multitcp
 * Copyright (C) 2026 the multitcp authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
/* A probe of what a session's path carries above the stream (issue 24).
 * While the stream is the limit, neither TCP's windows nor what arrives
 * show the room above it, and raising the encoder to find out commits
 * frames to a rate the path may not carry. A probe instead adds padding
 * for a short while, paced so that the stream and the padding together
 * make the rate asked for: what the path then delivers is what it can
 * carry, and the encoder moves only after it was seen (WebRTC's probe
 * clusters do the same with RTP padding). The probe ends early once the
 * path queues: padding that waits in the path delays frames.
 *
 * Pure pacing arithmetic: times passed in (µs). No locking inside: the
 * owner serialises calls. */
#ifndef __MTCP_PROBE_H__
#define __MTCP_PROBE_H__

#include <glib.h>

G_BEGIN_DECLS

typedef struct _MtcpRateProbe MtcpRateProbe;

/* how long a probe lasts: the span the estimate's delivered rate is
 * measured over (500 ms) and the tick it is measured at (200 ms), so that
 * one span holds nothing but the stream and padding */
#define MTCP_PROBE_DURATION_US (700 * G_TIME_SPAN_MILLISECOND)
/* padding owed beyond this long's worth of its rate is not made up: a
 * connection that could not send for a while gets no burst */
#define MTCP_PROBE_BURST_US (40 * G_TIME_SPAN_MILLISECOND)
/* a connection's path queue (RTT over least RTT) grown by this since the
 * probe began takes no more padding; all of them: the probe ends (a
 * queue there before it is the stream's) */
#define MTCP_PROBE_QUEUE_US (50 * G_TIME_SPAN_MILLISECOND)
/* the least padding frame worth sending, bytes */
#define MTCP_PROBE_MIN_BYTES 1200

MtcpRateProbe *mtcp_rate_probe_new (void);
void mtcp_rate_probe_free (MtcpRateProbe * probe);

/* From @now_us for @duration_us, padding at @padding_bps (bits/s) on top
 * of the stream. A probe still running is replaced. */
void mtcp_rate_probe_start (MtcpRateProbe * probe, gint64 now_us,
    guint64 padding_bps, gint64 duration_us);
/* Ends the probe now; @early: the path queued, or the encoder was cut
 * (counted in stats). */
void mtcp_rate_probe_stop (MtcpRateProbe * probe, gint64 now_us,
    gboolean early);
gboolean mtcp_rate_probe_active (MtcpRateProbe * probe, gint64 now_us);
/* Active, or ended less than MTCP_PROBE_DURATION_US ago: what it delivered
 * is still in the estimate's span. */
gboolean mtcp_rate_probe_recent (MtcpRateProbe * probe, gint64 now_us);
/* Bytes of padding due at @now_us: what the rate has earned since the
 * start less what was sent, at most MTCP_PROBE_BURST_US of it; 0 when
 * less than MTCP_PROBE_MIN_BYTES is due or no probe runs. */
gsize mtcp_rate_probe_due (MtcpRateProbe * probe, gint64 now_us);
void mtcp_rate_probe_sent (MtcpRateProbe * probe, gsize bytes);

/* for stats: probes started, ended early, padding bytes sent in all */
guint64 mtcp_rate_probe_count (const MtcpRateProbe * probe);
guint64 mtcp_rate_probe_stopped_early (const MtcpRateProbe * probe);
guint64 mtcp_rate_probe_bytes (const MtcpRateProbe * probe);

G_END_DECLS

#endif

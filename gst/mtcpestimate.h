/* multitcp
 * Copyright (C) 2026 the multitcp authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
/* What one session's connections can carry now, for a bitrate that
 * follows the network (issue 24; MULTFRC's premise: the video's rate is
 * what the connections achieve together). Fed every tick with what the
 * sink measures: bytes the receiver's TCP acknowledged (the connections'
 * delivered rate), the connections' windows over their RTTs (what TCP
 * would send if the stream gave it more), and what waits to be sent.
 *
 * While more waits than the sockets drain in 150 ms (at what they
 * delivered or their windows carry, whichever is more; the path's own
 * queue counted in, which is where a stream above its rate waits when the
 * windows are large), the path is the
 * limit and the estimate is what it delivered over the last half second;
 * otherwise the stream
 * is the limit and the estimate is the larger of that and the windows.
 * Down at once; up at once to what arrived, slowly towards what the
 * windows might carry; 0 while the path is dark. While TCP itself holds
 * every window down (MtcpRateSample.held_down), for MTCP_ESTIMATE_HOLD_US
 * at most, the judgement stands and the estimate does not fall.
 *
 * No locking inside: the owner (MtcpServer) serialises calls. */
#ifndef __MTCP_ESTIMATE_H__
#define __MTCP_ESTIMATE_H__

#include <glib.h>

G_BEGIN_DECLS

typedef struct _MtcpRateEstimate MtcpRateEstimate;

typedef struct {
  guint64 bytes_acked;          /* acknowledged so far, every connection the
                                 * session had (closed ones too) */
  guint64 window_bps;           /* sum of cwnd x MSS / RTT, bits/s */
  guint64 waiting_bytes;        /* the session's queue and its sockets'
                                 * unsent bytes */
  gboolean dark;                /* no ACK for long on every busy connection */
  gint64 queued_us;             /* what the path's own queue holds: the least
                                 * of RTT over least RTT among connections
                                 * with data in flight */
  gboolean probing;             /* padding runs (mtcpprobe.h): a rise of
                                 * the delivered rate is told */
  gboolean held_down;           /* TCP itself holds every connection's
                                 * window down (a loss repaired, bbr's
                                 * PROBE_RTT): what waits meanwhile says
                                 * nothing of the path; the judgement from
                                 * before stands, the estimate does not
                                 * fall, for MTCP_ESTIMATE_HOLD_US */
} MtcpRateSample;

/* the longest a hold lasts: a repair takes a round trip or two, PROBE_RTT
 * 200 ms and one; near-continuous repairs (a policer, a receiver that
 * fakes losses) are read as the path after it */
#define MTCP_ESTIMATE_HOLD_US (2 * G_USEC_PER_SEC)

/* the span the delivered rate is measured over */
#define MTCP_ESTIMATE_SPAN_US (500 * G_TIME_SPAN_MILLISECOND)
/* a change of this share from the last one told is significant */
#define MTCP_ESTIMATE_CHANGE 0.2
/* and it is told at least this often */
#define MTCP_ESTIMATE_TELL_US G_USEC_PER_SEC

MtcpRateEstimate *mtcp_rate_estimate_new (void);
void mtcp_rate_estimate_free (MtcpRateEstimate * estimate);

/* One measurement at @now_us (monotonic). TRUE when the estimate should be
 * told now: it moved by MTCP_ESTIMATE_CHANGE since it was last told, the
 * delivered rate rose by as much while probing (the padding arrived), the path became or stopped being the limit, or
 * MTCP_ESTIMATE_TELL_US passed. */
gboolean mtcp_rate_estimate_update (MtcpRateEstimate * estimate,
    gint64 now_us, const MtcpRateSample * sample);
/* bits/s; 0 until the first span was measured, and while dark */
guint64 mtcp_rate_estimate_bps (const MtcpRateEstimate * estimate);
/* What the connections delivered over the last span, bits/s (0 while
 * dark): all of the estimate while the path limits, the part seen rather
 * than guessed from the windows while the stream does. */
guint64 mtcp_rate_estimate_delivered_bps (const MtcpRateEstimate * estimate);
/* A span was measured: the estimate means something (0 then is dark). */
gboolean mtcp_rate_estimate_known (const MtcpRateEstimate * estimate);
/* The path, not the stream, limited the last measurement. */
gboolean mtcp_rate_estimate_path_limited (const MtcpRateEstimate * estimate);
/* How long what waited at the last measurement takes to drain at the rate
 * the sockets drain it, with what the path's queue held (µs; 0 while
 * dark): the backlog a lower bitrate has to clear. */
gint64 mtcp_rate_estimate_waited_us (const MtcpRateEstimate * estimate);

G_END_DECLS

#endif

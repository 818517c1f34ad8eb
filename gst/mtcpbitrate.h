/* multitcp
 * Copyright (C) 2026 the multitcp authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
/* The encoder's bitrate from the sink's bandwidth estimate (issue 24;
 * MULTFRC, seed 002: the video's rate is what the connections achieve
 * together). Down at once to a share of the estimate when the path, not
 * the stream, limits it and that share is below what the encoder makes. Up only
 * after a hold since the last change: towards the estimate's share when it
 * shows room (at most doubling), else, while nothing waits, by a probe
 * step, because a stream that sends less than the path carries never
 * measures what the path would carry (TCP's windows stop growing when the
 * application is the limit). A step up followed by a step down within 3 s
 * failed: the hold doubles, up to 4 holds, so a stream at a steady path's
 * rate probes seldom; a step that held 3 s, or an outage, brings it back
 * to one. For a receiver whose latency leaves room for a step that
 * overshoots (MTCP_BITRATE_QUICK_BUDGET_US) the steps are quick,
 * MTCP_BITRATE_QUICK_PROBE after MTCP_BITRATE_QUICK_HOLD_US, unless the
 * path refused the last two at one level (the estimate at a refusal's
 * first cut within SAME_LEVEL of where the last refusal's fall ended; the
 * cuts of one fall are one refusal): then careful as above, until a
 * refusal at another level or a step that holds 3 s above it (the path
 * moved). Quick steps and levels are the probes that raise the encoder;
 * a padding probe refused doubles the hold as before. The least while the
 * path is dark, so that the stream starts low when it comes back.
 *
 * With padding probes (mtcp_bitrate_control_set_padding_probes) the
 * probe does not commit the encoder: the controller asks its owner for
 * padding that makes the stream up to what a doubled encoder would need
 * (mtcpprobe.h) and moves the encoder only when what was delivered then
 * shows the room (the most it showed, once it showed all it was for or
 * MTCP_BITRATE_PROBE_WAIT_US passed); a probe that showed none, or after
 * which the path limits, failed, as a step up the path refused. A stream-
 * limited estimate shows room only as far as what was delivered: above
 * that it is TCP's windows, a guess (bbr keeps a rate it measured long
 * ago).
 *
 * No locking inside: the owner serialises calls. */
#ifndef __MTCP_BITRATE_H__
#define __MTCP_BITRATE_H__

#include <glib.h>

G_BEGIN_DECLS

typedef struct _MtcpBitrateControl MtcpBitrateControl;

typedef struct {
  guint64 min_bps;
  guint64 max_bps;
} MtcpBitrateBounds;

/* the share of the estimate the encoder gets: the rest absorbs a
 * keyframe's burst and the estimate's error */
#define MTCP_BITRATE_SHARE 0.8
/* a cut leaves room to drain what waits within this: the share's fifth
 * alone (less the stream's overhead) drained a second's backlog in five
 * or more while the path kept falling */
#define MTCP_BITRATE_DRAIN_US (1 * G_USEC_PER_SEC)
/* no careful step up sooner than this after a change (doubled per
 * failed step) */
#define MTCP_BITRATE_HOLD_US (1 * G_USEC_PER_SEC)
/* a careful probe step: this share of the bitrate */
#define MTCP_BITRATE_PROBE 0.25
/* a quick step up no sooner than this after a change, */
#define MTCP_BITRATE_QUICK_HOLD_US (600 * G_TIME_SPAN_MILLISECOND)
/* and a quick probe step this share of the bitrate: a cellular path's
 * rate moves by a factor of about 1.7 a second, and careful steps left
 * the encoder at half of what it carried (docs/experiments/bitrate.md,
 * stop 62) */
#define MTCP_BITRATE_QUICK_PROBE 0.75
/* quick steps only for a receiver whose latency is at least this: on
 * the cellular cells at 1 s every quicker variant tried made more frames
 * late outside long outages (48-318 a session against 0-123), at 2 s no
 * more than careful steps (stop 62) */
#define MTCP_BITRATE_QUICK_BUDGET_US (2 * G_USEC_PER_SEC)
/* how long a padding probe has to show room: its padding (0.7 s), an RTT
 * or two and the tick the estimate is told at */
#define MTCP_BITRATE_PROBE_WAIT_US (1200 * G_TIME_SPAN_MILLISECOND)

MtcpBitrateControl *mtcp_bitrate_control_new (const MtcpBitrateBounds *
    bounds, guint64 start_bps);
void mtcp_bitrate_control_free (MtcpBitrateControl * control);

/* The estimate at @now_us (bits/s; 0: the path is dark), whether the
 * path, not the stream, limited it (only then is a lower estimate a reason
 * to go down: a stream-limited one is a floor), what was delivered over
 * its last span (with padding probes, a stream-limited estimate shows
 * room only as far as that: the rest is the windows' guess), and how long
 * what waits takes to drain (µs; a cut leaves room to drain it within
 * MTCP_BITRATE_DRAIN_US). TRUE when the encoder's bitrate should change,
 * to *@bps. */
gboolean mtcp_bitrate_control_update (MtcpBitrateControl * control,
    gint64 now_us, guint64 estimate_bps, gboolean path_limited,
    guint64 delivered_bps, gint64 waited_us, guint64 * bps);
guint64 mtcp_bitrate_control_bps (const MtcpBitrateControl * control);
/* Probe with padding instead of raising the encoder by a step. */
void mtcp_bitrate_control_set_padding_probes (MtcpBitrateControl * control,
    gboolean padding);
/* Probe with padding only after the path was dark, until the encoder is
 * back at the bitrate the outage found (the one before the cuts that led
 * into it), or for 10 s of the path back at most: TCP's windows remember
 * the path before it (bbr keeps its rate, a window is restored), so their
 * guess doubles the encoder onto a path that came back slower. */
void mtcp_bitrate_control_set_padding_after_outage (MtcpBitrateControl *
    control, gboolean after_outage);
/* The latency of the receiver followed (µs; 0: unknown): quick steps only
 * from MTCP_BITRATE_QUICK_BUDGET_US. */
void mtcp_bitrate_control_set_budget (MtcpBitrateControl * control,
    gint64 latency_us);
/* Whether a receiver's latency (µs) leaves room for quick steps; its
 * owner then updates the controller at every measurement rather than at
 * the estimates told (a fifth's move or a second). */
gboolean mtcp_bitrate_control_quick_budget (gint64 latency_us);
/* TRUE once after the last update started a padding probe: the stream and
 * the padding together should make *@total_bps; or stopped one (the path
 * limits now): *@total_bps is 0. */
gboolean mtcp_bitrate_control_take_probe (MtcpBitrateControl * control,
    guint64 * total_bps);
/* how many times it changed the bitrate */
guint64 mtcp_bitrate_control_changes (const MtcpBitrateControl * control);

G_END_DECLS

#endif

/* multitcp
 * Copyright (C) 2026 the multitcp authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
/* How long a frame written now on one connection takes to reach the
 * receiver beyond the path's one-way delay, from that connection's
 * TCP_INFO: what waits before it in the socket, and what is queued ahead
 * of it in the path. The sink's deadline gate and its choice of the
 * sooner connection read it (mtcpserverschedule.c).
 *
 * The smoothed RTT tells the queueing the last ACKs met; on a path that
 * slowed it lags by seconds while the window (bbr's above all) still holds
 * a second or more of data. So while a queue stands (RTT at least twice
 * the least) what is in flight counts too, at the rate the path
 * acknowledged over the last MTCP_DRAIN_SPAN_US, if a queue stood all
 * through it (MtcpDrainRate).
 *
 * No locking inside: plain data, owned by its connection. */
#ifndef __MTCP_TRANSIT_H__
#define __MTCP_TRANSIT_H__

#include <glib.h>

#include "mtcptcpinfo.h"

G_BEGIN_DECLS

/* the span a drain rate is measured over: a few ACKs at the slowest rates
 * a stream meets */
#define MTCP_DRAIN_SPAN_US (250 * G_TIME_SPAN_MILLISECOND)

/* What a connection's receiver acknowledged per second over the last
 * span. Zero-initialised: nothing known. */
typedef struct {
  gint64 span_start_us;
  guint64 acked_at_start;
  gboolean span_queued;         /* a queue stood at every note of this span */
  guint64 bytes_per_s;          /* 0 = not known */
  gboolean path_limited;        /* a queue stood all through the span that
                                 * measured it: the path's rate, not the
                                 * stream's (a keyframe's queue that formed
                                 * and emptied again leaves the link idle) */
  gboolean span_backlogged;     /* unsent data at every note of this span */
  gboolean backlogged;          /* and all through the span that measured
                                 * bytes_per_s: the most the connection
                                 * could deliver, not the stream's rate */
  guint64 rwnd_limited_at_start;        /* MtcpTcpInfo's, at span start */
  gboolean receiver_limited;    /* the receiver's window held the sender
                                 * back for half or more of the last span */
  guint64 last_path_bytes_per_s;        /* the newest span's that a standing
                                         * queue or a backlog lasted all
                                         * through, 0 = none */
} MtcpDrainRate;

/* At @now_us (monotonic) the connection had @bytes_acked acknowledged in
 * all, the path kept a queue (mtcp_transit_path_queue_stands) or not, data
 * waited unsent in its socket (@backlogged) or not, and the receiver's
 * window had held it back @rwnd_limited_us in all (MtcpTcpInfo's). A span
 * without any ACK (the path dark) leaves the last rate: it is a pause,
 * not a rate. */
void mtcp_drain_rate_note (MtcpDrainRate * drain, gint64 now_us,
    guint64 bytes_acked, gboolean queue_stands, gboolean backlogged,
    guint64 rwnd_limited_us);

/* mtcp_drain_rate_note from the connection's TCP_INFO @info at @now_us,
 * with data waiting unsent in its socket (@backlogged) or not. A backlog
 * while TCP holds its window down (mtcp_transit_window_held_down: a loss
 * repaired, bbr's PROBE_RTT) measures that, not what the path carries:
 * such a note is not backlogged. */
void mtcp_drain_rate_note_info (MtcpDrainRate * drain, gint64 now_us,
    const MtcpTcpInfo * info, gboolean backlogged);

/* What drains a standing queue: the last rate if a queue stood all
 * through its span, else 0 (not known). */
guint64 mtcp_drain_rate_of_path (const MtcpDrainRate * drain);

/* What the connection delivers while it has more than it sends: the last
 * rate if data waited unsent all through its span, else 0 (not known: a
 * span that was partly idle, as a keyframe's burst after a thin stream,
 * measured the stream). */
guint64 mtcp_drain_rate_of_backlog (const MtcpDrainRate * drain);

/* What the path carried the last time it, not the stream, was the limit:
 * the rate of the newest span that a standing queue or unsent data lasted
 * all through, however long ago; 0 if none since the first note, a
 * counter that went back or the last restart. */
guint64 mtcp_drain_rate_last_of_path (const MtcpDrainRate * drain);

/* What the receiver takes: the last rate if its window held the sender
 * back for half or more of the last span (a receiver that reads slowly
 * opens its window only as fast as it reads), else 0 (not known). */
guint64 mtcp_drain_rate_of_receiver (const MtcpDrainRate * drain);

/* The path was dark and is heard again: what it drained before says
 * nothing of what it drains now (the rate was the stream's, or the
 * capacity's of seconds ago). Unknown until a span from @now_us is over. */
void mtcp_drain_rate_restart (MtcpDrainRate * drain, gint64 now_us,
    guint64 bytes_acked, guint64 rwnd_limited_us);

/* Microseconds a frame written now waits beyond the path's one-way delay:
 * @waiting bytes before it in the socket (user space and kernel), what is
 * in flight per @info, drained at @drain_bytes_per_s (0: not known) while a
 * queue stands. @rtt_cap_us, when not 0, caps the smoothed RTT counted
 * (after a silence, whose delayed ACKs inflate it). */
gint64 mtcp_transit_us (const MtcpTcpInfo * info, guint64 waiting,
    guint64 drain_bytes_per_s, guint32 rtt_cap_us);

/* Bytes a new connection delivers within @within_us in slow start from
 * @info's window: one window in the first RTT, twice as much in each one
 * after (the least it does on a path with room; loss only slows it).
 * G_MAXUINT64 with no RTT measured yet: nothing to go by. */
guint64 mtcp_transit_slow_start_bytes (const MtcpTcpInfo * info,
    gint64 within_us);

/* How often a dark path (every connection on it silent) gets a new
 * connection whose SYN is on a fresh timer, the one before it abandoned:
 * half a second, so that the stream is back soon after the path, but three
 * of the path's least round trips at least (0: not known), so that a probe
 * is not abandoned while its answer may still be on its way; 3 s at most. */
#define MTCP_TRANSIT_PROBE_INTERVAL_US (500 * G_TIME_SPAN_MILLISECOND)
#define MTCP_TRANSIT_PROBE_INTERVAL_MAX_US (3 * G_USEC_PER_SEC)
gint64 mtcp_transit_probe_interval_us (guint32 least_rtt_us);

/* The receiver's window is what holds the connection back: what is in
 * flight fills the window it advertised, or it advertised none (a
 * receiver that reads slowly), by @info; FALSE if the kernel does not
 * say. */
gboolean mtcp_transit_receiver_window_full (const MtcpTcpInfo * info);

/* What a connection with data waiting unsent delivers, bytes/s: the
 * kernel's last sample, no more than what its span drained if the backlog
 * lasted all through it, the receiver's window is full or the receiver
 * held it back (a flight's sample on a short path reads what a window
 * opening let out). Else the sample if its window is full and it was not
 * app-limited; 0 (not known) otherwise: a frame handed over to a window
 * with room is sent at the stream's rate or at the pacer's, which bbr
 * sets from what the stream gave it (6.8 Mbit/s on a 50 Mbit/s path that
 * the window read at 14 cut the estimate at once, twice a second). */
guint64 mtcp_transit_backlog_rate (const MtcpTcpInfo * info,
    const MtcpDrainRate * drain);

/* A queue stands in the path: data in flight and the smoothed RTT at
 * least twice the least. */
gboolean mtcp_transit_queue_stands (const MtcpTcpInfo * info);

/* A queue stands and the path, not the stream, keeps it: the connection
 * has more to send (@backlogged) or a full window in flight. After a
 * burst a thin stream's few ACKs bring the smoothed RTT down over a
 * second or more while the link idles; a span then measures the stream. */
gboolean mtcp_transit_path_queue_stands (const MtcpTcpInfo * info,
    gboolean backlogged);

/* A queue stands now and stood at every note of the last span: the path
 * is the limit. A new connection's loss recovery (3% at 200 ms) lifts its
 * smoothed RTT past twice the least for a moment, and so does a
 * keyframe's burst; neither is a queue its next frame waits behind. */
gboolean mtcp_transit_queue_held (const MtcpTcpInfo * info,
    const MtcpDrainRate * drain);

/* TCP repairs a loss on a path that still answers and holds no queue: in
 * fast recovery or after a timeout, or with segments marked lost or resent
 * in flight, an ACK heard within the last two round trips (200 ms at
 * least) and no queue standing. A random loss on a path with room: the
 * window then says nothing of what the path carries (bbr holds it to what
 * is in flight, a timeout leaves one segment), nor does what a backlog
 * drains meanwhile. A path that slowed keeps a queue; a dark one sends no
 * ACK. A policer or a shallow buffer that drops without a queue reads as
 * a repair too, until a reading outside one or the backlog says more. */
gboolean mtcp_transit_repairing_loss (const MtcpTcpInfo * info);

/* TCP holds its window below what the path carries, for reasons of its
 * own: repairing a loss (mtcp_transit_repairing_loss), or bbr in PROBE_RTT
 * with an ACK heard as lately (Linux's bbr keeps 4 segments in flight for
 * 200 ms and a round trip when it saw no RTT as low as its least for 10 s:
 * 2.3 Mbit/s on a 20 ms path, and an 8 Mbit/s stream's backlog of 150-250
 * kB read as the path's limit and cut the encoder). */
gboolean mtcp_transit_window_held_down (const MtcpTcpInfo * info);

/* A connection's reading of what it would carry, kept from before TCP
 * held its window down. Zero-initialised: none kept. */
typedef struct {
  guint64 bytes_per_s;
  gint64 at_us;                 /* when it was read, 0: none */
  gint64 held_down_us;          /* the last reading while held down */
} MtcpHeldReading;

/* how long a reading from before a repair stands in for the window: a
 * repair takes a round trip or two, back to back at a few percent loss;
 * PROBE_RTT 200 ms and one */
#define MTCP_HELD_READING_US (2 * G_USEC_PER_SEC)

/* The reading (bytes/s) to count at @now_us for a connection that reads
 * @reading now: while TCP @held_down its window
 * (mtcp_transit_window_held_down), and
 * for @settle_us after (the window regrows over a round trip or two), the
 * larger of that and the last reading from before, if one was kept within
 * MTCP_HELD_READING_US; otherwise @reading, which is kept. */
guint64 mtcp_held_reading_take (MtcpHeldReading * held, gint64 now_us,
    guint64 reading, gboolean held_down, gint64 settle_us);

/* A frame @late_us behind its schedule, @transit_us from the receiver,
 * arrives past @latency_us. While a queue is held (@queue_held), unless
 * it has half its transit to spare: the rate that drains that queue
 * changes while the frame waits in it, and a frame at the edge of its
 * deadline comes late as often as not. Without one the transit is the
 * socket's and the RTT's, which a path with room only shortens. */
gboolean mtcp_transit_arrives_late (gint64 late_us, gint64 transit_us,
    gint64 latency_us, gboolean queue_held);

G_END_DECLS

#endif

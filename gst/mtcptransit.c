/* multitcp
 * Copyright (C) 2026 the multitcp authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "mtcptransit.h"

void
mtcp_drain_rate_note (MtcpDrainRate * drain, gint64 now_us,
    guint64 bytes_acked, gboolean queue_stands, gboolean backlogged,
    guint64 rwnd_limited_us)
{
  gint64 span = now_us - drain->span_start_us;

  /* the first note, or a counter that went back (another socket) */
  if (drain->span_start_us == 0 || bytes_acked < drain->acked_at_start ||
      rwnd_limited_us < drain->rwnd_limited_at_start) {
    drain->span_start_us = now_us;
    drain->acked_at_start = bytes_acked;
    drain->span_queued = queue_stands;
    drain->span_backlogged = backlogged;
    drain->rwnd_limited_at_start = rwnd_limited_us;
    drain->last_path_bytes_per_s = 0;
    return;
  }
  drain->span_queued &= queue_stands;
  drain->span_backlogged &= backlogged;
  if (span < MTCP_DRAIN_SPAN_US)
    return;
  /* judged every span, ACKs or not: a receiver that held the sender back
   * once (a window not yet grown at the start) is not slow for ever */
  drain->receiver_limited = (gint64) (rwnd_limited_us -
      drain->rwnd_limited_at_start) * 2 >= span;
  if (bytes_acked > drain->acked_at_start) {
    drain->path_limited = drain->span_queued;
    drain->backlogged = drain->span_backlogged;
    drain->bytes_per_s = (bytes_acked - drain->acked_at_start) *
        G_USEC_PER_SEC / span;
    if (drain->path_limited || drain->backlogged)
      drain->last_path_bytes_per_s = drain->bytes_per_s;
  }
  drain->span_start_us = now_us;
  drain->acked_at_start = bytes_acked;
  drain->span_queued = queue_stands;
  drain->span_backlogged = backlogged;
  drain->rwnd_limited_at_start = rwnd_limited_us;
}

void
mtcp_drain_rate_note_info (MtcpDrainRate * drain, gint64 now_us,
    const MtcpTcpInfo * info, gboolean backlogged)
{
  mtcp_drain_rate_note (drain, now_us, info->bytes_acked,
      mtcp_transit_path_queue_stands (info, backlogged), backlogged &&
      !mtcp_transit_window_held_down (info), info->rwnd_limited_us);
}

guint64
mtcp_drain_rate_of_path (const MtcpDrainRate * drain)
{
  return drain->path_limited ? drain->bytes_per_s : 0;
}

guint64
mtcp_drain_rate_of_backlog (const MtcpDrainRate * drain)
{
  return drain->backlogged ? drain->bytes_per_s : 0;
}

guint64
mtcp_drain_rate_last_of_path (const MtcpDrainRate * drain)
{
  return drain->last_path_bytes_per_s;
}

guint64
mtcp_drain_rate_of_receiver (const MtcpDrainRate * drain)
{
  return drain->receiver_limited ? drain->bytes_per_s : 0;
}

void
mtcp_drain_rate_restart (MtcpDrainRate * drain, gint64 now_us,
    guint64 bytes_acked, guint64 rwnd_limited_us)
{
  drain->span_start_us = now_us;
  drain->acked_at_start = bytes_acked;
  drain->rwnd_limited_at_start = rwnd_limited_us;
  drain->receiver_limited = FALSE;
  drain->span_queued = TRUE;
  drain->span_backlogged = TRUE;
  drain->bytes_per_s = 0;
  drain->last_path_bytes_per_s = 0;
  drain->path_limited = FALSE;
  drain->backlogged = FALSE;
}

static gint64
bytes_over_rate_us (guint64 bytes, guint64 bytes_per_s)
{
  if (bytes == 0)
    return 0;
  if (bytes_per_s == 0)
    return G_MAXINT32;
  return (gint64) MIN (bytes * G_USEC_PER_SEC / bytes_per_s,
      (guint64) G_MAXINT32);
}

gint64
mtcp_transit_us (const MtcpTcpInfo * info, guint64 waiting,
    guint64 drain_bytes_per_s, guint32 rtt_cap_us)
{
  guint64 rate = info->delivery_rate;   /* bytes/s */
  gint64 transit, queued = 0;

  /* the last delivery sample understates a connection that carried
   * little; a window an RTT it can send at least */
  if (info->rtt_us > 0)
    rate = MAX (rate, (guint64) info->snd_cwnd * info->snd_mss *
        G_USEC_PER_SEC / info->rtt_us);
  transit = bytes_over_rate_us (waiting, rate);
  /* with nothing in flight none of ours is queued, and a gate that held
   * frames back on a stale RTT would send nothing to bring it down */
  if (info->unacked == 0 || info->min_rtt_us == 0)
    return transit;
  {
    guint32 rtt = rtt_cap_us > 0 ? MIN (info->rtt_us, rtt_cap_us) :
        info->rtt_us;
    if (rtt > info->min_rtt_us)
      queued = rtt - info->min_rtt_us;
  }
  transit += queued;
  /* a standing queue: the path is the limit, so what it acknowledged
   * lately is what drains the window and the socket ahead of the frame */
  if (drain_bytes_per_s > 0 && mtcp_transit_queue_stands (info)) {
    guint64 ahead = waiting + (guint64) info->unacked * info->snd_mss;
    guint64 pipe = drain_bytes_per_s * info->min_rtt_us / G_USEC_PER_SEC;

    if (ahead > pipe)
      transit = MAX (transit, bytes_over_rate_us (ahead - pipe,
              drain_bytes_per_s));
  }
  return transit;
}

guint64
mtcp_transit_slow_start_bytes (const MtcpTcpInfo * info, gint64 within_us)
{
  guint64 rounds, bytes;

  if (within_us <= 0)
    return 0;
  /* no RTT measured: no bound to put on it */
  if (info->rtt_us == 0)
    return G_MAXUINT64;
  rounds = MIN ((guint64) within_us / info->rtt_us, 32);
  if (__builtin_mul_overflow ((guint64) MAX (info->snd_cwnd, 1) *
          MAX (info->snd_mss, 536), (G_GUINT64_CONSTANT (1) << rounds) - 1,
          &bytes))
    return G_MAXUINT64;
  return bytes;
}

gint64
mtcp_transit_probe_interval_us (guint32 least_rtt_us)
{
  return CLAMP (3 * (gint64) least_rtt_us, MTCP_TRANSIT_PROBE_INTERVAL_US,
      MTCP_TRANSIT_PROBE_INTERVAL_MAX_US);
}

gboolean
mtcp_transit_receiver_window_full (const MtcpTcpInfo * info)
{
  /* within a segment of it: the sender cannot send another */
  return info->snd_wnd_known && (guint64) info->unacked * info->snd_mss +
      info->snd_mss >= info->snd_wnd;
}

guint64
mtcp_transit_backlog_rate (const MtcpTcpInfo * info,
    const MtcpDrainRate * drain)
{
  guint64 drained = mtcp_drain_rate_of_backlog (drain);

  if (drained == 0 && mtcp_transit_receiver_window_full (info))
    drained = drain->bytes_per_s;
  if (drained == 0)
    drained = mtcp_drain_rate_of_receiver (drain);
  if (drained > 0)
    return MIN (info->delivery_rate, drained);
  /* with room in the window the sample measured the stream, or the pacer
   * that paces a thin stream at what the stream gave it (bbr) */
  return !info->delivery_rate_app_limited && info->unacked >= info->snd_cwnd ?
      info->delivery_rate : 0;
}

gboolean
mtcp_transit_queue_stands (const MtcpTcpInfo * info)
{
  return info->unacked > 0 && info->min_rtt_us > 0 &&
      info->rtt_us >= 2 * info->min_rtt_us;
}

gboolean
mtcp_transit_path_queue_stands (const MtcpTcpInfo * info,
    gboolean backlogged)
{
  return mtcp_transit_queue_stands (info) && (backlogged ||
      info->unacked >= info->snd_cwnd);
}

gboolean
mtcp_transit_queue_held (const MtcpTcpInfo * info,
    const MtcpDrainRate * drain)
{
  return mtcp_transit_queue_stands (info) &&
      mtcp_drain_rate_of_path (drain) > 0;
}

gboolean
mtcp_transit_arrives_late (gint64 late_us, gint64 transit_us,
    gint64 latency_us, gboolean queue_held)
{
  return late_us + transit_us + (queue_held ? transit_us / 2 : 0) >
      latency_us;
}

/* An ACK came within the last two round trips (200 ms at least). */
static gboolean
heard_lately (const MtcpTcpInfo * info)
{
  return info->last_ack_recv_ms <= MAX (2 * (guint64) info->rtt_us / 1000,
      200);
}

gboolean
mtcp_transit_repairing_loss (const MtcpTcpInfo * info)
{
  return mtcp_tcp_info_in_loss_recovery (info) && heard_lately (info) &&
      !mtcp_transit_queue_stands (info);
}

gboolean
mtcp_transit_window_held_down (const MtcpTcpInfo * info)
{
  return mtcp_transit_repairing_loss (info) || (info->bbr_probing_rtt &&
      heard_lately (info));
}

guint64
mtcp_held_reading_take (MtcpHeldReading * held, gint64 now_us,
    guint64 reading, gboolean held_down, gint64 settle_us)
{
  gboolean fresh = held->at_us != 0 &&
      now_us - held->at_us <= MTCP_HELD_READING_US;

  if (held_down)
    held->held_down_us = now_us;
  else if (held->held_down_us == 0 || now_us - held->held_down_us > settle_us ||
      reading >= held->bytes_per_s || !fresh) {
    held->bytes_per_s = reading;
    held->at_us = now_us;
    return reading;
  }
  return fresh ? MAX (reading, held->bytes_per_s) : reading;
}

/* multitcp
 * Copyright (C) 2026 the multitcp authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "mtcpcontrol.h"
#include "mtcpadjustwindow.h"
#include "mtcpadjustconn.h"
#include "mtcpmultfrc.h"
#include "mtcppars.h"
#include "mtcpsharetrial.h"
#include "mtcppacedcount.h"

#include <gst/gst.h>

#include <string.h>

GST_DEBUG_CATEGORY_STATIC (mtcp_control_debug);
#define GST_CAT_DEFAULT mtcp_control_debug

/* MULTFRC's RTT samples: once per round trip, at most as often as the sink
 * reports (every 200 ms) */
#define REPORT_INTERVAL_S 0.2
#define DEFAULT_MSS 1448

struct _MtcpControl {
  MtcpControlConfig config;
  guint connections;            /* the property; 0 = from ParS's model */
  guint fewest;                 /* one per local address */

  MtcpAdjustWindow window;
  MtcpAdjustConn conn_control;
  MtcpMultfrc multfrc;
  gboolean multfrc_started;
  gint64 rtt_sample_us;         /* last RTT sample given to MULTFRC */
  gboolean control_started;
  gboolean pars_done;
  guint pars_count;             /* ParS's count, before the share trials */
  gint64 pars_at_us;            /* when it was taken from the loss; 0: not
                                 * (bbr), or taken again since */
  MtcpShareTrial share_trial;
  MtcpPacedCount paced_count;
  gint64 paced_us;              /* the sink last said it paces; 0: not
                                 * since the paced count last started */
  guint64 paced_bytes;          /* payload at the last tick that saw more */
  gint64 paced_heard_us;        /* when that was */
  gboolean paced_started;       /* the first PACED set the count's start */
  guint32 least_rtt_us;         /* the lowest RTT any REPORT gave */
  guint wanted;
  gint64 interval_start_us;
  gboolean join_interval_done;  /* the first, the join burst, is skipped */
  guint64 interval_bytes_mark;
  guint64 interval_backlog;     /* most bytes the sink held back for us */
  gdouble target_Bps;
  gchar count_reason[200];

  gboolean windows_due;         /* an interval ended: windows follow */
  gdouble sample_Bps, rtt_s;    /* of that interval */
  gboolean network_limited;
  guint mss;
  guint windows_bytes[MTCP_WINDOW_MAX_CONNECTIONS];
};

MtcpControl *
mtcp_control_new (const MtcpControlConfig * config, guint connections,
    guint fewest)
{
  MtcpControl *ctl = g_new0 (MtcpControl, 1);
  static gsize done = 0;

  if (g_once_init_enter (&done)) {
    GST_DEBUG_CATEGORY_INIT (mtcp_control_debug, "multitcpcontrol", 0,
        "multitcp receiver's control policy");
    g_once_init_leave (&done, 1);
  }
  ctl->config = *config;
  ctl->connections = connections;
  ctl->fewest = MAX (MAX (config->min_connections, 1), fewest);
  ctl->window.measured = -1;
  ctl->mss = DEFAULT_MSS;
  mtcp_share_trial_init (&ctl->share_trial, config->max_connections);
  mtcp_paced_count_init (&ctl->paced_count, MIN (MAX (ctl->fewest,
              MTCP_PACED_COUNT_FEWEST), config->max_connections),
      config->max_connections);
  return ctl;
}

void
mtcp_control_free (MtcpControl * ctl)
{
  g_free (ctl);
}

guint
mtcp_control_start (MtcpControl * ctl)
{
  ctl->wanted = ctl->connections ? ctl->connections :
      CLAMP (MTCP_CONTROL_START_CONNECTIONS, ctl->fewest,
      ctl->config.max_connections);
  return ctl->wanted;
}

gboolean
mtcp_control_set_connections (MtcpControl * ctl, guint connections)
{
  ctl->connections = connections;
  /* share: the trials start over from the new count */
  if (ctl->config.connections == MTCP_CONNECTION_CONTROL_SHARE)
    mtcp_share_trial_init (&ctl->share_trial, ctl->config.max_connections);
  if (connections == 0 && ctl->config.connections ==
      MTCP_CONNECTION_CONTROL_SHARE && ctl->pars_done) {
    ctl->wanted = ctl->pars_count;
    g_snprintf (ctl->count_reason, sizeof (ctl->count_reason),
        "connections set to 0: ParS's count, %u", ctl->wanted);
    return TRUE;
  }
  if (connections == 0 ||
      (ctl->config.connections != MTCP_CONNECTION_CONTROL_FIXED &&
          ctl->config.connections != MTCP_CONNECTION_CONTROL_SHARE))
    return FALSE;
  ctl->wanted = connections;
  g_snprintf (ctl->count_reason, sizeof (ctl->count_reason),
      "connections set to %u", connections);
  return TRUE;
}

void
mtcp_control_note_report (MtcpControl * ctl, guint32 rtt_us,
    guint64 backlog_bytes)
{
  if (rtt_us > 0 && (ctl->least_rtt_us == 0 || rtt_us < ctl->least_rtt_us))
    ctl->least_rtt_us = rtt_us;
  ctl->interval_backlog = MAX (ctl->interval_backlog, backlog_bytes);
}

gdouble
mtcp_control_mean_rtt (const MtcpControlSnapshot * snap, guint * mss)
{
  gdouble sum = 0;
  guint i, n = 0;

  *mss = 0;
  for (i = 0; i < snap->n_conns; i++) {
    const MtcpControlConn *c = &snap->conns[i];
    if (c->ready && c->reported && c->rtt_us) {
      sum += c->rtt_us / 1e6;
      n++;
      if (c->mss)
        *mss = c->mss;
    }
  }
  if (*mss == 0)
    *mss = DEFAULT_MSS;
  return n ? sum / n : 0;
}

/* Loss as the sink's TCP sees it: retransmitted over sent segments;
 * @after_start: from the end of each connection's first recovery, over
 * the connections that had one (one that never lost a segment may not be
 * past its slow start, and counting it would bias the rate down). */
static gdouble
observed_loss (const MtcpControlSnapshot * snap, guint mss,
    gboolean after_start, gdouble * n_segments)
{
  gdouble retrans = 0, segments = 0;
  guint i;

  for (i = 0; i < snap->n_conns; i++) {
    const MtcpControlConn *c = &snap->conns[i];
    guint32 r;
    if (!c->reported || (after_start && c->total_retrans == 0))
      continue;
    r = c->total_retrans - (after_start ? MIN (c->recovered_retrans,
            c->total_retrans) : 0);
    retrans += r;
    segments += (gdouble) (c->bytes_acked - (after_start ?
            MIN (c->recovered_acked, c->bytes_acked) : 0)) / mss + r;
  }
  *n_segments = segments;
  return segments > 0 ? retrans / segments : 0;
}

/* The stream's rate at the sink, bytes/s (0: not measured yet). */
static gdouble
stream_rate (const MtcpControlSnapshot * snap)
{
  guint64 stream = 0;
  guint i;

  for (i = 0; i < snap->n_conns; i++)
    if (snap->conns[i].reported)
      stream = MAX (stream, snap->conns[i].stream_bitrate);
  return stream / 8.0;
}

static gdouble
target_rate (const MtcpControl * ctl, const MtcpControlSnapshot * snap)
{
  return mtcp_adjust_window_desired (ctl->config.target_bitrate / 8.0,
      stream_rate (snap), ctl->config.headroom);
}

/* connections=0: ParS's model (Eq. 19) gives the starting count once the
 * sink has reported enough segments for a loss rate; a connection
 * controller, if any, takes over from there. */
static gboolean
starting_count_known (const MtcpControl * ctl)
{
  return ctl->connections != 0 || ctl->pars_done;
}

/* Every connection that has reported runs a congestion control whose rate
 * loss does not bound (bbr at the sink). */
static gboolean
sender_ignores_loss (const MtcpControlSnapshot * snap)
{
  gboolean reported = FALSE;
  guint i;

  for (i = 0; i < snap->n_conns; i++) {
    if (!snap->conns[i].reported)
      continue;
    if (!snap->conns[i].rate_ignores_loss)
      return FALSE;
    reported = TRUE;
  }
  return reported;
}

/* The path's RTT for ParS, not one our own flows inflated filling a
 * queue: on a link slower than the stream, loss and RTT both come from
 * that queue, and more flows only fill it further (docs/benchmarks.md,
 * cellular). */
static gdouble
path_rtt (const MtcpControl * ctl, gdouble rtt)
{
  return ctl->least_rtt_us > 0 ? MIN (rtt, ctl->least_rtt_us / 1e6) : rtt;
}

static void
pars_starting_count (MtcpControl * ctl, const MtcpControlSnapshot * snap,
    gdouble rtt, guint mss)
{
  gdouble segments, loss;

  if (sender_ignores_loss (snap)) {
    /* Eq. 19 is loss-based TCP's rate: with the loss it would open tens of
     * bbr connections where one carries the stream and more only lose
     * more (docs/benchmarks.md, bbr); loss does not bound bbr's rate, so
     * the model's answer is the one for a path without loss */
    ctl->wanted = mtcp_pars_connections (ctl->target_Bps * 8, rtt, 0, mss,
        MTCP_PARS_PHI_RENO, ctl->fewest, ctl->config.max_connections);
    ctl->pars_count = ctl->wanted;
    ctl->pars_done = TRUE;
    g_snprintf (ctl->count_reason, sizeof (ctl->count_reason),
        "ParS Eq. 19 without loss: the sink's congestion control does not "
        "slow down for loss (bbr) -> %u connections", ctl->wanted);
    GST_INFO ("%s", ctl->count_reason);
    return;
  }
  loss = observed_loss (snap, mss, FALSE, &segments);
  if (!mtcp_pars_loss_known (segments, loss * segments))
    return;
  rtt = path_rtt (ctl, rtt);
  ctl->wanted = mtcp_pars_connections (ctl->target_Bps * 8, rtt, loss, mss,
      MTCP_PARS_PHI_RENO, ctl->fewest, ctl->config.max_connections);
  ctl->pars_count = ctl->wanted;
  ctl->pars_done = TRUE;
  ctl->pars_at_us = snap->now_us;
  g_snprintf (ctl->count_reason, sizeof (ctl->count_reason),
      "ParS Eq. 19: %.0f bit/s, RTT %.0f ms, loss %.4f -> %u connections",
      ctl->target_Bps * 8, rtt * 1e3, loss, ctl->wanted);
  GST_INFO ("%s (from %.0f segments)", ctl->count_reason, segments);
}

/* The first count reads the connections' slow starts as the path's loss
 * and an encoder's start as the stream's rate (docs/control.md): the fixed
 * count, or the share trials' base, is taken once more from what follows.
 * Returns TRUE when the count wanted changed. */
static gboolean
pars_second_look (MtcpControl * ctl, const MtcpControlSnapshot * snap,
    gdouble rtt, guint mss)
{
  gdouble segments, loss, upper, target;
  guint n;

  if (ctl->pars_at_us == 0 || ctl->connections != 0 ||
      (ctl->config.connections != MTCP_CONNECTION_CONTROL_FIXED &&
          ctl->config.connections != MTCP_CONNECTION_CONTROL_SHARE) ||
      snap->now_us - ctl->pars_at_us < MTCP_CONTROL_PARS_SECOND_LOOK_US)
    return FALSE;
  target = target_rate (ctl, snap);
  loss = observed_loss (snap, mss, TRUE, &segments);
  if (target <= 0 || !mtcp_pars_loss_known_well (segments, loss * segments))
    return FALSE;
  ctl->pars_at_us = 0;
  ctl->target_Bps = target;
  rtt = path_rtt (ctl, rtt);
  /* this count stays: too few connections cost the stream, one too many a
   * little loss */
  upper = mtcp_pars_loss_upper (segments, loss * segments);
  n = mtcp_pars_connections (target * 8, rtt, upper, mss, MTCP_PARS_PHI_RENO,
      ctl->fewest, ctl->config.max_connections);
  GST_INFO ("ParS Eq. 19 after the start: %.0f bit/s, RTT %.0f ms, loss "
      "%.4f (%.0f in %.0f segments, at most %.4f) -> %u connections (was %u)",
      target * 8, rtt * 1e3, loss, loss * segments, segments, upper, n,
      ctl->pars_count);
  if (n == ctl->pars_count)
    return FALSE;
  ctl->pars_count = n;
  /* a trial measured against the old count: start over from the new */
  if (ctl->config.connections == MTCP_CONNECTION_CONTROL_SHARE)
    mtcp_share_trial_init (&ctl->share_trial, ctl->config.max_connections);
  ctl->wanted = n;
  g_snprintf (ctl->count_reason, sizeof (ctl->count_reason),
      "ParS Eq. 19 after the start: %.0f bit/s, RTT %.0f ms, loss %.4f "
      "(at most %.4f) -> %u connections", target * 8, rtt * 1e3, loss, upper,
      n);
  return TRUE;
}

/* A REPORT older than this says nothing of the pace now (a connection
 * stuck behind unsent bytes gets none) */
#define PACED_REPORT_FRESH_US (1 * G_USEC_PER_SEC)
/* not paced this long: the paced count starts over when it is again */
#define PACED_GAP_US (5 * G_USEC_PER_SEC)
/* nothing arrived for this long: the path may be dark, and more
 * connections do not fill a buffer there; the count waits */
#define PACED_DARK_US (1 * G_USEC_PER_SEC)

/* The sink paces the stream (a stored one under network-friendly), as
 * every fresh REPORT says, and how it reckons the playout buffer it keeps
 * at the receiver: low on any, held on all. Returns FALSE when no fresh
 * REPORT, or one that does not say PACED. */
static gboolean
paced_buffer (const MtcpControlSnapshot * snap, MtcpPacedBuffer * buffer)
{
  gboolean fresh = FALSE, held = TRUE, low = FALSE;
  guint i;

  for (i = 0; i < snap->n_conns; i++) {
    const MtcpControlConn *c = &snap->conns[i];
    if (!c->reported || snap->now_us - c->report_us > PACED_REPORT_FRESH_US)
      continue;
    if (!c->paced)
      return FALSE;
    fresh = TRUE;
    low = low || c->paced_low;
    held = held && c->paced_held;
  }
  *buffer = low ? MTCP_PACED_BUFFER_LOW : held ? MTCP_PACED_BUFFER_HELD :
      MTCP_PACED_BUFFER_SHORT;
  return fresh;
}

/* connections=0, fixed: a paced stream's count follows the playout buffer
 * the sink keeps at the receiver (mtcppacedcount.h), from the source's
 * starting count (two at least); the loss of paced connections does not
 * size them, so neither ParS's first count (the start's loss) nor its
 * second look is taken. The sink judges the buffer: it
 * counts what is on its way as there, so connections that only hold more
 * in flight do not look short. The count it moves is the one the sink
 * takes (its limit may hold the dials below the count wanted); no more is
 * asked above that limit. It starts over after a gap (the user's count,
 * PACED_GAP_US not paced) and waits while nothing arrives. Returns TRUE
 * when the count wanted changed. */
static gboolean
paced_count_tick (MtcpControl * ctl, const MtcpControlSnapshot * snap)
{
  gint64 now = snap->now_us;
  MtcpPacedBuffer buffer;
  guint n, count;
  gboolean started = FALSE;

  if (ctl->connections != 0) {
    ctl->paced_us = 0;
    return FALSE;
  }
  if (ctl->config.connections != MTCP_CONNECTION_CONTROL_FIXED ||
      !paced_buffer (snap, &buffer))
    return FALSE;
  if (!ctl->paced_started) {
    /* ParS's counts read the connections' slow starts as the path's loss
     * (5-16 where two carry a paced video), or none (bbr: one); a paced
     * stream's loss does not size its count: it starts from the source's
     * first, and from no fewer than the paced count keeps */
    guint first = CLAMP (MTCP_CONTROL_START_CONNECTIONS, ctl->fewest,
        ctl->config.max_connections);
    guint start = CLAMP (ctl->wanted, ctl->paced_count.fewest, first);

    ctl->paced_started = ctl->pars_done = TRUE;
    ctl->pars_at_us = 0;
    g_snprintf (ctl->count_reason, sizeof (ctl->count_reason),
        "paced: %u connections to start (had %u); the playout buffer sizes "
        "them from here", start, ctl->wanted);
    GST_INFO ("%s", ctl->count_reason);
    started = start != ctl->wanted;
    ctl->wanted = ctl->pars_count = start;
  }
  if (ctl->paced_us == 0 || now - ctl->paced_us >= PACED_GAP_US) {
    mtcp_paced_count_restart (&ctl->paced_count);
    ctl->paced_bytes = snap->payload_bytes;
    ctl->paced_heard_us = now;
  }
  ctl->paced_us = now;
  if (snap->payload_bytes != ctl->paced_bytes) {
    ctl->paced_bytes = snap->payload_bytes;
    ctl->paced_heard_us = now;
  }
  if (now - ctl->paced_heard_us >= PACED_DARK_US)
    return started;
  count = snap->dial_cap ? MIN (ctl->wanted, snap->dial_cap) : ctl->wanted;
  n = mtcp_paced_count_update (&ctl->paced_count, now, count, buffer);
  if (n == count || (n > count && snap->dial_cap && count >= snap->dial_cap))
    return started;
  ctl->wanted = n;
  g_strlcpy (ctl->count_reason, ctl->paced_count.reason,
      sizeof (ctl->count_reason));
  GST_INFO ("%s -> %u connections", ctl->count_reason, n);
  return TRUE;
}

/* MULTFRC's IIAD (Eq. 7) averages m RTT samples taken once per round trip
 * (at most as often as the sink reports), not once per sampling interval. */
static void
rtt_control_tick (MtcpControl * ctl, gint64 now, gdouble rtt)
{
  const MtcpControlConfig *c = &ctl->config;

  if (c->connections != MTCP_CONNECTION_CONTROL_RTT ||
      !starting_count_known (ctl))
    return;
  if (!ctl->multfrc_started) {
    MtcpMultfrcParams mp = { c->iiad_alpha, c->iiad_beta, c->iiad_gamma,
      c->iiad_reports, ctl->fewest, c->max_connections
    };
    mtcp_multfrc_init (&ctl->multfrc, &mp, MAX (ctl->wanted, 1));
    ctl->multfrc_started = TRUE;
    ctl->rtt_sample_us = now;
    return;
  }
  if (now - ctl->rtt_sample_us < MAX (rtt, REPORT_INTERVAL_S) * 1e6)
    return;
  ctl->rtt_sample_us = now;
  if (mtcp_multfrc_add_rtt (&ctl->multfrc, rtt)) {
    ctl->wanted = mtcp_multfrc_connections (&ctl->multfrc);
    g_strlcpy (ctl->count_reason, ctl->multfrc.reason,
        sizeof (ctl->count_reason));
    GST_DEBUG ("MULTFRC: %s; %u connections wanted", ctl->count_reason,
        ctl->wanted);
  }
}

/* Every sampling interval: measure, then VariedConnVariedWinSize (Alg. 3):
 * the connection count here, the windows of the ones there are after it is
 * applied (mtcp_control_windows). */
gboolean
mtcp_control_tick (MtcpControl * ctl, const MtcpControlSnapshot * snap)
{
  const MtcpControlConfig *c = &ctl->config;
  gint64 now = snap->now_us;
  guint mss, ready = 0, i;
  gdouble rtt = mtcp_control_mean_rtt (snap, &mss), interval, elapsed, sample;

  ctl->windows_due = FALSE;
  if (rtt <= 0)
    return FALSE;               /* no REPORT yet */
  ctl->mss = mss;
  rtt_control_tick (ctl, now, rtt);
  /* before ParS's first count: a paced stream does not take it */
  if (paced_count_tick (ctl, snap))
    return TRUE;
  if (!starting_count_known (ctl) && target_rate (ctl, snap) > 0) {
    /* ParS's count as soon as there is loss to go on, not at the end of a
     * sampling interval (6 RTTs): a live stream is backing up meanwhile */
    ctl->target_Bps = target_rate (ctl, snap);
    pars_starting_count (ctl, snap, rtt, mss);
    if (starting_count_known (ctl)) {
      /* the controllers measure the new count from a fresh interval */
      ctl->interval_start_us = 0;
      return TRUE;
    }
  }
  if (pars_second_look (ctl, snap, rtt, mss)) {
    ctl->interval_start_us = 0;
    return TRUE;
  }
  interval = c->sampling_interval_ms ? c->sampling_interval_ms / 1000.0 :
      MAX (6 * rtt, 0.1);
  if (ctl->interval_start_us == 0) {
    ctl->interval_start_us = now;
    ctl->interval_bytes_mark = snap->payload_bytes;
    ctl->interval_backlog = 0;
    return FALSE;
  }
  elapsed = (now - ctl->interval_start_us) / 1e6;
  if (elapsed < interval)
    return FALSE;
  /* T_m in the stream's own bytes, as the sink measures its rate: frame
   * heads and copies a stuck frame was sent again in are not throughput */
  sample = (snap->payload_bytes - ctl->interval_bytes_mark) / elapsed;
  ctl->interval_start_us = now;
  ctl->interval_bytes_mark = snap->payload_bytes;
  ctl->target_Bps = target_rate (ctl, snap);
  /* more than 50 ms of stream waiting at the sender: the path is the limit */
  ctl->network_limited = ctl->interval_backlog > ctl->target_Bps * 0.05;
  ctl->interval_backlog = 0;
  if (ctl->target_Bps <= 0)
    return FALSE;               /* the sink has not measured the stream yet */
  if (!ctl->join_interval_done) {
    /* what the sink had queued for the new session left at once: a burst
     * that, smoothed in as the rate, keeps the windows at their least for
     * seconds while the path is short */
    ctl->join_interval_done = TRUE;
    GST_DEBUG ("first interval (%.0f B/s) is the join burst: not a sample",
        sample);
    return FALSE;
  }
  for (i = 0; i < snap->n_conns; i++)
    ready += snap->conns[i].ready;

  if (!ctl->control_started) {
    MtcpAdjustWindowParams wp = { c->smoothing, c->guard, c->spike_factor,
      mss
    };
    MtcpAdjustConnParams cp = { c->conn_beta, c->congestion_factor };
    mtcp_adjust_window_init (&ctl->window, &wp, MAX (ready, 1),
        ctl->target_Bps, rtt);
    mtcp_adjust_conn_init (&ctl->conn_control, &cp);
    ctl->control_started = TRUE;
  }
  mtcp_adjust_window_set_target (&ctl->window, ctl->target_Bps);

  if (c->connections == MTCP_CONNECTION_CONTROL_CONGESTION &&
      starting_count_known (ctl)) {
    /* Alg. 2 starts from ParS's count (or the property's) */
    gint d = mtcp_adjust_conn_update (&ctl->conn_control,
        mtcp_adjust_window_congestion_ratio (&ctl->window, rtt),
        ctl->window.measured < 0 ? sample : ctl->window.measured,
        ctl->target_Bps, ctl->network_limited);
    ctl->wanted = CLAMP ((gint) snap->active + d, (gint) ctl->fewest,
        (gint) c->max_connections);
    g_strlcpy (ctl->count_reason, ctl->conn_control.reason,
        sizeof (ctl->count_reason));
  }
  if (c->connections == MTCP_CONNECTION_CONTROL_SHARE &&
      starting_count_known (ctl)) {
    /* the property's count or ParS's, and one more on trial while others'
     * flows hold the stream back (mtcpsharetrial.h) */
    guint n = mtcp_share_trial_update (&ctl->share_trial, now,
        ctl->connections ? ctl->connections : ctl->pars_count, ready,
        sample, elapsed, stream_rate (snap), ctl->network_limited);
    if (n != ctl->wanted || (ctl->share_trial.reason[0] &&
            strcmp (ctl->share_trial.reason, ctl->count_reason) != 0)) {
      ctl->wanted = n;
      g_strlcpy (ctl->count_reason, ctl->share_trial.reason,
          sizeof (ctl->count_reason));
      GST_INFO ("%s -> %u connections", ctl->count_reason, n);
    }
  }
  /* fixed: the property, or ParS's count above; RTT: rtt_control_tick */

  if (c->window == MTCP_WINDOW_CONTROL_NONE) {
    /* keep T_m measured for the stats and the connection controllers */
    ctl->window.measured = ctl->window.measured < 0 ? sample :
        c->smoothing * ctl->window.measured + (1 - c->smoothing) * sample;
  }
  ctl->windows_due = TRUE;
  ctl->sample_Bps = sample;
  ctl->rtt_s = rtt;
  GST_DEBUG ("T_m %.0f B/s (sample %.0f), T_d %.0f B/s, RTT %.1f ms, %s, "
      "%u connections wanted: %s", ctl->window.measured, sample,
      ctl->target_Bps, rtt * 1e3, ctl->network_limited ? "network-limited" :
      "sender-limited", ctl->wanted, ctl->count_reason);
  return TRUE;
}

const guint *
mtcp_control_windows (MtcpControl * ctl, guint ready, guint * n_windows)
{
  guint i;

  *n_windows = 0;
  if (!ctl->windows_due || ctl->config.window != MTCP_WINDOW_CONTROL_ADJUST ||
      ready == 0)
    return NULL;
  ctl->windows_due = FALSE;
  ready = MIN (ready, MTCP_WINDOW_MAX_CONNECTIONS);
  if (ctl->window.n != ready)
    mtcp_adjust_window_set_connections (&ctl->window, ready);
  mtcp_adjust_window_update (&ctl->window, ctl->sample_Bps, ctl->rtt_s,
      ctl->network_limited);
  for (i = 0; i < ctl->window.n; i++)
    ctl->windows_bytes[i] = ctl->window.windows[i] * ctl->mss;
  *n_windows = ctl->window.n;
  GST_DEBUG ("windows: %s", ctl->window.reason);
  return ctl->windows_bytes;
}

guint
mtcp_control_split (guint total, guint n_paths, const gdouble * rate_Bps,
    guint * out)
{
  gdouble sum = 0, frac[64];
  guint i, rest, given = 0;

  g_return_val_if_fail (n_paths <= G_N_ELEMENTS (frac), 0);
  if (n_paths == 0)
    return 0;
  for (i = 0; i < n_paths; i++) {
    out[i] = 1;
    sum += MAX (rate_Bps ? rate_Bps[i] : 0, 0);
  }
  rest = total > n_paths ? total - n_paths : 0;
  for (i = 0; i < n_paths; i++) {
    gdouble ideal = sum > 0 ? rest * MAX (rate_Bps[i], 0) / sum :
        (gdouble) rest / n_paths;
    out[i] += (guint) ideal;
    given += (guint) ideal;
    frac[i] = ideal - (guint) ideal;
  }
  /* what floor left: the largest remainders first, then the first paths */
  while (given < rest) {
    guint best = 0;
    for (i = 1; i < n_paths; i++)
      if (frac[i] > frac[best])
        best = i;
    out[best]++;
    frac[best] = -1;
    given++;
  }
  return n_paths + rest;
}

guint
mtcp_control_wanted (const MtcpControl * ctl)
{
  return ctl->wanted;
}

const gchar *
mtcp_control_count_reason (const MtcpControl * ctl)
{
  return ctl->count_reason;
}

const gchar *
mtcp_control_window_reason (const MtcpControl * ctl)
{
  return ctl->window.reason;
}

guint64
mtcp_control_target_bitrate (const MtcpControl * ctl)
{
  return (guint64) (ctl->target_Bps * 8);
}

guint64
mtcp_control_measured_bitrate (const MtcpControl * ctl)
{
  return ctl->control_started && ctl->window.measured > 0 ?
      (guint64) (ctl->window.measured * 8) : 0;
}

guint
mtcp_control_window_sum (const MtcpControl * ctl)
{
  return ctl->control_started ? mtcp_adjust_window_sum (&ctl->window) : 0;
}

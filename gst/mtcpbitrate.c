/* multitcp
 * Copyright (C) 2026 the multitcp authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "mtcpbitrate.h"

#include <gst/gst.h>

GST_DEBUG_CATEGORY_STATIC (mtcp_bitrate_debug);
#define GST_CAT_DEFAULT mtcp_bitrate_debug

/* a fall of the fair share below the bitrate smaller than this is noise */
#define DOWN_TOLERANCE 0.95
/* and a rise above it smaller than this is no reason to jump */
#define UP_MARGIN 1.1
/* a step down this soon after a step up: that step up failed */
#define FAILED_WITHIN_US (3 * G_USEC_PER_SEC)
/* the hold doubles after each failed step up, to at most 2^this holds */
#define MOST_BACKOFF 2
/* with room to overshoot, a step refused with the path's estimate within
 * this share of the last refused one's is a refusal at the same level:
 * the path stays where it was (0.25 delivered 5% less on the cellular
 * cells of tests/bench/bitrate_sim.py's model, with as few changes on a
 * steady path) */
#define SAME_LEVEL 0.15
/* cuts this close together are one fall of the path (an outage often
 * begins with a few 200 ms apart) */
#define CUTS_RUN_US (G_USEC_PER_SEC)
/* after an outage padding finds the room for at most this long once the
 * path is back: by then TCP's windows have measured the path again, and a
 * path that came back slower for good is not probed with padding forever
 * (padding throughout delivered 11-19% less, stop 37) */
#define AFTER_DARK_US (10 * G_USEC_PER_SEC)

struct _MtcpBitrateControl {
  MtcpBitrateBounds bounds;
  guint64 bps;
  gint64 changed_us;            /* last change, either way */
  gint64 raised_us;             /* last step up */
  guint backoff;                /* step ups that failed in a row */
  guint64 changes;
  gboolean padding_probes;
  gboolean padding_after_dark;  /* padding probes only after an outage */
  guint64 before_dark_bps;      /* the bitrate an outage cut, 0: none */
  gint64 lit_us;                /* the path back after that outage */
  guint64 cuts_from_bps;        /* the bitrate before the last run of cuts */
  gint64 cuts_us;               /* that run's first cut */
  gint64 probe_end_us;          /* a padding probe has until then, 0: none */
  guint64 probe_bps;            /* a probe to start, 0: none */
  guint64 probe_target;         /* the bitrate the probe is for */
  gdouble probe_seen;           /* the most its estimates showed (share) */
  gboolean probe_cancel;        /* the probe running should stop */
  gboolean probe_again;         /* the last change was a probe's full success */
  guint64 estimate_bps;         /* the estimate of the update under way */
  guint64 refused_at_bps;       /* the estimate at the last refused step */
  gboolean raise_judged;        /* a cut since the last step up judged it */
  gint64 budget_us;             /* the followed receiver's latency */
};

MtcpBitrateControl *
mtcp_bitrate_control_new (const MtcpBitrateBounds * bounds, guint64 start_bps)
{
  MtcpBitrateControl *c = g_new0 (MtcpBitrateControl, 1);
  static gsize done = 0;

  if (g_once_init_enter (&done)) {
    GST_DEBUG_CATEGORY_INIT (mtcp_bitrate_debug, "multitcpbitrate", 0,
        "multitcp encoder bitrate control");
    g_once_init_leave (&done, 1);
  }
  c->bounds = *bounds;
  if (c->bounds.max_bps < c->bounds.min_bps)
    c->bounds.max_bps = c->bounds.min_bps;
  c->bps = CLAMP (start_bps, c->bounds.min_bps, c->bounds.max_bps);
  return c;
}

void
mtcp_bitrate_control_free (MtcpBitrateControl * c)
{
  g_free (c);
}

/* The receiver's latency leaves room for a step up that overshoots: quick
 * steps, and refusals judged by their level. Below it the steps are
 * careful throughout and every refusal counts (at 1 s, judging them by
 * level alone made 99 frames late outside long outages against 1 on the
 * cellular cells, careful steps and all, stop 62). */
gboolean
mtcp_bitrate_control_quick_budget (gint64 latency_us)
{
  return latency_us >= MTCP_BITRATE_QUICK_BUDGET_US;
}

static gboolean
room_to_overshoot (const MtcpBitrateControl * c)
{
  return mtcp_bitrate_control_quick_budget (c->budget_us);
}

/* Quick steps: room to overshoot, and no step refused at one level
 * lately. */
static gboolean
quick (const MtcpBitrateControl * c)
{
  return room_to_overshoot (c) && c->backoff == 0;
}

/* How long after a change the next step up waits. */
static gint64
hold_us (const MtcpBitrateControl * c)
{
  return quick (c) ? MTCP_BITRATE_QUICK_HOLD_US :
      MTCP_BITRATE_HOLD_US << c->backoff;
}

static gboolean
set (MtcpBitrateControl * c, gint64 now_us, guint64 want, const gchar * why,
    guint64 * bps)
{
  want = CLAMP (want, c->bounds.min_bps, c->bounds.max_bps);
  if (want == c->bps)
    return FALSE;
  if (want < c->bps) {
    if (c->cuts_us == 0 || now_us - c->cuts_us > CUTS_RUN_US) {
      c->cuts_from_bps = c->bps;
      c->cuts_us = now_us;
    }
    /* a cut within 3 s of a step up refused it. Without room to
     * overshoot every such cut counts, so a fall in two cuts holds 4 s
     * (tried: only the first judging it; later dips came sooner, as late,
     * no more delivered: docs/experiments/bitrate.md). With room, the
     * next cuts of that fall (a tick apart) are the same refusal, where
     * it ends is the level refused, and it counts against the backoff
     * only at the level the path refused before: a path that refuses
     * elsewhere moves, and quick steps find where */
    if (c->raised_us && now_us - c->raised_us < FAILED_WITHIN_US) {
      if (!room_to_overshoot (c)) {
        c->backoff = MIN (c->backoff + 1, MOST_BACKOFF);
      } else if (!c->raise_judged) {
        gboolean same = c->refused_at_bps > 0 &&
            ABS ((gdouble) c->estimate_bps - (gdouble) c->refused_at_bps) <
            SAME_LEVEL * c->refused_at_bps;
        c->backoff = same ? MIN (c->backoff + 1, MOST_BACKOFF) : 0;
      }
      c->raise_judged = TRUE;
      c->refused_at_bps = c->estimate_bps;
    } else {
      c->backoff = 0;
    }
  } else {
    c->raised_us = now_us;
    c->raise_judged = FALSE;
  }
  GST_DEBUG ("bitrate %" G_GUINT64_FORMAT " -> %" G_GUINT64_FORMAT
      " bit/s: %s (next step up after %.1f s)", c->bps, want, why,
      hold_us (c) / 1e6);
  c->bps = want;
  c->changed_us = now_us;
  c->probe_end_us = 0;
  c->probe_again = FALSE;
  c->changes++;
  *bps = want;
  return TRUE;
}

/* What is left of a padding probe stops, and no probe chains the next:
 * padding no longer finds the room. */
static void
stop_probe (MtcpBitrateControl * c)
{
  if (c->probe_end_us)
    c->probe_cancel = TRUE;
  c->probe_end_us = 0;
  c->probe_again = FALSE;
}

static gboolean update_lit (MtcpBitrateControl * c, gint64 now_us,
    gdouble fair, gdouble seen, gboolean padding, gboolean path_limited,
    guint64 estimate_bps, guint64 delivered_bps, gint64 waited_us,
    guint64 * bps);

gboolean
mtcp_bitrate_control_update (MtcpBitrateControl * c, gint64 now_us,
    guint64 estimate_bps, gboolean path_limited, guint64 delivered_bps,
    gint64 waited_us, guint64 * bps)
{
  gdouble fair = estimate_bps * MTCP_BITRATE_SHARE;
  gboolean padding = c->padding_probes || c->before_dark_bps > 0;
  /* what shows room: with probes, only what the path was seen to carry */
  gdouble seen = padding && !path_limited ?
      MIN (estimate_bps, delivered_bps) * MTCP_BITRATE_SHARE : fair;
  gboolean changed;

  c->estimate_bps = estimate_bps;
  if (estimate_bps == 0) {
    /* the path went: no step up failed, and it comes back with quick
     * steps */
    c->raised_us = 0;
    c->backoff = 0;
    c->refused_at_bps = 0;
    c->probe_end_us = 0;
    /* the windows remember the path before: trusted again only once the
     * encoder is back where the outage found it, or AFTER_DARK_US on */
    if (c->padding_after_dark && c->before_dark_bps == 0) {
      guint64 before = c->cuts_us && now_us - c->cuts_us <= 2 * CUTS_RUN_US ?
          MAX (c->bps, c->cuts_from_bps) : c->bps;
      if (before > c->bounds.min_bps)
        c->before_dark_bps = before;
    }
    c->lit_us = 0;
    return set (c, now_us, c->bounds.min_bps, "the path is dark", bps);
  }
  if (c->before_dark_bps && c->lit_us == 0)
    c->lit_us = now_us;
  changed = update_lit (c, now_us, fair, seen, padding, path_limited,
      estimate_bps, delivered_bps, waited_us, bps);
  if (c->before_dark_bps &&
      (c->bps >= MIN (c->before_dark_bps, c->bounds.max_bps) ||
          now_us - c->lit_us >= AFTER_DARK_US)) {
    GST_DEBUG ("at %" G_GUINT64_FORMAT " bit/s (%" G_GUINT64_FORMAT
        " before the outage), %.1f s after it: the windows are trusted "
        "again", c->bps, c->before_dark_bps,
        (now_us - c->lit_us) / 1e6);
    c->before_dark_bps = 0;
    /* from here the windows' guess raises it, after a hold */
    if (!c->padding_probes)
      stop_probe (c);
  }
  return changed;
}

/* mtcp_bitrate_control_update with a path that is not dark: @fair is the
 * estimate's share, @seen the share that shows room, @padding whether
 * room is found with padding probes. */
static gboolean
update_lit (MtcpBitrateControl * c, gint64 now_us, gdouble fair,
    gdouble seen, gboolean padding, gboolean path_limited,
    guint64 estimate_bps, guint64 delivered_bps, gint64 waited_us,
    guint64 * bps)
{
  /* down to the share, or lower while a backlog needs more room to drain
   * within MTCP_BITRATE_DRAIN_US than the share leaves */
  gdouble cut = MIN (fair, estimate_bps * MAX (0.0,
          1.0 - (gdouble) waited_us / MTCP_BITRATE_DRAIN_US));

  /* the last change was a step up that the path took: one hold again;
   * with room to overshoot only above the level it refused (the path
   * moved: quick steps again; at that level it only says the stream
   * fits, and a quick step from there overshot a steady path by three
   * quarters every twelve seconds) */
  if (c->backoff > 0 && c->raised_us && c->changed_us == c->raised_us &&
      now_us - c->raised_us >= FAILED_WITHIN_US && (!room_to_overshoot (c)
          || c->bps > c->refused_at_bps * (1 + SAME_LEVEL)))
    c->backoff = 0;
  /* a cut also when the path still delivers the whole stream but its
   * queue grows: the fifth left drains it (tried: cutting only once it
   * delivers less than the stream made 16% more frames late, docs/
   * benchmarks.md) */
  if (path_limited && cut < c->bps * DOWN_TOLERANCE) {
    gboolean probing = c->probe_end_us != 0;
    guint backoff = c->backoff;
    gboolean changed = set (c, now_us, (guint64) cut,
        cut < fair ? "the path carries less, a backlog to drain" :
        "the path carries less", bps);
    /* the probe's padding may be what filled the path: it failed, and
     * what is left of it stops */
    if (probing) {
      c->backoff = MIN (backoff + 1, MOST_BACKOFF);
      c->probe_end_us = 0;
      c->probe_bps = 0;
      c->probe_cancel = TRUE;
    }
    return changed;
  }
  /* a probe that showed all it asked for is followed by the next without
   * a hold: the raise it made was seen to fit already */
  if (now_us - c->changed_us < hold_us (c) && !c->probe_again)
    return FALSE;
  /* a padding probe: the most it showed, taken when it showed all it was
   * for or its time is up (a span that measured part of its padding is
   * not the path's limit) */
  if (c->probe_end_us) {
    /* a target within the margin (near max-bitrate) is room enough */
    gdouble enough = MIN (c->bps * UP_MARGIN, (gdouble) c->probe_target);

    c->probe_seen = MAX (c->probe_seen, seen);
    if (c->probe_seen < c->probe_target && now_us < c->probe_end_us)
      return FALSE;
    c->probe_end_us = 0;
    if (c->probe_seen >= enough) {
      gboolean changed = set (c, now_us, (guint64) MIN (c->probe_seen,
              c->bps * 2.0), "the probe showed room", bps);
      c->probe_again = c->probe_seen >= c->probe_target;
      /* what is left of its padding would go above what it showed */
      c->probe_cancel = TRUE;
      return changed;
    }
    /* the padding found no room: a step up the path refused */
    GST_DEBUG ("the probe showed no room (estimate %" G_GUINT64_FORMAT
        " bit/s, delivered %" G_GUINT64_FORMAT " bit/s)", estimate_bps,
        delivered_bps);
    c->backoff = MIN (c->backoff + 1, MOST_BACKOFF);
    c->changed_us = now_us;
    return FALSE;
  }
  /* the estimate shows room: towards its share, at most a doubling */
  if (seen >= c->bps * UP_MARGIN)
    return set (c, now_us, (guint64) MIN (seen, c->bps * 2.0),
        "the estimate shows room", bps);
  /* a stream that fills less than the path shows no room: probe for it */
  if (!path_limited && padding) {
    guint64 target = MIN (c->bounds.max_bps, c->bps * 2);
    if (target <= c->bps)
      return FALSE;             /* at the most already */
    c->probe_bps = (guint64) (target / MTCP_BITRATE_SHARE);
    c->probe_end_us = now_us + MTCP_BITRATE_PROBE_WAIT_US;
    c->probe_again = FALSE;
    c->probe_target = target;
    c->probe_seen = 0;
    GST_DEBUG ("nothing waits: probing for %" G_GUINT64_FORMAT " bit/s "
        "with padding", c->probe_bps);
    return FALSE;
  }
  if (!path_limited)
    return set (c, now_us, (guint64) (c->bps * (1 + (quick (c) ?
                    MTCP_BITRATE_QUICK_PROBE : MTCP_BITRATE_PROBE))),
        quick (c) ? "nothing waits: probing quickly" :
        "nothing waits: probing", bps);
  return FALSE;
}

void
mtcp_bitrate_control_set_padding_probes (MtcpBitrateControl * c,
    gboolean padding)
{
  if (c->padding_probes && !padding && c->before_dark_bps == 0)
    stop_probe (c);
  c->padding_probes = padding;
}

void
mtcp_bitrate_control_set_budget (MtcpBitrateControl * c, gint64 latency_us)
{
  /* another receiver followed, with other rules: no refusal carries over */
  if (mtcp_bitrate_control_quick_budget (latency_us) !=
      mtcp_bitrate_control_quick_budget (c->budget_us)) {
    c->backoff = 0;
    c->refused_at_bps = 0;
  }
  c->budget_us = latency_us;
}

void
mtcp_bitrate_control_set_padding_after_outage (MtcpBitrateControl * c,
    gboolean after_outage)
{
  c->padding_after_dark = after_outage;
  if (!after_outage && c->before_dark_bps) {
    c->before_dark_bps = 0;
    if (!c->padding_probes)
      stop_probe (c);
  }
}

gboolean
mtcp_bitrate_control_take_probe (MtcpBitrateControl * c, guint64 * total_bps)
{
  if (c->probe_bps == 0 && !c->probe_cancel)
    return FALSE;
  *total_bps = c->probe_bps;
  c->probe_bps = 0;
  c->probe_cancel = FALSE;
  return TRUE;
}

guint64
mtcp_bitrate_control_bps (const MtcpBitrateControl * c)
{
  return c->bps;
}

guint64
mtcp_bitrate_control_changes (const MtcpBitrateControl * c)
{
  return c->changes;
}

/* multitcp
 * Copyright (C) 2026 the multitcp authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "mtcpsharetrial.h"

#include <string.h>

/* the wait after a trial that brought nothing, doubled each time */
#define BACKOFF_FIRST_US (10 * G_USEC_PER_SEC)
#define BACKOFF_MAX_US (120 * G_USEC_PER_SEC)
#define RETIRE_MAX_US (480 * G_USEC_PER_SEC)
/* a connection kept this soon after one was given back: the competition
 * had not gone */
#define RETIRE_REGRET_US (15 * G_USEC_PER_SEC)
/* what arrives is the stream at this share of its rate */
#define SERVED_SHARE 0.95
/* a rise over n + 1 flows' share over n's by this much: not the count's */
#define PATH_CHANGED 1.1
/* less than this share of the stream arrives: the path is dark */
#define DARK_SHARE 0.1
/* a connection not up within this: it could not be made */
#define OPEN_TIMEOUT_US (5 * G_USEC_PER_SEC)

void
mtcp_share_trial_init (MtcpShareTrial * t, guint n_max)
{
  memset (t, 0, sizeof (*t));
  t->n_max = n_max;
  t->backoff_us = BACKOFF_FIRST_US;
  t->retire_wait_us = MTCP_SHARE_TRIAL_RETIRE_US;
}

static void
watch_again (MtcpShareTrial * t)
{
  t->state = MTCP_SHARE_TRIAL_WATCH;
  t->held_since_us = 0;
  t->held_bytes = t->held_s = 0;
  t->served_since_us = 0;
}

static guint
wanted (const MtcpShareTrial * t, guint base)
{
  return MIN (base + t->extra, MAX (t->n_max, base));
}

/* The trial's measurement is over: keep the connection or give it back. */
static void
decide (MtcpShareTrial * t, gint64 now, guint base, gdouble stream_Bps)
{
  guint n_b = t->n_before + 1;
  gdouble x_a = t->rate_before, x_b = t->trial_bytes / t->trial_s;

  /* a rise that brought the stream up to its rate counts, smaller too */
  gboolean gained = x_b > x_a * (1 + MTCP_SHARE_TRIAL_GAIN) ||
      (x_b >= SERVED_SHARE * stream_Bps &&
      x_b > x_a * (1 + MTCP_SHARE_TRIAL_GAIN / 3));

  if (gained && x_b > x_a * n_b / t->n_before * PATH_CHANGED) {
    /* more than n + 1 flows' share over n's: the path's capacity rose
     * meanwhile (a cellular uplink's swings), the count did not do it */
    t->extra = t->n_before > base ? t->n_before - base : 0;
    t->next_trial_us = now + t->backoff_us;
    g_snprintf (t->reason, sizeof (t->reason), "%u connections carried "
        "%.0f kbit/s, %u %.0f: more than the count explains, the path "
        "changed; next trial in %" G_GINT64_FORMAT " s", n_b, x_b * 8e-3,
        t->n_before, x_a * 8e-3, t->backoff_us / G_USEC_PER_SEC);
    watch_again (t);
    return;
  }
  if (!gained) {
    t->extra = t->n_before > base ? t->n_before - base : 0;
    t->next_trial_us = now + t->backoff_us;
    g_snprintf (t->reason, sizeof (t->reason), "%u connections carried "
        "%.0f kbit/s, %u %.0f: the path is full, not shared; next trial in "
        "%" G_GINT64_FORMAT " s", n_b, x_b * 8e-3, t->n_before, x_a * 8e-3,
        t->backoff_us / G_USEC_PER_SEC);
    t->backoff_us = MIN (2 * t->backoff_us, BACKOFF_MAX_US);
    watch_again (t);
    return;
  }
  t->backoff_us = BACKOFF_FIRST_US;
  if (t->retired_us && now - t->retired_us < RETIRE_REGRET_US)
    t->retire_wait_us = MIN (2 * t->retire_wait_us, RETIRE_MAX_US);
  if (!t->trial_held) {
    g_snprintf (t->reason, sizeof (t->reason), "%u connections carried "
        "%.0f kbit/s, %u %.0f: the stream is served", n_b, x_b * 8e-3,
        t->n_before, x_a * 8e-3);
  } else {
    /* one at a time, each proving itself: a count fitted from two
     * measurements (ParS's Eq. 3) jumped to 11 on a cellular uplink whose
     * capacity moved between them */
    t->next_trial_us = now;
    g_snprintf (t->reason, sizeof (t->reason), "%u connections carried "
        "%.0f kbit/s, %u %.0f: kept, the stream still held back", n_b,
        x_b * 8e-3, t->n_before, x_a * 8e-3);
  }
  t->extra = n_b > base ? n_b - base : 0;
  watch_again (t);
}

guint
mtcp_share_trial_update (MtcpShareTrial * t, gint64 now, guint base,
    guint ready, gdouble rate_Bps, gdouble interval_s, gdouble stream_Bps,
    gboolean held)
{
  gboolean short_of = held && rate_Bps < SERVED_SHARE * stream_Bps;

  if (stream_Bps <= 0 || interval_s <= 0)
    return wanted (t, base);

  /* the rate before a trial is measured on a settled count: frames of
   * connections that just closed are sent again and take the place of
   * the stream (a full path looked 20% fuller with one more) */
  if (ready != t->ready_seen || t->ready_changed_us == 0) {
    t->ready_changed_us = now;
    t->ready_seen = ready;
  }

  switch (t->state) {
    case MTCP_SHARE_TRIAL_WATCH:
      if (held)
        t->served_since_us = 0;
      else if (t->served_since_us == 0)
        t->served_since_us = now;
      if (t->extra > 0 && t->served_since_us &&
          now - t->served_since_us >= t->retire_wait_us) {
        t->extra--;
        t->retired_us = now;
        t->served_since_us = now;
        g_snprintf (t->reason, sizeof (t->reason), "the stream served for "
            "%" G_GINT64_FORMAT " s: one added connection given back",
            t->retire_wait_us / G_USEC_PER_SEC);
        break;
      }
      if (!short_of || now - (gint64) (interval_s * G_USEC_PER_SEC) -
          t->ready_changed_us < MTCP_SHARE_TRIAL_SETTLE_US) {
        t->held_since_us = 0;
        t->held_bytes = t->held_s = 0;
        break;
      }
      if (t->held_since_us == 0)
        t->held_since_us = now - (gint64) (interval_s * G_USEC_PER_SEC);
      t->held_bytes += rate_Bps * interval_s;
      t->held_s += interval_s;
      /* a path that carries next to nothing is dark (an outage), not
       * shared: a connection more would find it as dark */
      if (now - t->held_since_us < MTCP_SHARE_TRIAL_LIMITED_US ||
          now < t->next_trial_us || wanted (t, base) >= t->n_max ||
          ready < wanted (t, base) ||
          t->held_bytes < DARK_SHARE * stream_Bps * t->held_s)
        break;
      t->n_before = wanted (t, base);
      t->ready_before = ready;
      t->rate_before = t->held_bytes / t->held_s;
      t->extra = t->n_before + 1 - base;
      t->state = MTCP_SHARE_TRIAL_OPENING;
      t->phase_us = now;
      g_snprintf (t->reason, sizeof (t->reason), "%u connections carry "
          "%.0f of the stream's %.0f kbit/s, held back for %.1f s: one more "
          "on trial", t->n_before, t->rate_before * 8e-3, stream_Bps * 8e-3,
          t->held_s);
      break;
    case MTCP_SHARE_TRIAL_OPENING:
      /* more up than before (a path's or a probe's connection may have
       * been up beyond the count already) */
      if (ready > t->ready_before) {
        t->state = MTCP_SHARE_TRIAL_MEASURING;
        t->phase_us = now;
        t->trial_bytes = t->trial_s = 0;
        t->trial_held = FALSE;
      } else if (now - t->phase_us > OPEN_TIMEOUT_US) {
        t->extra = t->n_before > base ? t->n_before - base : 0;
        t->next_trial_us = now + t->backoff_us;
        t->backoff_us = MIN (2 * t->backoff_us, BACKOFF_MAX_US);
        g_snprintf (t->reason, sizeof (t->reason), "connection %u did not "
            "open: no trial", t->n_before + 1);
        watch_again (t);
      }
      break;
    case MTCP_SHARE_TRIAL_MEASURING:
      /* intervals that began after the settling only (6 RTT may be
       * longer than it) */
      if (now - (gint64) (interval_s * G_USEC_PER_SEC) - t->phase_us <
          MTCP_SHARE_TRIAL_SETTLE_US)
        break;
      t->trial_bytes += rate_Bps * interval_s;
      t->trial_s += interval_s;
      t->trial_held |= held;
      if (now - t->phase_us >= MTCP_SHARE_TRIAL_SETTLE_US +
          MTCP_SHARE_TRIAL_MEASURE_US)
        decide (t, now, base, stream_Bps);
      break;
  }
  return wanted (t, base);
}

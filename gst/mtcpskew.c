/* multitcp
 * Copyright (C) 2026 the multitcp authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "mtcpskew.h"

#include <math.h>
#include <string.h>

GST_DEBUG_CATEGORY_STATIC (mtcp_skew_debug);
#define GST_CAT_DEFAULT mtcp_skew_debug

/* windows before the first line is fitted */
#define MIN_POINTS 5
/* the correction closes its distance to the fitted line with this time
 * constant (sender time, ns) ... */
#define PULL_TIME (20.0 * GST_SECOND)
/* ... at no more than this rate on top of the slope */
#define MAX_PULL 2e-3

/* One window's minimum, relative to the first sample. */
typedef struct {
  gdouble sender;               /* ns since the first sender time */
  gdouble delay;                /* ns, arrival - sender, less the first one */
} SkewPoint;

struct _MtcpSkew {
  GstClockTime window;
  guint n_windows;

  gboolean started;
  GstClockTime sender_origin;
  gint64 delay_origin;
  GstClockTime last_sender;     /* the latest sender time seen */

  /* the window being filled */
  GstClockTime window_end;      /* arrival time */
  gboolean have_min;
  gint64 min_delay;
  GstClockTime min_sender;

  SkewPoint *points;            /* ring of the last n_windows minima */
  guint n_points;
  guint first_point;

  gboolean have_floor;
  gdouble floor_ref;            /* the line's value that means "no correction" */
  gboolean rebase;              /* after a start-over: floor_ref from the next fit */

  /* correction (x) = anchor_corr + rate * (x - anchor_x) */
  gdouble anchor_x;
  gdouble anchor_corr;
  gdouble rate;
  gdouble slope;                /* of delay over sender time, last fit */
  gboolean valid;
};

MtcpSkew *
mtcp_skew_new (GstClockTime window, guint n_windows)
{
  MtcpSkew *skew = g_new0 (MtcpSkew, 1);
  static gsize done = 0;

  if (g_once_init_enter (&done)) {
    GST_DEBUG_CATEGORY_INIT (mtcp_skew_debug, "multitcpskew", 0,
        "multitcp clock skew estimate");
    g_once_init_leave (&done, 1);
  }
  skew->window = MAX (window, GST_MSECOND);
  skew->n_windows = MAX (n_windows, MIN_POINTS);
  skew->points = g_new0 (SkewPoint, skew->n_windows);
  return skew;
}

void
mtcp_skew_free (MtcpSkew * skew)
{
  if (skew == NULL)
    return;
  g_free (skew->points);
  g_free (skew);
}

void
mtcp_skew_reset (MtcpSkew * skew)
{
  SkewPoint *points = skew->points;
  GstClockTime window = skew->window;
  guint n_windows = skew->n_windows;

  memset (skew, 0, sizeof (*skew));
  skew->points = points;
  skew->window = window;
  skew->n_windows = n_windows;
}

/* a - b for any two times, as exactly as a double holds it. No lock. */
static gdouble
time_diff (GstClockTime a, GstClockTime b)
{
  return a >= b ? (gdouble) (a - b) : -(gdouble) (b - a);
}

/* a - b saturated to a gint64: the sender's times are whatever it sends.
 * No lock. */
static gint64
sub_sat (gint64 a, gint64 b)
{
  gint64 d;

  if (__builtin_sub_overflow (a, b, &d))
    return b < 0 ? G_MAXINT64 : G_MININT64;
  return d;
}

/* arrival - sender_time as a signed delay, saturated. No lock. */
static gint64
delay_of (GstClockTime arrival, GstClockTime sender_time)
{
  guint64 d;

  if (arrival >= sender_time) {
    d = arrival - sender_time;
    return d > G_MAXINT64 ? G_MAXINT64 : (gint64) d;
  }
  d = sender_time - arrival;
  return d > G_MAXINT64 ? G_MININT64 : -(gint64) d;
}

static gdouble
correction_at (MtcpSkew * skew, gdouble x)
{
  return skew->anchor_corr + skew->rate * (x - skew->anchor_x);
}

/* Least squares through the ring; centred sums keep the precision. */
static void
fit_line (MtcpSkew * skew, gdouble * slope, gdouble * intercept)
{
  gdouble mean_x = 0, mean_y = 0, sxx = 0, sxy = 0;
  guint i;

  for (i = 0; i < skew->n_points; i++) {
    SkewPoint *p = &skew->points[(skew->first_point + i) % skew->n_windows];
    mean_x += p->sender;
    mean_y += p->delay;
  }
  mean_x /= skew->n_points;
  mean_y /= skew->n_points;
  for (i = 0; i < skew->n_points; i++) {
    SkewPoint *p = &skew->points[(skew->first_point + i) % skew->n_windows];
    sxx += (p->sender - mean_x) * (p->sender - mean_x);
    sxy += (p->sender - mean_x) * (p->delay - mean_y);
  }
  *slope = sxx > 0 ? sxy / sxx : 0.0;
  *intercept = mean_y - *slope * mean_x;
}

static void
close_window (MtcpSkew * skew)
{
  SkewPoint *p;
  gdouble slope, intercept, now_x, now_corr, target, pull;

  if (!skew->have_min)
    return;
  skew->have_min = FALSE;

  if (skew->n_points == skew->n_windows) {
    skew->first_point = (skew->first_point + 1) % skew->n_windows;
    skew->n_points--;
  }
  p = &skew->points[(skew->first_point + skew->n_points) % skew->n_windows];
  p->sender = time_diff (skew->min_sender, skew->sender_origin);
  p->delay = (gdouble) skew->min_delay;
  skew->n_points++;
  if (!skew->have_floor) {
    /* the first window's floor is where the mapping started */
    skew->floor_ref = p->delay;
    skew->have_floor = TRUE;
  }
  if (skew->n_points < MIN_POINTS)
    return;

  fit_line (skew, &slope, &intercept);
  now_x = time_diff (skew->last_sender, skew->sender_origin);
  now_corr = correction_at (skew, now_x);
  if (fabs (slope) * 1e6 > MTCP_SKEW_MAX_PPM) {
    /* not a clock: hold the correction where it is and start over */
    GST_INFO ("delay slope %.0f ppm is not clock drift: estimate starts "
        "over", slope * 1e6);
    skew->anchor_x = now_x;
    skew->anchor_corr = now_corr;
    skew->rate = 0;
    skew->n_points = 0;
    skew->first_point = 0;
    skew->rebase = TRUE;
    skew->valid = FALSE;
    return;
  }
  if (skew->rebase) {
    skew->floor_ref = intercept + slope * now_x - now_corr;
    skew->rebase = FALSE;
  }
  target = intercept + slope * now_x - skew->floor_ref;
  pull = CLAMP ((target - now_corr) / PULL_TIME, -MAX_PULL, MAX_PULL);
  skew->anchor_x = now_x;
  skew->anchor_corr = now_corr;
  skew->rate = CLAMP (slope + pull, -2 * MTCP_SKEW_MAX_PPM * 1e-6,
      2 * MTCP_SKEW_MAX_PPM * 1e-6);
  skew->slope = slope;
  skew->valid = TRUE;
  GST_LOG ("slope %.1f ppm, correction %.3f ms, off the line by %.3f ms",
      slope * 1e6, now_corr / 1e6, (target - now_corr) / 1e6);
}

void
mtcp_skew_observe (MtcpSkew * skew, GstClockTime sender_time,
    GstClockTime arrival)
{
  gint64 delay;

  if (!GST_CLOCK_TIME_IS_VALID (sender_time) ||
      !GST_CLOCK_TIME_IS_VALID (arrival))
    return;
  if (!skew->started) {
    skew->started = TRUE;
    skew->sender_origin = sender_time;
    skew->delay_origin = delay_of (arrival, sender_time);
    skew->last_sender = sender_time;
    skew->window_end = arrival + skew->window;
  }
  if (arrival >= skew->window_end) {
    close_window (skew);
    skew->window_end = arrival + skew->window;
  }
  delay = sub_sat (delay_of (arrival, sender_time), skew->delay_origin);
  if (!skew->have_min || delay < skew->min_delay) {
    skew->min_delay = delay;
    skew->min_sender = sender_time;
    skew->have_min = TRUE;
  }
  if (sender_time > skew->last_sender)
    skew->last_sender = sender_time;
}

gint64
mtcp_skew_correction (MtcpSkew * skew, GstClockTime sender_time)
{
  gdouble c;

  if (!skew->started || !GST_CLOCK_TIME_IS_VALID (sender_time))
    return 0;
  c = correction_at (skew, time_diff (sender_time, skew->sender_origin));
  /* far-off sender times: saturate rather than leave llround's range */
  if (!isfinite (c))
    return 0;
  c = CLAMP (c, (gdouble) (G_MININT64 / 2), (gdouble) (G_MAXINT64 / 2));
  return (gint64) llround (c);
}

gdouble
mtcp_skew_get_ppm (MtcpSkew * skew)
{
  /* delay = path - e * s / (1 + e) for a sender clock e fast */
  if (!skew->valid || skew->slope <= -1.0)
    return 0.0;
  return -skew->slope / (1.0 + skew->slope) * 1e6;
}

gboolean
mtcp_skew_is_valid (MtcpSkew * skew)
{
  return skew->valid;
}

/* multitcp
 * Copyright (C) 2026 the multitcp authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "mtcpestimate.h"

#include <gst/gst.h>

GST_DEBUG_CATEGORY_STATIC (mtcp_estimate_debug);
#define GST_CAT_DEFAULT mtcp_estimate_debug

/* measurements kept: a span's worth at the fastest tick (10 ms) */
#define HISTORY 128
/* what waits longer than this at the rate the sockets drain means the
 * path, not the stream, is the limit (a keyframe's burst drains within
 * it) */
#define WAIT_LIMITED_US (150 * G_TIME_SPAN_MILLISECOND)
/* an estimate climbs towards a higher measurement over about this long */
#define RISE_US (2 * G_USEC_PER_SEC)

typedef struct {
  gint64 at_us;
  guint64 bytes_acked;
} Point;

struct _MtcpRateEstimate {
  Point history[HISTORY];
  guint head;                   /* next slot */
  guint n;
  gint64 last_us;
  gdouble bps;
  gdouble delivered;            /* over the last span */
  gboolean known;
  gboolean path_limited;
  gint64 waited_us;             /* what waited at the last update, drained */
  guint64 told_bps;
  guint64 told_delivered;
  gboolean told_limited;
  gint64 told_us;
  gint64 held_since_us;         /* every window held down since, 0: not */
};

MtcpRateEstimate *
mtcp_rate_estimate_new (void)
{
  static gsize done = 0;

  if (g_once_init_enter (&done)) {
    GST_DEBUG_CATEGORY_INIT (mtcp_estimate_debug, "multitcpestimate", 0,
        "multitcp bandwidth estimate");
    g_once_init_leave (&done, 1);
  }
  return g_new0 (MtcpRateEstimate, 1);
}

void
mtcp_rate_estimate_free (MtcpRateEstimate * e)
{
  g_free (e);
}

/* The delivered rate over the newest span: from the newest point at least
 * a span old (or the oldest kept), bits/s; FALSE if less than a span
 * was measured. */
static gboolean
delivered_bps (MtcpRateEstimate * e, gint64 now_us, guint64 bytes_acked,
    gdouble * bps)
{
  const Point *from = NULL;
  guint i;

  for (i = 0; i < e->n; i++) {
    const Point *p = &e->history[(e->head + HISTORY - 1 - i) % HISTORY];
    from = p;
    if (now_us - p->at_us >= MTCP_ESTIMATE_SPAN_US)
      break;
  }
  if (from == NULL || now_us - from->at_us < MTCP_ESTIMATE_SPAN_US)
    return FALSE;
  *bps = (bytes_acked - from->bytes_acked) * 8.0 * G_USEC_PER_SEC /
      (now_us - from->at_us);
  return TRUE;
}

gboolean
mtcp_rate_estimate_update (MtcpRateEstimate * e, gint64 now_us,
    const MtcpRateSample * s)
{
  gdouble delivered = 0, raw;
  gboolean tell, held;

  if (e->n > 0 && now_us <= e->last_us)
    return FALSE;               /* the clock must move */
  if (e->n > 0 && s->bytes_acked <
      e->history[(e->head + HISTORY - 1) % HISTORY].bytes_acked) {
    e->n = 0;                   /* a counter that went back: measure anew */
    e->delivered = 0;
  }
  if (!s->held_down)
    e->held_since_us = 0;
  else if (e->held_since_us == 0)
    e->held_since_us = now_us;
  held = s->held_down && now_us - e->held_since_us <= MTCP_ESTIMATE_HOLD_US;
  if (delivered_bps (e, now_us, s->bytes_acked, &delivered)) {
    /* at the rate the sockets could drain it: a keyframe behind a thin
     * stream waits long at the stream's own rate, not at the windows' */
    gdouble drain = MAX (delivered, (gdouble) s->window_bps);
    gdouble waited_us = drain > 0 ? s->waiting_bytes * 8.0 *
        G_USEC_PER_SEC / drain : (s->waiting_bytes ? G_MAXDOUBLE : 0);

    waited_us += MAX (s->queued_us, 0);

    if (!held || !e->known) {
      e->path_limited = waited_us > WAIT_LIMITED_US;
      e->waited_us = (gint64) MIN (waited_us, (gdouble) G_MAXINT32);
    }
    e->delivered = delivered;
    raw = e->path_limited ? delivered : MAX (delivered, (gdouble)
        s->window_bps);
    if (s->dark) {
      e->bps = e->delivered = 0;
      e->waited_us = 0;
    }
    else if (!e->known)
      e->bps = delivered;
    else if (raw <= e->bps) {
      if (!held)
        e->bps = raw;           /* down at once, but not for TCP's pause */
    }
    else                        /* what arrived at once, what might slowly */
      e->bps = MAX (delivered, e->bps + (raw - e->bps) * MIN (1.0,
              (gdouble) (now_us - e->last_us) / RISE_US));
    e->known = TRUE;
    GST_LOG ("delivered %.0f bit/s, windows %" G_GUINT64_FORMAT " bit/s, %"
        G_GUINT64_FORMAT " bytes waiting, %" G_GINT64_FORMAT " us queued in "
        "the path%s%s: %.0f bit/s", delivered, s->window_bps,
        s->waiting_bytes, s->queued_us, s->dark ? ", dark" : "",
        held ? ", every window held down" : "", e->bps);
  }
  e->history[e->head] = (Point) {
  now_us, s->bytes_acked};
  e->head = (e->head + 1) % HISTORY;
  e->n = MIN (e->n + 1, HISTORY);
  e->last_us = now_us;
  if (!e->known)
    return FALSE;

  tell = e->told_us == 0 || now_us - e->told_us >= MTCP_ESTIMATE_TELL_US ||
      ABS (e->bps - (gdouble) e->told_bps) >
      MTCP_ESTIMATE_CHANGE * (gdouble) e->told_bps ||
      e->path_limited != e->told_limited || (s->probing &&
      e->delivered > (1 + MTCP_ESTIMATE_CHANGE) * (gdouble) e->told_delivered);
  if (tell) {
    if (e->told_bps != (guint64) e->bps)
      GST_DEBUG ("estimate %" G_GUINT64_FORMAT " -> %.0f bit/s (%s)",
          e->told_bps, e->bps, s->dark ? "dark" : e->path_limited ?
          "the path limits" : "the stream limits");
    e->told_bps = (guint64) e->bps;
    e->told_delivered = (guint64) e->delivered;
    e->told_limited = e->path_limited;
    e->told_us = now_us;
  }
  return tell;
}

guint64
mtcp_rate_estimate_bps (const MtcpRateEstimate * e)
{
  return e->known ? (guint64) e->bps : 0;
}

guint64
mtcp_rate_estimate_delivered_bps (const MtcpRateEstimate * e)
{
  return e->known ? (guint64) e->delivered : 0;
}

gboolean
mtcp_rate_estimate_path_limited (const MtcpRateEstimate * e)
{
  return e->path_limited;
}

gint64
mtcp_rate_estimate_waited_us (const MtcpRateEstimate * e)
{
  return e->known ? e->waited_us : 0;
}

gboolean
mtcp_rate_estimate_known (const MtcpRateEstimate * e)
{
  return e->known;
}

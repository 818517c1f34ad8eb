/* multitcp
 * Copyright (C) 2026 the multitcp authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "mtcpplayout.h"

typedef struct {
  GstClockTime due;
  guint64 bytes;
} Entry;

struct _MtcpPlayout {
  Entry *ring;
  guint size, head, len;
  guint64 bytes;                /* the sum over the ring */
};

MtcpPlayout *
mtcp_playout_new (guint max_entries)
{
  MtcpPlayout *p = g_new0 (MtcpPlayout, 1);

  p->size = MAX (max_entries, 2);
  p->ring = g_new0 (Entry, p->size);
  return p;
}

void
mtcp_playout_free (MtcpPlayout * p)
{
  if (p == NULL)
    return;
  g_free (p->ring);
  g_free (p);
}

void
mtcp_playout_clear (MtcpPlayout * p)
{
  p->head = p->len = 0;
  p->bytes = 0;
}

static Entry *
at (MtcpPlayout * p, guint i)
{
  return &p->ring[(p->head + i) % p->size];
}

/* drops what is due at @now */
static void
advance (MtcpPlayout * p, GstClockTime now)
{
  while (p->len && at (p, 0)->due <= now) {
    p->bytes -= at (p, 0)->bytes;
    p->head = (p->head + 1) % p->size;
    p->len--;
  }
}

void
mtcp_playout_push (MtcpPlayout * p, GstClockTime due, gsize bytes)
{
  Entry *e;

  if (!GST_CLOCK_TIME_IS_VALID (due))
    return;
  if (p->len == p->size) {
    /* full: the oldest counts until the next one is due */
    at (p, 1)->bytes += at (p, 0)->bytes;
    p->head = (p->head + 1) % p->size;
    p->len--;
  }
  /* out of order (a B-frame's PTS): due no earlier than what came before,
   * so the FIFO stays sorted */
  if (p->len && due < at (p, p->len - 1)->due)
    due = at (p, p->len - 1)->due;
  e = at (p, p->len);
  e->due = due;
  e->bytes = bytes;
  p->len++;
  p->bytes += bytes;
}

guint64
mtcp_playout_bytes (MtcpPlayout * p, GstClockTime now)
{
  advance (p, now);
  return p->bytes;
}

GstClockTime
mtcp_playout_time (MtcpPlayout * p, GstClockTime now)
{
  advance (p, now);
  return p->len ? at (p, p->len - 1)->due - now : 0;
}

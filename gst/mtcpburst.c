/* multitcp
 * Copyright (C) 2026 the multitcp authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "mtcpburst.h"

enum {
  PHASE_FIRST,
  PHASE_PAUSE,
  PHASE_BLOCK,
};

struct _MtcpBurst {
  MtcpBurstParams params;
  guint phase;
  guint64 sent_phase;           /* in the first burst or this block */
  guint64 sent_round;           /* in this RTT of a block */
  gint64 round_start_us;
  gint64 pause_until_us;
};

void
mtcp_burst_params_default (MtcpBurstParams * p)
{
  p->first_bytes = 80 * 1000 * 1000;
  p->first_pause_us = 2 * G_USEC_PER_SEC;
  p->block_bytes = 2200 * 1000;
  p->per_rtt_bytes = 128 * 1024;
  p->block_pause_us = 1500 * G_TIME_SPAN_MILLISECOND;
}

MtcpBurst *
mtcp_burst_new (const MtcpBurstParams * params)
{
  MtcpBurst *b = g_new0 (MtcpBurst, 1);

  b->params = *params;
  b->params.per_rtt_bytes = MAX (b->params.per_rtt_bytes, 1);
  b->params.block_bytes = MAX (b->params.block_bytes, 1);
  return b;
}

void
mtcp_burst_free (MtcpBurst * b)
{
  g_free (b);
}

static void
pause (MtcpBurst * b, gint64 now_us, gint64 length_us)
{
  b->phase = PHASE_PAUSE;
  b->pause_until_us = now_us + length_us;
}

guint64
mtcp_burst_budget (MtcpBurst * b, gint64 now_us, gint64 rtt_us)
{
  if (b->phase == PHASE_FIRST) {
    if (b->sent_phase < b->params.first_bytes)
      return b->params.first_bytes - b->sent_phase;
    pause (b, now_us, b->params.first_pause_us);
  }
  if (b->phase == PHASE_PAUSE) {
    if (now_us < b->pause_until_us)
      return 0;
    b->phase = PHASE_BLOCK;
    b->sent_phase = 0;
    b->sent_round = 0;
    b->round_start_us = now_us;
  }
  if (b->sent_phase >= b->params.block_bytes) {
    pause (b, now_us, b->params.block_pause_us);
    return 0;
  }
  if (now_us - b->round_start_us >= MAX (rtt_us, 1000)) {
    b->round_start_us = now_us;
    /* a frame over the last round's share is paid from this one */
    b->sent_round = b->sent_round > b->params.per_rtt_bytes ?
        b->sent_round - b->params.per_rtt_bytes : 0;
  }
  if (b->sent_round >= b->params.per_rtt_bytes)
    return 0;
  return MIN (b->params.per_rtt_bytes - b->sent_round,
      b->params.block_bytes - b->sent_phase);
}

void
mtcp_burst_sent (MtcpBurst * b, guint64 bytes)
{
  b->sent_phase += bytes;
  b->sent_round += bytes;
}

guint
mtcp_burst_phase (const MtcpBurst * b)
{
  return b->phase;
}

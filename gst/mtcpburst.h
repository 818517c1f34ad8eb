/* multitcp
 * Copyright (C) 2026 the multitcp authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
/* Seed 004's "YouTube-like (i)" transfer, the baseline network-friendly
 * transfer is compared with: a first burst at full speed, a pause, then
 * blocks sent a fixed amount per RTT with a pause after each, whatever the
 * network does. Pure: times passed in (µs). */
#ifndef __MTCP_BURST_H__
#define __MTCP_BURST_H__

#include <glib.h>

G_BEGIN_DECLS

typedef struct {
  guint64 first_bytes;          /* the first burst (80 MB) */
  gint64 first_pause_us;        /* then a pause (2 s) */
  guint64 block_bytes;          /* each block (2.2 MB) */
  guint64 per_rtt_bytes;        /* sent this much per RTT (128 kB) */
  gint64 block_pause_us;        /* and a pause after it (1.5 s) */
} MtcpBurstParams;

/* the paper's, measured on YouTube */
void mtcp_burst_params_default (MtcpBurstParams * params);

typedef struct _MtcpBurst MtcpBurst;

MtcpBurst *mtcp_burst_new (const MtcpBurstParams * params);
void mtcp_burst_free (MtcpBurst * burst);
/* what may go now; 0 while pausing. @rtt_us: the round of a block. */
guint64 mtcp_burst_budget (MtcpBurst * burst, gint64 now_us, gint64 rtt_us);
void mtcp_burst_sent (MtcpBurst * burst, guint64 bytes);
/* 0 first burst, 1 pausing, 2 in a block */
guint mtcp_burst_phase (const MtcpBurst * burst);

G_END_DECLS

#endif

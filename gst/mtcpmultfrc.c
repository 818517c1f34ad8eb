/* multitcp
 * Copyright (C) 2026 the multitcp authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "mtcpmultfrc.h"

#include <math.h>
#include <string.h>

void
mtcp_multfrc_init (MtcpMultfrc * mf, const MtcpMultfrcParams * params,
    gdouble n)
{
  memset (mf, 0, sizeof (*mf));
  mf->params = *params;
  mf->n = CLAMP (n, params->n_min, params->n_max);
  mf->rtt_min = -1;
}

gboolean
mtcp_multfrc_add_rtt (MtcpMultfrc * mf, gdouble rtt_s)
{
  gdouble ave, before = mf->n;

  mf->rtt_sum += rtt_s;
  if (++mf->rtt_count < MAX (mf->params.m, 1))
    return FALSE;
  ave = mf->rtt_sum / mf->rtt_count;
  mf->rtt_sum = 0;
  mf->rtt_count = 0;
  mf->last_ave = ave;
  if (mf->rtt_min < 0 || ave < mf->rtt_min)
    mf->rtt_min = ave;

  if (ave - mf->rtt_min > mf->params.gamma * mf->rtt_min) {
    mf->n -= mf->params.beta;
    g_snprintf (mf->reason, sizeof (mf->reason), "ave_rtt %.1f ms > rtt_min "
        "%.1f ms * (1 + gamma %.2f): n %.2f -> %.2f", ave * 1e3,
        mf->rtt_min * 1e3, mf->params.gamma, before,
        MAX (mf->n, mf->params.n_min));
  } else {
    mf->n += mf->params.alpha / mf->n;
    g_snprintf (mf->reason, sizeof (mf->reason), "ave_rtt %.1f ms within "
        "gamma of rtt_min %.1f ms: n %.2f -> %.2f", ave * 1e3,
        mf->rtt_min * 1e3, before, MIN (mf->n, mf->params.n_max));
  }
  mf->n = CLAMP (mf->n, mf->params.n_min, mf->params.n_max);
  return TRUE;
}

guint
mtcp_multfrc_connections (const MtcpMultfrc * mf)
{
  return (guint) floor (mf->n + 1e-9);
}

/* multitcp
 * Copyright (C) 2026 the multitcp authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "mtcpadjustconn.h"

#include <string.h>

void
mtcp_adjust_conn_init (MtcpAdjustConn * ac, const MtcpAdjustConnParams * params)
{
  memset (ac, 0, sizeof (*ac));
  ac->params = *params;
  ac->prev_ratio = 1.0;         /* no congestion assumed at the start */
}

gint
mtcp_adjust_conn_update (MtcpAdjustConn * ac, gdouble ratio, gdouble measured,
    gdouble target, gboolean network_limited)
{
  gdouble prev = ac->prev_ratio;

  if (ratio >= ac->params.cf) {
    if (!network_limited) {
      g_snprintf (ac->reason, sizeof (ac->reason), "congestion ratio %.2f >= "
          "cf %.2f but the sender had nothing queued: idle windows, keep",
          ratio, ac->params.cf);
      return 0;
    }
    ac->prev_ratio = ratio;
    g_snprintf (ac->reason, sizeof (ac->reason), "congestion ratio %.2f >= "
        "cf %.2f: severe congestion, stop one", ratio, ac->params.cf);
    return -1;
  }
  if (ratio < prev - ac->params.beta && measured > target) {
    ac->prev_ratio = ratio;
    g_snprintf (ac->reason, sizeof (ac->reason), "congestion ratio fell "
        "%.2f -> %.2f and T_m > T_d: stop one", prev, ratio);
    return -1;
  }
  if (ratio > prev + ac->params.beta && measured < target) {
    ac->prev_ratio = ratio;
    g_snprintf (ac->reason, sizeof (ac->reason), "congestion ratio rose "
        "%.2f -> %.2f and T_m < T_d: start one", prev, ratio);
    return 1;
  }
  g_snprintf (ac->reason, sizeof (ac->reason), "congestion ratio %.2f "
      "(previous %.2f, beta %.2f): keep", ratio, prev, ac->params.beta);
  return 0;
}

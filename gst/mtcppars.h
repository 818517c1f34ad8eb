/* ParS's model of how many TCP flows a path needs (Ansari and Ghaderi,
 * Eq. 19): N >= tau * C * sqrt(p) / (phi * (1 - p)), with C the rate to
 * carry in segments per second, tau the RTT, p the loss rate. */
#ifndef __MTCP_PARS_H__
#define __MTCP_PARS_H__

#include <glib.h>

G_BEGIN_DECLS

/* phi: the throughput constant of the sender's congestion control in
 * segments per RTT at loss p (X = phi / (RTT sqrt(p))). */
#define MTCP_PARS_PHI_RENO 1.22

guint mtcp_pars_connections (gdouble rate_bps, gdouble rtt_s, gdouble loss,
    guint mss, gdouble phi, guint n_min, guint n_max);

/* Traffic enough behind a loss rate (losses in segments) for Eq. 19: 500
 * segments, or 10 losses in 200. */
gboolean mtcp_pars_loss_known (gdouble segments, gdouble losses);

G_END_DECLS

#endif

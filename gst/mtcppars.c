#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "mtcppars.h"

#include <math.h>

guint
mtcp_pars_connections (gdouble rate_bps, gdouble rtt_s, gdouble loss,
    guint mss, gdouble phi, guint n_min, guint n_max)
{
  gdouble c = rate_bps / 8.0 / (mss ? mss : 1448);      /* segments/s */
  gdouble n;

  if (loss <= 0 || rtt_s <= 0 || phi <= 0)
    return n_min;               /* no loss seen: one flow fills the path */
  if (loss >= 1)
    return n_max;
  n = ceil (rtt_s * c * sqrt (loss) / (phi * (1 - loss)));
  return (guint) CLAMP (n, n_min, n_max);
}

/* A rate estimate's relative error shrinks with the events counted, not the
 * trials: a lossy path, the one a live stream is backing up on, is judged
 * sooner; the 200-segment floor keeps one early burst from deciding. */
#define PARS_MIN_SEGMENTS 500
#define PARS_MIN_LOSSES 10
#define PARS_MIN_SEGMENTS_LOSSY 200

gboolean
mtcp_pars_loss_known (gdouble segments, gdouble losses)
{
  return segments >= PARS_MIN_SEGMENTS || (losses >= PARS_MIN_LOSSES &&
      segments >= PARS_MIN_SEGMENTS_LOSSY);
}

/* multitcp
 * Copyright (C) 2026 the multitcp authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
/* When the sink asks its encoder for a keyframe (force-key-unit upstream,
 * with bitrate-control=encoder). After a session skipped: it resumes at
 * a keyframe, or waits at the queue's end for the next one; at most one
 * such ask a second. While the followed receiver's path is dark: one each
 * half second, so that a keyframe the receiver's latency has not passed is
 * queued when the path returns (with a long GOP there would be none). The
 * two are counted apart: a skip as the path returns, past the last dark
 * keyframe and no longer in time for it, still gets its own at once
 * (counted together, it waited for the encoder's next own keyframe: the
 * frame maps of bond-cut, stop 46); but not within
 * MTCP_KEYFRAME_DARK_GAP_US of a dark one, whose keyframe is still due or
 * about to come (a second one only added bytes before the path's return).
 *
 * No locking inside: the owner serialises calls. */
#ifndef __MTCP_KEYFRAME_ASK_H__
#define __MTCP_KEYFRAME_ASK_H__

#include <glib.h>

G_BEGIN_DECLS

/* at most one keyframe asked for after skips in this long */
#define MTCP_KEYFRAME_SKIP_GAP_US (G_USEC_PER_SEC)
/* while the path is dark, one this often: half multitcpsrc's default
 * latency, so that one made near the outage's end is still due after it */
#define MTCP_KEYFRAME_DARK_GAP_US (G_USEC_PER_SEC / 2)

typedef struct _MtcpKeyframeAsk MtcpKeyframeAsk;

MtcpKeyframeAsk *mtcp_keyframe_ask_new (void);
void mtcp_keyframe_ask_free (MtcpKeyframeAsk * ask);
/* The skips counted so far are forgotten (a new stream). */
void mtcp_keyframe_ask_reset (MtcpKeyframeAsk * ask);
/* The sessions have skipped @skips times in all so far. TRUE: ask for a
 * keyframe now (more skips than last seen, none asked after skips within
 * MTCP_KEYFRAME_SKIP_GAP_US, none in the dark within
 * MTCP_KEYFRAME_DARK_GAP_US). With @counts FALSE (no encoder, or the
 * skipping sessions are not the one followed) the skips are only noted. */
gboolean mtcp_keyframe_ask_after_skips (MtcpKeyframeAsk * ask, gint64 now_us,
    guint64 skips, gboolean counts);
/* While the path is dark: whether a keyframe is due (none asked in the
 * dark within MTCP_KEYFRAME_DARK_GAP_US) and, with @take, that it is asked
 * for now. */
gboolean mtcp_keyframe_ask_while_dark (MtcpKeyframeAsk * ask, gint64 now_us,
    gboolean take);

G_END_DECLS

#endif

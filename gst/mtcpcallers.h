/* multitcp
 * Copyright (C) 2026 the multitcp authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
/* Who calls, as the elements tell applications (srtsink's and srtsrc's
 * caller-* signals): events a transport notes while it holds its lock and
 * tells its owner after releasing it, and the owner's decision on a new
 * caller. Shared by both transports; no locking of its own (the owner's
 * lock guards the queue). */
#ifndef __MTCP_CALLERS_H__
#define __MTCP_CALLERS_H__

#include <gio/gio.h>

G_BEGIN_DECLS

typedef enum {
  MTCP_CALLER_ADDED,            /* a peer's session began */
  MTCP_CALLER_REMOVED,          /* it ended (left, timed out, or stopping) */
  MTCP_CALLER_REJECTED,         /* a connection was refused (@reason) */
  MTCP_CALLER_DIAL_FAILED,      /* calling: a dial or a reconnect failed
                                 * (@kind, @reason, @attempt in a row); it
                                 * tries again */
} MtcpCallerEvent;

/* Called with no transport lock held, from its I/O thread: @session_id
 * NULL for a rejection or a failed dial (@kind: "refused", "unreachable",
 * "timeout", "tls", "closed": the peer closed the call before it took it,
 * "auth", "error"), @address the peer's (may be NULL). */
typedef void (*MtcpCallerFunc) (MtcpCallerEvent event,
    const gchar * session_id, GSocketAddress * address, const gchar * reason,
    const gchar * kind, guint attempt, gpointer user_data);

/* Called with no transport lock held, from its I/O thread, when a peer
 * that called would start a new session: TRUE takes it, FALSE turns it
 * away (as srtsink's caller-connecting). @stream_id may be "". */
typedef gboolean (*MtcpCallerAcceptFunc) (GSocketAddress * address,
    const gchar * stream_id, gpointer user_data);

/* At most this many notes wait at once: a flood of refusals is counted in
 * stats, not told one by one. */
#define MTCP_CALLER_QUEUE_MAX 32

typedef struct _MtcpCallerQueue MtcpCallerQueue;

MtcpCallerQueue *mtcp_caller_queue_new (void);
void mtcp_caller_queue_free (MtcpCallerQueue * queue);
/* Copies what it is given; FALSE (and nothing kept) when full. */
gboolean mtcp_caller_queue_add (MtcpCallerQueue * queue,
    MtcpCallerEvent event, const gchar * session_id, GSocketAddress * address,
    const gchar * reason, const gchar * kind, guint attempt);
/* What was noted since the last take (NULL: nothing), for
 * mtcp_caller_notes_tell once the lock is released. */
GPtrArray *mtcp_caller_queue_take (MtcpCallerQueue * queue);
/* Tells @func every note of @notes, in order, and frees them (@func NULL:
 * only frees). */
void mtcp_caller_notes_tell (GPtrArray * notes, MtcpCallerFunc func,
    gpointer user_data);

/* What kind of failure a dial's or a call's @error is (NULL: the peer
 * closed the call before it took it, @why says how), for applications. */
const gchar *mtcp_caller_failure_kind (const GError * error,
    const gchar * why);

G_END_DECLS

#endif

/* multitcp
 * Copyright (C) 2026 the multitcp authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "mtcpcallers.h"

#include <string.h>

typedef struct {
  MtcpCallerEvent event;
  gchar *session_id;
  GSocketAddress *address;
  gchar *reason;
  const gchar *kind;            /* static */
  guint attempt;
} CallerNote;

struct _MtcpCallerQueue {
  GPtrArray *notes;             /* CallerNote* */
};

static void
caller_note_free (CallerNote * note)
{
  g_free (note->session_id);
  g_clear_object (&note->address);
  g_free (note->reason);
  g_free (note);
}

static GPtrArray *
notes_new (void)
{
  return g_ptr_array_new_with_free_func ((GDestroyNotify) caller_note_free);
}

MtcpCallerQueue *
mtcp_caller_queue_new (void)
{
  MtcpCallerQueue *queue = g_new0 (MtcpCallerQueue, 1);

  queue->notes = notes_new ();
  return queue;
}

void
mtcp_caller_queue_free (MtcpCallerQueue * queue)
{
  if (queue == NULL)
    return;
  g_ptr_array_unref (queue->notes);
  g_free (queue);
}

gboolean
mtcp_caller_queue_add (MtcpCallerQueue * queue, MtcpCallerEvent event,
    const gchar * session_id, GSocketAddress * address, const gchar * reason,
    const gchar * kind, guint attempt)
{
  CallerNote *note;

  if (queue->notes->len >= MTCP_CALLER_QUEUE_MAX)
    return FALSE;
  note = g_new0 (CallerNote, 1);
  note->event = event;
  note->session_id = g_strdup (session_id);
  note->address = address ? g_object_ref (address) : NULL;
  note->reason = g_strdup (reason);
  note->kind = kind;
  note->attempt = attempt;
  g_ptr_array_add (queue->notes, note);
  return TRUE;
}

GPtrArray *
mtcp_caller_queue_take (MtcpCallerQueue * queue)
{
  GPtrArray *taken;

  if (queue->notes->len == 0)
    return NULL;
  taken = queue->notes;
  queue->notes = notes_new ();
  return taken;
}

void
mtcp_caller_notes_tell (GPtrArray * notes, MtcpCallerFunc func,
    gpointer user_data)
{
  guint i;

  if (notes == NULL)
    return;
  for (i = 0; i < notes->len && func; i++) {
    CallerNote *n = g_ptr_array_index (notes, i);
    func (n->event, n->session_id, n->address, n->reason, n->kind,
        n->attempt, user_data);
  }
  g_ptr_array_unref (notes);
}

const gchar *
mtcp_caller_failure_kind (const GError * error, const gchar * why)
{
  if (error == NULL) {
    /* a close's reason, as GIO and the transports word it */
    gchar *lower = g_ascii_strdown (why ? why : "", -1);
    const gchar *kind = "closed";

    if (strstr (lower, "refused"))
      kind = "refused";
    else if (strstr (lower, "timed out") || strstr (lower, "timeout"))
      kind = "timeout";
    else if (strstr (lower, "unreachable"))
      kind = "unreachable";
    else if (strstr (lower, "tls") || strstr (lower, "certificate"))
      kind = "tls";
    else if (strstr (lower, "passphrase"))
      kind = "auth";
    g_free (lower);
    return kind;
  }
  if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CONNECTION_REFUSED))
    return "refused";
  if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_TIMED_OUT))
    return "timeout";
  if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_HOST_UNREACHABLE) ||
      g_error_matches (error, G_IO_ERROR, G_IO_ERROR_NETWORK_UNREACHABLE))
    return "unreachable";
  if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_PERMISSION_DENIED))
    return "auth";
  if (error->domain == G_TLS_ERROR)
    return "tls";
  return "error";
}

/* multitcp
 * Copyright (C) 2026 the multitcp authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
/* Caller notes (gst/mtcpcallers.c): kept in order until taken, bounded
 * (a flood of refusals is not held one by one), told with what they were
 * given; failures named by their kind. */
#include <gst/check/gstcheck.h>

#include "mtcpcallers.h"

typedef struct {
  GString *log;
} Told;

static void
tell (MtcpCallerEvent event, const gchar * session_id,
    GSocketAddress * address, const gchar * reason, const gchar * kind,
    guint attempt, gpointer user_data)
{
  Told *t = user_data;

  g_string_append_printf (t->log, "%d/%s/%s/%s/%s/%u;", event,
      session_id ? session_id : "-", address ? "addr" : "-",
      reason ? reason : "-", kind ? kind : "-", attempt);
}

GST_START_TEST (test_notes_in_order_and_bounded)
{
  MtcpCallerQueue *q = mtcp_caller_queue_new ();
  GInetAddress *lo = g_inet_address_new_loopback (G_SOCKET_FAMILY_IPV6);
  GSocketAddress *addr = g_inet_socket_address_new (lo, 5600);
  Told t = { g_string_new (NULL) };
  guint i;

  fail_unless (mtcp_caller_queue_take (q) == NULL);
  fail_unless (mtcp_caller_queue_add (q, MTCP_CALLER_ADDED, "s1", addr, NULL,
          NULL, 0));
  fail_unless (mtcp_caller_queue_add (q, MTCP_CALLER_DIAL_FAILED, NULL, NULL,
          "Connection refused", "refused", 3));
  mtcp_caller_notes_tell (mtcp_caller_queue_take (q), tell, &t);
  fail_unless_equals_string (t.log->str,
      "0/s1/addr/-/-/0;3/-/-/Connection refused/refused/3;");
  /* taken: nothing twice */
  fail_unless (mtcp_caller_queue_take (q) == NULL);

  for (i = 0; i < MTCP_CALLER_QUEUE_MAX; i++)
    fail_unless (mtcp_caller_queue_add (q, MTCP_CALLER_REJECTED, NULL, addr,
            "wrong passphrase", NULL, 0));
  fail_if (mtcp_caller_queue_add (q, MTCP_CALLER_REJECTED, NULL, addr,
          "one too many", NULL, 0));
  g_string_truncate (t.log, 0);
  mtcp_caller_notes_tell (mtcp_caller_queue_take (q), tell, &t);
  fail_if (strstr (t.log->str, "one too many"));
  /* freed without telling */
  fail_unless (mtcp_caller_queue_add (q, MTCP_CALLER_REMOVED, "s1", addr,
          NULL, NULL, 0));
  mtcp_caller_notes_tell (mtcp_caller_queue_take (q), NULL, NULL);
  /* and a queue freed with notes in it */
  fail_unless (mtcp_caller_queue_add (q, MTCP_CALLER_REMOVED, "s2", addr,
          NULL, NULL, 0));
  mtcp_caller_queue_free (q);
  g_string_free (t.log, TRUE);
  g_object_unref (addr);
  g_object_unref (lo);
}

GST_END_TEST;

GST_START_TEST (test_failure_kinds)
{
  GError *e;

  e = g_error_new (G_IO_ERROR, G_IO_ERROR_CONNECTION_REFUSED, "x");
  fail_unless_equals_string (mtcp_caller_failure_kind (e, NULL), "refused");
  g_error_free (e);
  e = g_error_new (G_IO_ERROR, G_IO_ERROR_TIMED_OUT, "x");
  fail_unless_equals_string (mtcp_caller_failure_kind (e, NULL), "timeout");
  g_error_free (e);
  e = g_error_new (G_IO_ERROR, G_IO_ERROR_NETWORK_UNREACHABLE, "x");
  fail_unless_equals_string (mtcp_caller_failure_kind (e, NULL),
      "unreachable");
  g_error_free (e);
  e = g_error_new (G_TLS_ERROR, G_TLS_ERROR_BAD_CERTIFICATE, "x");
  fail_unless_equals_string (mtcp_caller_failure_kind (e, NULL), "tls");
  g_error_free (e);
  e = g_error_new (G_IO_ERROR, G_IO_ERROR_FAILED, "x");
  fail_unless_equals_string (mtcp_caller_failure_kind (e, NULL), "error");
  g_error_free (e);
  /* a close's reason only */
  fail_unless_equals_string (mtcp_caller_failure_kind (NULL,
          "Could not connect: Connection refused"), "refused");
  fail_unless_equals_string (mtcp_caller_failure_kind (NULL,
          "TLS handshake failed"), "tls");
  fail_unless_equals_string (mtcp_caller_failure_kind (NULL,
          "the sink at h:1 does not know the passphrase"), "auth");
  fail_unless_equals_string (mtcp_caller_failure_kind (NULL,
          "closed by peer"), "closed");
  fail_unless_equals_string (mtcp_caller_failure_kind (NULL, NULL), "closed");
}

GST_END_TEST;

static Suite *
callers_suite (void)
{
  Suite *s = suite_create ("mtcpcallers");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_notes_in_order_and_bounded);
  tcase_add_test (tc, test_failure_kinds);
  return s;
}

GST_CHECK_MAIN (callers);

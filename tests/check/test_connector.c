/* multitcp
 * Copyright (C) 2026 the multitcp authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
/* Unit tests of the connector's dials into a path that does not answer:
 * a listener whose accept queue is full drops every SYN, as a dark modem
 * does; a dial sends a fresh SYN each half second meanwhile, so that it
 * connects soon after the queue has room (the kernel would try again only
 * 1 and 3 s after its first), and gives up at its timeout. */
#include <gst/check/gstcheck.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <unistd.h>

#include "mtcpconnector.h"

typedef struct {
  GSocket *connected;
  GError *error;
} Outcome;

static void
on_connected (GSocket * socket, guint uplink, gpointer user_data)
{
  Outcome *o = user_data;
  o->connected = socket;
}

static void
on_failed (const GError * error, gboolean exhausted, guint backoff_ms,
    guint uplink, gpointer user_data)
{
  Outcome *o = user_data;
  o->error = g_error_copy (error);
}

/* A listener on loopback with room for one waiting connection, and that
 * one taken by a plain client: every SYN after it is dropped. Returns the
 * listening fd; the port in *port, the client's fd in *client. */
static gint
full_listener (guint * port, gint * client)
{
  struct sockaddr_in a = { 0, };
  socklen_t len = sizeof (a);
  gint fd = socket (AF_INET, SOCK_STREAM, 0);

  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl (INADDR_LOOPBACK);
  fail_unless (bind (fd, (struct sockaddr *) &a, sizeof (a)) == 0);
  fail_unless (listen (fd, 0) == 0);
  fail_unless (getsockname (fd, (struct sockaddr *) &a, &len) == 0);
  *port = ntohs (a.sin_port);
  *client = socket (AF_INET, SOCK_STREAM, 0);
  fail_unless (connect (*client, (struct sockaddr *) &a, sizeof (a)) == 0);
  return fd;
}

/* Runs @ctx until the dial ends or @c has sent @syns SYNs (G_MAXUINT64:
 * until it ends), at most @ms. */
static void
run_until_syns (GMainContext * ctx, MtcpConnector * c, Outcome * o,
    guint64 syns, gint64 ms)
{
  gint64 until = g_get_monotonic_time () + ms * 1000;

  while (!o->connected && !o->error && mtcp_connector_syns (c) < syns &&
      g_get_monotonic_time () < until)
    if (!g_main_context_iteration (ctx, FALSE))
      g_usleep (2000);
}

/* The queue gets room once the dial has sent three SYNs (0, 0.5, 1 s):
 * it connects on a later one or a retry. */
GST_START_TEST (test_dial_resends_into_a_dark_path)
{
  GMainContext *ctx = g_main_context_new ();
  Outcome o = { NULL, NULL };
  guint port;
  gint client, queued, lfd = full_listener (&port, &client);
  MtcpConnector *c = mtcp_connector_new_dialer ("127.0.0.1", port, 5000,
      NULL, NULL);

  fail_unless (c != NULL);
  mtcp_connector_start (c, ctx, on_connected, on_failed, &o);
  mtcp_connector_dial (c, 0);
  run_until_syns (ctx, c, &o, 3, 3000);
  fail_unless (o.connected == NULL && o.error == NULL,
      "the full queue answered");
  fail_unless (mtcp_connector_syns (c) >= 3, "%" G_GUINT64_FORMAT " SYNs",
      mtcp_connector_syns (c));
  fail_unless_equals_int (mtcp_connector_dialing (c, 0), 1);
  queued = accept (lfd, NULL, NULL);
  fail_unless (queued >= 0);
  run_until_syns (ctx, c, &o, G_MAXUINT64, 4000);
  fail_unless (o.error == NULL, "%s", o.error ? o.error->message : "");
  fail_unless (o.connected != NULL);
  fail_unless_equals_int (mtcp_connector_dialing (c, 0), 0);

  g_object_unref (o.connected);
  mtcp_connector_free (c);
  close (queued);
  close (client);
  close (lfd);
  g_main_context_unref (ctx);
}

GST_END_TEST;

/* Nothing ever answers: the dial fails at its timeout, a timeout, after
 * a SYN each half second. */
GST_START_TEST (test_dial_into_a_dark_path_times_out)
{
  GMainContext *ctx = g_main_context_new ();
  Outcome o = { NULL, NULL };
  guint port;
  gint client, lfd = full_listener (&port, &client);
  MtcpConnector *c = mtcp_connector_new_dialer ("127.0.0.1", port, 2200,
      NULL, NULL);

  mtcp_connector_start (c, ctx, on_connected, on_failed, &o);
  mtcp_connector_dial (c, 0);
  run_until_syns (ctx, c, &o, G_MAXUINT64, 10000);
  fail_unless (o.connected == NULL);
  fail_unless (o.error != NULL);
  fail_unless (g_error_matches (o.error, G_IO_ERROR, G_IO_ERROR_TIMED_OUT),
      "%s", o.error->message);
  fail_unless (mtcp_connector_syns (c) >= 4, "%" G_GUINT64_FORMAT " SYNs",
      mtcp_connector_syns (c));
  fail_unless_equals_int (mtcp_connector_dialing (c, 0), 0);

  g_error_free (o.error);
  mtcp_connector_free (c);
  close (client);
  close (lfd);
  g_main_context_unref (ctx);
}

GST_END_TEST;

static Suite *
connector_suite (void)
{
  Suite *s = suite_create ("mtcpconnector");
  TCase *tc = tcase_create ("dial");

  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_dial_resends_into_a_dark_path);
  tcase_add_test (tc, test_dial_into_a_dark_path_times_out);
  return s;
}

GST_CHECK_MAIN (connector);

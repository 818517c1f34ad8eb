/* multitcp
 * Copyright (C) 2026 the multitcp authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
/* multitcp:// URIs (gst/mtcpuri.c): who dials, the address, the query's
 * keys in order with `_` made `-`, and clear refusals. */
#include <gst/check/gstcheck.h>

#include "mtcpuri.h"

GST_START_TEST (test_parse)
{
  MtcpUri u;
  GError *err = NULL;

  fail_unless (mtcp_uri_parse ("multitcp://cam.example:5600", &u, &err));
  fail_if (u.listener);
  fail_unless_equals_string (u.host, "cam.example");
  fail_unless_equals_int (u.port, 5600);
  fail_unless_equals_int (g_strv_length (u.keys), 0);
  mtcp_uri_clear (&u);

  fail_unless (mtcp_uri_parse ("multitcp://:5601?latency=2000&max_"
          "connections=8&passphrase=a%20b", &u, &err));
  fail_unless (u.listener);
  fail_unless_equals_string (u.host, "");
  fail_unless_equals_int (u.port, 5601);
  fail_unless_equals_int (g_strv_length (u.keys), 3);
  fail_unless_equals_string (u.keys[0], "latency");
  fail_unless_equals_string (u.values[0], "2000");
  fail_unless_equals_string (u.keys[1], "max-connections");
  fail_unless_equals_string (u.keys[2], "passphrase");
  fail_unless_equals_string (u.values[2], "a b");
  mtcp_uri_clear (&u);

  /* mode= wins over the host rule; IPv6 in brackets; port 0 listens
   * anywhere free */
  fail_unless (mtcp_uri_parse ("MULTITCP://[::1]:0?mode=listener", &u, &err));
  fail_unless (u.listener);
  fail_unless_equals_string (u.host, "::1");
  fail_unless_equals_int (u.port, 0);
  fail_unless_equals_int (g_strv_length (u.keys), 0);
  mtcp_uri_clear (&u);
}

GST_END_TEST;

GST_START_TEST (test_refused)
{
  const gchar *bad[] = {
    "srt://host:5600",          /* another scheme */
    "multitcp://host",          /* no port */
    "multitcp://host:70000",    /* out of range */
    "multitcp://:5600?mode=caller",     /* a caller without a host */
    "multitcp://host:0",        /* a caller to port 0 */
    "multitcp://host:1?mode=sideways",
    "not a uri at all",
  };
  guint i;

  for (i = 0; i < G_N_ELEMENTS (bad); i++) {
    MtcpUri u;
    GError *err = NULL;

    fail_if (mtcp_uri_parse (bad[i], &u, &err), "%s parsed", bad[i]);
    fail_unless (err != NULL && err->message[0] != '\0', "%s", bad[i]);
    g_clear_error (&err);
  }
}

GST_END_TEST;

GST_START_TEST (test_build)
{
  gchar *s;

  s = mtcp_uri_build (FALSE, "10.0.0.2", 5600);
  fail_unless_equals_string (s, "multitcp://10.0.0.2:5600");
  g_free (s);
  s = mtcp_uri_build (TRUE, "0.0.0.0", 5600);
  fail_unless_equals_string (s, "multitcp://:5600");
  g_free (s);
  s = mtcp_uri_build (TRUE, "192.168.1.5", 5600);
  fail_unless_equals_string (s, "multitcp://192.168.1.5:5600?mode=listener");
  g_free (s);
  s = mtcp_uri_build (FALSE, "fe80::1", 5600);
  fail_unless_equals_string (s, "multitcp://[fe80::1]:5600");
  g_free (s);
}

GST_END_TEST;

static Suite *
uri_suite (void)
{
  Suite *s = suite_create ("uri");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_parse);
  tcase_add_test (tc, test_refused);
  tcase_add_test (tc, test_build);
  return s;
}

GST_CHECK_MAIN (uri);

/* multitcp
 * Copyright (C) 2026 the multitcp authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
/* Unit tests of the passphrase handshake: the key derivation against
 * published vectors, and the proofs of both ends. */
#include <gst/check/gstcheck.h>
#include <string.h>

#include "mtcpauth.h"

static void
check_pbkdf2 (const gchar * password, gsize password_len, const gchar * salt,
    guint32 iterations, const gchar * hex)
{
  gsize len = strlen (hex) / 2, i;
  guint8 *out = g_malloc (len), *want = g_malloc (len);

  for (i = 0; i < len; i++)
    want[i] = (g_ascii_xdigit_value (hex[2 * i]) << 4) |
        g_ascii_xdigit_value (hex[2 * i + 1]);
  mtcp_pbkdf2_sha256 ((const guint8 *) password, password_len,
      (const guint8 *) salt, strlen (salt), iterations, out, len);
  fail_unless (memcmp (out, want, len) == 0, "PBKDF2 (%s, %s, %u) is wrong",
      password, salt, iterations);
  g_free (out);
  g_free (want);
}

GST_START_TEST (test_pbkdf2_vectors)
{
  gchar long_password[101];

  /* RFC 7914 section 11 */
  check_pbkdf2 ("passwd", 6, "salt", 1,
      "55ac046e56e3089fec1691c22544b605f94185216dde0465e68b9d57c20dacbc"
      "49ca9cccf179b645991664b39d77ef317c71b845b1e30bd509112041d3a19783");
  check_pbkdf2 ("Password", 8, "NaCl", 80000,
      "4ddcd8f60b98be21830cee5ef22701f9641a4418d04c0414aeff08876b34ab56"
      "a1d425a1225833549adb841b51c9b3176a272bdebba1d078478f62b397f33c8d");
  /* a password longer than a SHA-256 block is hashed first, and a length
   * that is not a whole block (Python's hashlib.pbkdf2_hmac) */
  memset (long_password, 'x', 100);
  long_password[100] = 0;
  check_pbkdf2 (long_password, 100, "0123456789abcdef", 3,
      "1a9ad599dabe5189a3133cd620e870a7fce4d10837175a4eb2e4ecf3c1e8e1da"
      "510d3392c4e04da0");
}

GST_END_TEST;

GST_START_TEST (test_key_derive_and_match)
{
  MtcpAuthKey key = { 0, };
  guint8 salt[MTCP_SALT_SIZE], other[MTCP_SALT_SIZE], want[32];
  gint64 t0;

  memset (salt, 0x11, sizeof (salt));
  memset (other, 0x22, sizeof (other));
  fail_if (mtcp_auth_key_matches (&key, salt, 1000));
  mtcp_auth_key_derive (&key, "open sesame", salt, 1000);
  fail_unless (key.valid);
  fail_unless (mtcp_auth_key_matches (&key, salt, 1000));
  fail_if (mtcp_auth_key_matches (&key, salt, 1001));
  fail_if (mtcp_auth_key_matches (&key, other, 1000));
  mtcp_pbkdf2_sha256 ((const guint8 *) "open sesame", 11, salt,
      MTCP_SALT_SIZE, 1000, want, sizeof (want));
  fail_unless (memcmp (key.key, want, 32) == 0);
  mtcp_auth_key_clear (&key);
  fail_if (key.valid);
  fail_if (mtcp_auth_key_matches (&key, salt, 1000));

  fail_unless (MTCP_AUTH_ITERATIONS_MIN <= MTCP_AUTH_ITERATIONS_DEFAULT);
  fail_unless (MTCP_AUTH_ITERATIONS_DEFAULT <= MTCP_AUTH_ITERATIONS_MAX);
  t0 = g_get_monotonic_time ();
  mtcp_auth_key_derive (&key, "open sesame", salt,
      MTCP_AUTH_ITERATIONS_DEFAULT);
  GST_INFO ("%u rounds: %" G_GINT64_FORMAT " ms", MTCP_AUTH_ITERATIONS_DEFAULT,
      (g_get_monotonic_time () - t0) / 1000);
}

GST_END_TEST;

GST_START_TEST (test_proofs_differ_by_role_and_input)
{
  MtcpAuthKey key, wrong;
  guint8 salt[MTCP_SALT_SIZE] = { 1, 2, 3 };
  guint8 ns[MTCP_NONCE_SIZE], nr[MTCP_NONCE_SIZE];
  guint8 r1[MTCP_MAC_SIZE], r2[MTCP_MAC_SIZE], s1[MTCP_MAC_SIZE];
  guint8 x[MTCP_MAC_SIZE];
  MtcpHello hello = { 0, }, h2;

  memset (ns, 0xaa, sizeof (ns));
  memset (nr, 0xbb, sizeof (nr));
  hello.magic = MTCP_MAGIC;
  hello.version = MTCP_VERSION;
  hello.flags = MTCP_HELLO_FLAG_JOIN | MTCP_HELLO_FLAG_MUTUAL_AUTH;
  memset (hello.session_id, 0x5a, MTCP_SESSION_ID_SIZE);
  hello.latency_ms = 300;
  mtcp_auth_key_derive (&key, "open sesame", salt, 10);
  mtcp_auth_key_derive (&wrong, "open sesamf", salt, 10);

  mtcp_auth_proof (&key, MTCP_AUTH_ROLE_RECEIVER, ns, nr, &hello, r1);
  mtcp_auth_proof (&key, MTCP_AUTH_ROLE_RECEIVER, ns, nr, &hello, r2);
  fail_unless (mtcp_bytes_equal_ct (r1, r2, MTCP_MAC_SIZE));
  /* the sink's proof is not the receiver's: neither can reflect the other */
  mtcp_auth_proof (&key, MTCP_AUTH_ROLE_SINK, ns, nr, &hello, s1);
  fail_if (mtcp_bytes_equal_ct (r1, s1, MTCP_MAC_SIZE));
  /* each input counts */
  mtcp_auth_proof (&wrong, MTCP_AUTH_ROLE_RECEIVER, ns, nr, &hello, x);
  fail_if (mtcp_bytes_equal_ct (r1, x, MTCP_MAC_SIZE));
  mtcp_auth_proof (&key, MTCP_AUTH_ROLE_RECEIVER, nr, ns, &hello, x);
  fail_if (mtcp_bytes_equal_ct (r1, x, MTCP_MAC_SIZE));
  nr[31] ^= 1;
  mtcp_auth_proof (&key, MTCP_AUTH_ROLE_RECEIVER, ns, nr, &hello, x);
  fail_if (mtcp_bytes_equal_ct (r1, x, MTCP_MAC_SIZE));
  nr[31] ^= 1;
  h2 = hello;
  h2.session_id[15] ^= 1;
  mtcp_auth_proof (&key, MTCP_AUTH_ROLE_RECEIVER, ns, nr, &h2, x);
  fail_if (mtcp_bytes_equal_ct (r1, x, MTCP_MAC_SIZE));
  h2 = hello;
  h2.flags &= ~MTCP_HELLO_FLAG_MUTUAL_AUTH;
  mtcp_auth_proof (&key, MTCP_AUTH_ROLE_RECEIVER, ns, nr, &h2, x);
  fail_if (mtcp_bytes_equal_ct (r1, x, MTCP_MAC_SIZE));
  h2 = hello;
  h2.latency_ms = 301;
  mtcp_auth_proof (&key, MTCP_AUTH_ROLE_RECEIVER, ns, nr, &h2, x);
  fail_if (mtcp_bytes_equal_ct (r1, x, MTCP_MAC_SIZE));
}

GST_END_TEST;

GST_START_TEST (test_random_bytes)
{
  guint8 a[MTCP_NONCE_SIZE] = { 0, }, b[MTCP_NONCE_SIZE] = { 0, };
  guint8 zero[MTCP_NONCE_SIZE] = { 0, };
  GError *err = NULL;

  fail_unless (mtcp_random_bytes (a, sizeof (a), &err));
  fail_unless (mtcp_random_bytes (b, sizeof (b), &err));
  fail_unless (err == NULL);
  fail_if (memcmp (a, b, sizeof (a)) == 0);
  fail_if (memcmp (a, zero, sizeof (a)) == 0);
}

GST_END_TEST;

static Suite *
auth_suite (void)
{
  Suite *s = suite_create ("auth");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_pbkdf2_vectors);
  tcase_add_test (tc, test_key_derive_and_match);
  tcase_add_test (tc, test_proofs_differ_by_role_and_input);
  tcase_add_test (tc, test_random_bytes);
  return s;
}

GST_CHECK_MAIN (auth);

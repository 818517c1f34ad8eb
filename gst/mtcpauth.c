/* multitcp
 * Copyright (C) 2026 the multitcp authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "mtcpauth.h"

#include <errno.h>
#include <string.h>
#include <sys/random.h>
#include <gio/gio.h>

#define SHA256_BLOCK 64
#define SHA256_SIZE 32

/* HMAC-SHA256 with the key pads hashed once: each use copies the states */
typedef struct {
  GChecksum *inner;
  GChecksum *outer;
} Hmac;

static void
hmac_init (Hmac * h, const guint8 * key, gsize key_len)
{
  guint8 k[SHA256_BLOCK], pad[SHA256_BLOCK];
  guint i;

  memset (k, 0, sizeof (k));
  if (key_len > SHA256_BLOCK) {
    GChecksum *c = g_checksum_new (G_CHECKSUM_SHA256);
    gsize len = SHA256_SIZE;

    g_checksum_update (c, key, key_len);
    g_checksum_get_digest (c, k, &len);
    g_checksum_free (c);
  } else if (key_len > 0) {
    memcpy (k, key, key_len);
  }
  h->inner = g_checksum_new (G_CHECKSUM_SHA256);
  h->outer = g_checksum_new (G_CHECKSUM_SHA256);
  for (i = 0; i < SHA256_BLOCK; i++)
    pad[i] = k[i] ^ 0x36;
  g_checksum_update (h->inner, pad, SHA256_BLOCK);
  for (i = 0; i < SHA256_BLOCK; i++)
    pad[i] = k[i] ^ 0x5c;
  g_checksum_update (h->outer, pad, SHA256_BLOCK);
  memset (k, 0, sizeof (k));
  memset (pad, 0, sizeof (pad));
}

/* HMAC of @a then @b (@b may be NULL) into @out */
static void
hmac_run (const Hmac * h, const guint8 * a, gsize a_len, const guint8 * b,
    gsize b_len, guint8 out[SHA256_SIZE])
{
  GChecksum *c = g_checksum_copy (h->inner);
  gsize len = SHA256_SIZE;

  g_checksum_update (c, a, a_len);
  if (b)
    g_checksum_update (c, b, b_len);
  g_checksum_get_digest (c, out, &len);
  g_checksum_free (c);
  c = g_checksum_copy (h->outer);
  g_checksum_update (c, out, SHA256_SIZE);
  len = SHA256_SIZE;
  g_checksum_get_digest (c, out, &len);
  g_checksum_free (c);
}

static void
hmac_clear (Hmac * h)
{
  g_checksum_free (h->inner);
  g_checksum_free (h->outer);
}

void
mtcp_pbkdf2_sha256 (const guint8 * password, gsize password_len,
    const guint8 * salt, gsize salt_len, guint32 iterations, guint8 * out,
    gsize out_len)
{
  Hmac h;
  guint32 block = 1;

  g_return_if_fail (iterations >= 1);
  hmac_init (&h, password, password_len);
  while (out_len > 0) {
    guint8 idx[4], u[SHA256_SIZE], t[SHA256_SIZE];
    gsize n = MIN (out_len, (gsize) SHA256_SIZE);
    guint32 i;
    guint j;

    idx[0] = block >> 24;
    idx[1] = block >> 16;
    idx[2] = block >> 8;
    idx[3] = block;
    hmac_run (&h, salt, salt_len, idx, sizeof (idx), u);
    memcpy (t, u, SHA256_SIZE);
    for (i = 1; i < iterations; i++) {
      hmac_run (&h, u, SHA256_SIZE, NULL, 0, u);
      for (j = 0; j < SHA256_SIZE; j++)
        t[j] ^= u[j];
    }
    memcpy (out, t, n);
    memset (t, 0, sizeof (t));
    memset (u, 0, sizeof (u));
    out += n;
    out_len -= n;
    block++;
  }
  hmac_clear (&h);
}

void
mtcp_auth_key_derive (MtcpAuthKey * key, const gchar * passphrase,
    const guint8 salt[MTCP_SALT_SIZE], guint32 iterations)
{
  mtcp_pbkdf2_sha256 ((const guint8 *) passphrase, strlen (passphrase), salt,
      MTCP_SALT_SIZE, iterations, key->key, MTCP_AUTH_KEY_SIZE);
  memcpy (key->salt, salt, MTCP_SALT_SIZE);
  key->iterations = iterations;
  key->valid = TRUE;
}

gboolean
mtcp_auth_key_matches (const MtcpAuthKey * key,
    const guint8 salt[MTCP_SALT_SIZE], guint32 iterations)
{
  return key->valid && key->iterations == iterations &&
      memcmp (key->salt, salt, MTCP_SALT_SIZE) == 0;
}

void
mtcp_auth_key_clear (MtcpAuthKey * key)
{
  /* volatile: the compiler must not drop the stores to dying memory */
  volatile guint8 *p = (volatile guint8 *) key;
  gsize i;

  for (i = 0; i < sizeof (*key); i++)
    p[i] = 0;
}

void
mtcp_auth_proof (const MtcpAuthKey * key, MtcpAuthRole role,
    const guint8 sink_nonce[MTCP_NONCE_SIZE],
    const guint8 receiver_nonce[MTCP_NONCE_SIZE], const MtcpHello * hello,
    guint8 mac[MTCP_MAC_SIZE])
{
  /* the NUL ends each label: neither is a prefix of what the other signs */
  static const gchar receiver_label[] = "multitcp receiver";
  static const gchar sink_label[] = "multitcp sink";
  GHmac *hmac;
  guint8 fields[4 + 1 + 4];
  gsize len = MTCP_MAC_SIZE;

  g_return_if_fail (key->valid);
  hmac = g_hmac_new (G_CHECKSUM_SHA256, key->key, MTCP_AUTH_KEY_SIZE);
  if (role == MTCP_AUTH_ROLE_SINK)
    g_hmac_update (hmac, (const guchar *) sink_label, sizeof (sink_label));
  else
    g_hmac_update (hmac, (const guchar *) receiver_label,
        sizeof (receiver_label));
  g_hmac_update (hmac, sink_nonce, MTCP_NONCE_SIZE);
  g_hmac_update (hmac, receiver_nonce, MTCP_NONCE_SIZE);
  g_hmac_update (hmac, key->salt, MTCP_SALT_SIZE);
  fields[0] = key->iterations >> 24;
  fields[1] = key->iterations >> 16;
  fields[2] = key->iterations >> 8;
  fields[3] = key->iterations;
  fields[4] = hello->flags;
  fields[5] = hello->latency_ms >> 24;
  fields[6] = hello->latency_ms >> 16;
  fields[7] = hello->latency_ms >> 8;
  fields[8] = hello->latency_ms;
  g_hmac_update (hmac, fields, sizeof (fields));
  g_hmac_update (hmac, hello->session_id, MTCP_SESSION_ID_SIZE);
  g_hmac_get_digest (hmac, mac, &len);
  g_hmac_unref (hmac);
}

gboolean
mtcp_random_bytes (guint8 * out, gsize n, GError ** error)
{
  gsize got = 0;

  while (got < n) {
    gssize r = getrandom (out + got, n - got, 0);
    if (r < 0 && errno == EINTR)
      continue;
    if (r <= 0) {
      int e = r < 0 ? errno : EIO;
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (e),
          "getrandom failed: %s", g_strerror (e));
      return FALSE;
    }
    got += r;
  }
  return TRUE;
}

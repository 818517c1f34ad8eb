/* multitcp
 * Copyright (C) 2026 the multitcp authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
/* multitcp passphrase handshake: the key derivation and the proofs both
 * ends give (docs/protocol.md "Joining a session", docs/reliability.md
 * "Threat model"). No GStreamer element inside. */
#ifndef __MTCP_AUTH_H__
#define __MTCP_AUTH_H__

#include <glib.h>

#include "mtcpprotocol.h"

G_BEGIN_DECLS

#define MTCP_AUTH_KEY_SIZE 32
/* PBKDF2-HMAC-SHA256 rounds a sink asks for: 80 ms on one core of the
 * 2-core machine this was measured on (docs/reliability.md "Passphrase") */
#define MTCP_AUTH_ITERATIONS_DEFAULT 150000
/* a receiver refuses a CHALLENGE below this (a sink that asks for a weak
 * key would get a proof cheap to brute-force offline) ... */
#define MTCP_AUTH_ITERATIONS_MIN 100000
/* ... or above this (one such CHALLENGE costs the receiver about 1.1 s of
 * CPU) */
#define MTCP_AUTH_ITERATIONS_MAX 2000000

/* The key both ends prove they know: PBKDF2-HMAC-SHA256 (passphrase, salt,
 * iterations). @valid is FALSE until derived. */
typedef struct {
  gboolean valid;
  guint8 salt[MTCP_SALT_SIZE];
  guint32 iterations;
  guint8 key[MTCP_AUTH_KEY_SIZE];
} MtcpAuthKey;

typedef enum {
  MTCP_AUTH_ROLE_RECEIVER,      /* AUTH's mac */
  MTCP_AUTH_ROLE_SINK,          /* PROOF's mac */
} MtcpAuthRole;

/* RFC 8018 PBKDF2 with HMAC-SHA256: @out_len bytes into @out. */
void mtcp_pbkdf2_sha256 (const guint8 * password, gsize password_len,
    const guint8 * salt, gsize salt_len, guint32 iterations, guint8 * out,
    gsize out_len);

/* Derives @key for @passphrase with that salt and iteration count (slow:
 * MTCP_AUTH_ITERATIONS_DEFAULT rounds take tens of ms). */
void mtcp_auth_key_derive (MtcpAuthKey * key, const gchar * passphrase,
    const guint8 salt[MTCP_SALT_SIZE], guint32 iterations);
/* TRUE if @key is valid and was derived with that salt and count. */
gboolean mtcp_auth_key_matches (const MtcpAuthKey * key,
    const guint8 salt[MTCP_SALT_SIZE], guint32 iterations);
/* Overwrites the key material. */
void mtcp_auth_key_clear (MtcpAuthKey * key);

/* The proof of @role: HMAC-SHA256 keyed with @key over a label for the
 * role, both nonces, the salt and count, and the receiver's HELLO (flags,
 * session id, latency), so that a proof neither replays on another
 * connection, nor joins another session, nor serves as the other role's. */
void mtcp_auth_proof (const MtcpAuthKey * key, MtcpAuthRole role,
    const guint8 sink_nonce[MTCP_NONCE_SIZE],
    const guint8 receiver_nonce[MTCP_NONCE_SIZE], const MtcpHello * hello,
    guint8 mac[MTCP_MAC_SIZE]);

/* @n bytes from getrandom; FALSE with @error if the kernel gave fewer
 * (never a weaker fallback). */
gboolean mtcp_random_bytes (guint8 * out, gsize n, GError ** error);

G_END_DECLS

#endif

/* multitcp
 * Copyright (C) 2026 the multitcp authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
/* One direction of an emulated link: loss (Bernoulli or Gilbert-Elliott),
 * a drop-tail queue, serialization at a rate (fixed or from a mahimahi
 * trace), then propagation delay. Pure: times are passed in, no I/O, so it
 * is unit-tested without namespaces. Times are nanoseconds. */
#ifndef NETSIM_LINK_H
#define NETSIM_LINK_H

#include <stddef.h>
#include <stdint.h>

#define LINK_MTU 1500

typedef struct {
  uint64_t rate_bps;            /* 0 = unlimited (or trace-driven) */
  uint64_t delay_ns;            /* one-way propagation delay */
  uint32_t queue_packets;       /* drop-tail limit, 0 = none */
  uint64_t queue_bytes;         /* drop-tail limit, 0 = none */
  double loss;                  /* Bernoulli loss probability */
  /* Gilbert-Elliott: used when ge_p_gb > 0 */
  double ge_p_gb;               /* per packet: good -> bad */
  double ge_p_bg;               /* per packet: bad -> good */
  double ge_loss_good;
  double ge_loss_bad;
  /* mahimahi trace: delivery opportunities (ms offsets), looping; each
   * opportunity carries LINK_MTU bytes, whole or parts of packets */
  uint64_t *trace_ms;
  size_t trace_len;
  /* drop TCP segments that open a connection (SYN without ACK) in this
   * direction: only the far end can dial, as behind NAT */
  int nat;
} LinkParams;

typedef struct {
  uint64_t forwarded_packets;
  uint64_t forwarded_bytes;
  uint64_t offered_packets;
  uint64_t offered_bytes;       /* all a sender put on the link, lost or not */
  uint64_t dropped_loss;
  uint64_t dropped_queue;
  uint64_t dropped_blackout;
  uint64_t dropped_syn;         /* new connections refused (nat=1) */
  uint64_t queue_delay_sum_ns;  /* over forwarded packets */
  uint64_t queue_delay_max_ns;
} LinkStats;

typedef struct LinkPacket {
  struct LinkPacket *next;
  uint64_t depart_ns;           /* leaves the queue (serialization done) */
  uint64_t deliver_ns;          /* reaches the other end */
  uint64_t enqueue_ns;
  size_t len;
  unsigned char data[];
} LinkPacket;

typedef enum {
  LINK_QUEUED,
  LINK_DROP_LOSS,
  LINK_DROP_QUEUE,
  LINK_DROP_BLACKOUT,
  LINK_DROP_SYN,
} LinkVerdict;

typedef struct {
  LinkParams p;
  LinkStats stats;
  LinkPacket *head, *tail;      /* in delivery order */
  uint64_t last_depart_ns;      /* when the previous packet left the queue */
  uint32_t backlog_packets;     /* not yet departed */
  uint64_t backlog_bytes;
  LinkPacket *depart_cursor;    /* first packet not yet departed */
  int ge_bad;
  uint64_t rng;                 /* xorshift64* state */
  uint64_t blackout_until_ns;
  uint64_t trace_base_ns;       /* time of the trace's first opportunity */
  size_t trace_pos;             /* next unused opportunity */
  uint64_t trace_loops;
  uint64_t trace_cur_ns;        /* the opportunity last used ... */
  uint32_t trace_left;          /* ... and the bytes it still carries */
} Link;

void link_init (Link * link, const LinkParams * params, uint64_t seed,
    uint64_t now_ns);
void link_clear (Link * link);
/* Change rate/delay/loss while running (schedule); keeps the queue. A new
 * trace (another trace_ms pointer) starts from its beginning at @now_ns. */
void link_update (Link * link, const LinkParams * params, uint64_t now_ns);
void link_blackout (Link * link, uint64_t until_ns);

/* Takes a copy of the packet when it is queued. */
LinkVerdict link_enqueue (Link * link, const void *data, size_t len,
    uint64_t now_ns);
/* Earliest delivery time of a queued packet, UINT64_MAX if none. */
uint64_t link_next_delivery (const Link * link);
/* The next packet whose delivery time is <= now, or NULL; caller frees. */
LinkPacket *link_dequeue (Link * link, uint64_t now_ns);

/* Deterministic generator shared with the tests. */
double link_random (Link * link);

#endif

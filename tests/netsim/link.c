/* multitcp
 * Copyright (C) 2026 the multitcp authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "link.h"

#include <stdlib.h>
#include <string.h>

#define NS_PER_SEC 1000000000ull
#define NS_PER_MS 1000000ull

double
link_random (Link * link)
{
  /* xorshift64*: fast, seeded, the same sequence on every machine */
  uint64_t x = link->rng;
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  link->rng = x;
  return (double) ((x * 0x2545F4914F6CDD1Dull) >> 11) / (double) (1ull << 53);
}

void
link_init (Link * link, const LinkParams * params, uint64_t seed,
    uint64_t now_ns)
{
  memset (link, 0, sizeof (*link));
  link->p = *params;
  link->rng = seed ? seed : 0x9E3779B97F4A7C15ull;
  link->trace_base_ns = now_ns;
}

void
link_clear (Link * link)
{
  while (link->head) {
    LinkPacket *p = link->head;
    link->head = p->next;
    free (p);
  }
  link->tail = link->depart_cursor = NULL;
  link->backlog_packets = 0;
  link->backlog_bytes = 0;
}

void
link_update (Link * link, const LinkParams * params, uint64_t now_ns)
{
  if (params->trace_ms != link->p.trace_ms ||
      params->trace_len != link->p.trace_len) {
    link->trace_base_ns = now_ns;
    link->trace_pos = 0;
    link->trace_loops = 0;
    link->trace_left = 0;
  }
  link->p = *params;
}

void
link_blackout (Link * link, uint64_t until_ns)
{
  link->blackout_until_ns = until_ns;
}

static int
lose_packet (Link * link)
{
  if (link->p.ge_p_gb > 0) {
    /* state first, then a loss draw in that state */
    if (link->ge_bad) {
      if (link_random (link) < link->p.ge_p_bg)
        link->ge_bad = 0;
    } else if (link_random (link) < link->p.ge_p_gb) {
      link->ge_bad = 1;
    }
    return link_random (link) <
        (link->ge_bad ? link->p.ge_loss_bad : link->p.ge_loss_good);
  }
  return link->p.loss > 0 && link_random (link) < link->p.loss;
}

/* Packets whose serialization has finished no longer count as queued. */
static void
advance_departures (Link * link, uint64_t now_ns)
{
  while (link->depart_cursor && link->depart_cursor->depart_ns <= now_ns) {
    link->backlog_packets--;
    link->backlog_bytes -= link->depart_cursor->len;
    link->depart_cursor = link->depart_cursor->next;
  }
}

/* Takes the first trace opportunity at or after @t that nobody used yet;
 * the ones before @t passed with nothing to send and are lost. */
static uint64_t
trace_next_opportunity (Link * link, uint64_t t)
{
  uint64_t period_ms = link->p.trace_ms[link->p.trace_len - 1];
  uint64_t period_ns = period_ms ? period_ms * NS_PER_MS : NS_PER_MS;

  for (;;) {
    uint64_t at = link->trace_base_ns + link->trace_loops * period_ns +
        link->p.trace_ms[link->trace_pos] * NS_PER_MS;
    link->trace_pos++;
    if (link->trace_pos == link->p.trace_len) {
      link->trace_pos = 0;
      link->trace_loops++;
    }
    if (at >= t)
      return at;
  }
}

/* mahimahi's rule: an opportunity carries LINK_MTU bytes, of several small
 * packets or of part of a big one (which then leaves with the opportunity
 * that carries its last byte). @start is when the packet can begin. */
static uint64_t
trace_departure (Link * link, uint64_t start, size_t len)
{
  uint64_t at = link->trace_cur_ns;
  size_t need = len;

  /* what is left of the opportunity the packet before finished in; only
   * usable when the queue was busy up to that very moment */
  if (link->trace_left > 0 && link->trace_cur_ns >= start) {
    size_t use = need < link->trace_left ? need : link->trace_left;
    need -= use;
    link->trace_left -= use;
  }
  while (need > 0) {
    size_t use = need < LINK_MTU ? need : LINK_MTU;
    at = trace_next_opportunity (link, start);
    link->trace_cur_ns = at;
    link->trace_left = LINK_MTU - use;
    need -= use;
  }
  return at;
}

/* An IPv4 or IPv6 TCP segment with SYN set and ACK clear: a new
 * connection (IPv6 only without extension headers before TCP). */
static int
opens_connection (const unsigned char *p, size_t len)
{
  size_t off;
  int proto;

  if (len < 1)
    return 0;
  if ((p[0] >> 4) == 4) {
    if (len < 20)
      return 0;
    off = (size_t) (p[0] & 0x0f) * 4;
    proto = p[9];
  } else if ((p[0] >> 4) == 6) {
    off = 40;
    proto = len >= 40 ? p[6] : -1;
  } else {
    return 0;
  }
  if (proto != 6 || len < off + 14)
    return 0;
  return (p[off + 13] & 0x12) == 0x02;
}

LinkVerdict
link_enqueue (Link * link, const void *data, size_t len, uint64_t now_ns)
{
  LinkPacket *pkt;
  uint64_t start, depart, deliver;

  link->stats.offered_packets++;
  link->stats.offered_bytes += len;
  if (now_ns < link->blackout_until_ns) {
    link->stats.dropped_blackout++;
    return LINK_DROP_BLACKOUT;
  }
  if (link->p.nat && opens_connection (data, len)) {
    link->stats.dropped_syn++;
    return LINK_DROP_SYN;
  }
  if (lose_packet (link)) {
    link->stats.dropped_loss++;
    return LINK_DROP_LOSS;
  }
  advance_departures (link, now_ns);
  if ((link->p.queue_packets && link->backlog_packets >= link->p.queue_packets)
      || (link->p.queue_bytes &&
          link->backlog_bytes + len > link->p.queue_bytes)) {
    link->stats.dropped_queue++;
    return LINK_DROP_QUEUE;
  }

  start = now_ns > link->last_depart_ns ? now_ns : link->last_depart_ns;
  if (link->p.trace_len > 0)
    depart = trace_departure (link, start, len);
  else if (link->p.rate_bps > 0)
    depart = start + (uint64_t) len * 8 * NS_PER_SEC / link->p.rate_bps;
  else
    depart = start;
  link->last_depart_ns = depart;
  deliver = depart + link->p.delay_ns;
  /* a link delivers in order, even when its delay shrinks */
  if (link->tail && deliver < link->tail->deliver_ns)
    deliver = link->tail->deliver_ns;

  pkt = malloc (sizeof (LinkPacket) + len);
  if (!pkt)
    return LINK_DROP_QUEUE;
  pkt->next = NULL;
  pkt->depart_ns = depart;
  pkt->deliver_ns = deliver;
  pkt->enqueue_ns = now_ns;
  pkt->len = len;
  memcpy (pkt->data, data, len);
  if (link->tail)
    link->tail->next = pkt;
  else
    link->head = pkt;
  link->tail = pkt;
  if (!link->depart_cursor)
    link->depart_cursor = pkt;
  link->backlog_packets++;
  link->backlog_bytes += len;
  return LINK_QUEUED;
}

uint64_t
link_next_delivery (const Link * link)
{
  return link->head ? link->head->deliver_ns : UINT64_MAX;
}

LinkPacket *
link_dequeue (Link * link, uint64_t now_ns)
{
  LinkPacket *pkt = link->head;
  uint64_t sojourn;

  if (!pkt || pkt->deliver_ns > now_ns)
    return NULL;
  advance_departures (link, now_ns);
  if (link->depart_cursor == pkt) {
    /* cannot happen: delivery is after departure; keep the count exact */
    link->backlog_packets--;
    link->backlog_bytes -= pkt->len;
    link->depart_cursor = pkt->next;
  }
  link->head = pkt->next;
  if (!link->head)
    link->tail = NULL;
  link->stats.forwarded_packets++;
  link->stats.forwarded_bytes += pkt->len;
  sojourn = pkt->depart_ns - pkt->enqueue_ns;
  link->stats.queue_delay_sum_ns += sojourn;
  if (sojourn > link->stats.queue_delay_max_ns)
    link->stats.queue_delay_max_ns = sojourn;
  return pkt;
}

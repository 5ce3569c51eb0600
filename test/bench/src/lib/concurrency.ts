/**
 * Slots per consumer process, the same for every queue-backed system in every
 * scenario: Tasklane's PUSH worker (WORKER_CONCURRENCY; its default is 100),
 * its SDK Worker (PULL) and BullMQ's Worker.
 *
 * With no-op handlers, slots are what covers each consumer's round trips
 * (Little's law). The SDK Worker holds a slot from the lease call that asks
 * for it until its handler is done: 100 slots over a ~35 ms lease-and-run
 * cycle capped s1 PULL near 2,900 tasks/s, and one 100-task call asked for
 * every slot, so no second call ever went out; at 300 three calls overlap and
 * PULL runs until the machine's CPU is spent (2,482 / 2,843 tasks/s at 100,
 * 3,214 / 3,139 at 300). The PUSH worker starts a batch of the slots freed
 * while its last start statement was out: at 300 its start statements carry
 * ~50 tasks instead of ~24, a quarter less of Postgres's CPU per started task
 * (s1 PUSH, alternating runs: 6,450 / 6,460 tasks/s at 100, 7,470 / 7,700 at
 * 300).
 * BullMQ's Worker runs as fast at either (18,730 / 18,170 at 300, 18,400 /
 * 18,470 at 100). The other peers are set up for throughput their own way
 * (pg-boss: 4 × 2,000 jobs per fetch; graphile-worker batched: a local queue).
 * At 1,000 tasks/s (s3, s4) few slots are in use at once.
 */
export const CONSUMER_CONCURRENCY = 300;

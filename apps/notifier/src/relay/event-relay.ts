/**
 * The task-event relay: tails task_events in id order and publishes the events
 * of tenants with live subscribers (EventListenerRegistry) on their tenant's
 * Redis channel, where every gateway fans them out to GraphQL subscribers.
 * Other tenants' events are walked over, not read out, and while no tenant
 * listens at all the relay does not walk: it passes to a settled horizon.
 *
 * Exactly one relay publishes at a time, so events leave in one order: each
 * notifier opens a dedicated Postgres session and tries
 * pg_try_advisory_lock; the holder relays, the others stand by and retry
 * every second. The lock belongs to the session, so when the active notifier
 * dies (or its connection does) Postgres releases it and a standby takes over
 * from the persisted cursor. Publishing happens before the cursor moves:
 * a crash in between re-publishes a batch (gateways drop ids they have seen),
 * it never skips one.
 */
import type { Logger } from "@tasklane/config";
import {
  loadRelayCursor,
  openRelayConnection,
  planRelayWindow,
  readEventHorizon,
  readTaskEventsAfter,
  readTaskEventsBetween,
  saveRelayCursor,
  snapshotSettled,
  type EventHorizon,
  type PendingGap,
  type RelayConnection,
  type TaskEventRow,
} from "@tasklane/db";
import { EventListenerRegistry, publishTaskEvents, taskEventMessageOf, type KeySpace, type RedisClient } from "@tasklane/queue";
import type { RelayMetrics } from "./relay-metrics.js";
import { Sleeper } from "./sleeper.js";

export interface EventRelayOptions {
  databaseUrl: string;
  /** Publishing connection (not a subscriber). */
  redis: RedisClient;
  keys: KeySpace;
  log: Logger;
  metrics: RelayMetrics;
  /**
   * Poll interval while caught up. Polling a primary-key range is cheap, and
   * 50 ms keeps subscribers within ~50 ms of a commit without a trigger on
   * the hottest table.
   * @defaultValue 50
   */
  idleMs?: number;
  /**
   * Poll interval while caught up and no tenant listens, when `wakeups` is
   * given: nobody waits for these events, and idle, the 50 ms polls were
   * half of an idle notifier's CPU. A gateway marking a first listener
   * announces it, which ends the wait at once (EventListenerRegistry).
   * @defaultValue 1000 (idleMs without `wakeups`)
   */
  unlistenedIdleMs?: number;
  /** A dedicated connection the relay subscribes on to hear of newly marked listeners; its owner disconnects it after stop(). */
  wakeups?: RedisClient;
  /** Events per read while draining a backlog. @defaultValue 500 */
  batchSize?: number;
  /** How often a standby retries the lock, and the pause after an error. @defaultValue 1000 */
  standbyMs?: number;
  /**
   * Longest wait on a hole in the ids whose transactions have not all ended
   * (see relay-window.ts). Only a long-running writer holds a hole that long;
   * past this the relay steps over it rather than stall every tenant's feed.
   * @defaultValue 10000
   */
  maxGapWaitMs?: number;
  /** Where the relay learns which tenants have live subscribers. @defaultValue an EventListenerRegistry on `redis` */
  listeners?: Pick<EventListenerRegistry, "listening">;
  /** Postgres application_name of the relay session; carries the pid so operators (and tests) can tell which process relays. */
  applicationName?: string;
}

export interface EventRelay {
  /** Whether this process holds the relay lock right now. */
  readonly active: boolean;
  stop(): Promise<void>;
}

export function startEventRelay(opts: EventRelayOptions): EventRelay {
  const idleMs = opts.idleMs ?? 50;
  const batchSize = opts.batchSize ?? 500;
  const standbyMs = opts.standbyMs ?? 1_000;
  const maxGapWaitMs = opts.maxGapWaitMs ?? 10_000;
  const sleeper = new Sleeper();
  const registry = opts.listeners ?? new EventListenerRegistry(opts.redis, opts.keys);
  const unlistenedIdleMs = opts.wakeups ? (opts.unlistenedIdleMs ?? 1_000) : idleMs;
  // Never awaited: with Redis unreachable the subscription waits for it, and the relay
  // still finds a new listener at its next slow poll. Disconnecting `wakeups` ends it.
  if (opts.wakeups) {
    EventListenerRegistry.onNewListeners(opts.wakeups, opts.keys, () => sleeper.wake()).catch((error: unknown) => {
      opts.log.warn({ err: error }, "could not subscribe to new-listener announcements; polling only");
    });
  }
  let stopped = false;
  let active = false;

  async function relayWhileHeld(conn: RelayConnection): Promise<void> {
    let cursor = await loadRelayCursor(conn.client);
    let gap: PendingGap | null = null;
    /** While nobody listens: the newest event and the snapshot it was seen in, where the cursor goes once that snapshot settles. */
    let horizon: (EventHorizon & { seenAtMs: number }) | null = null;
    let listening = await registry.listening();
    opts.log.info({ cursor: cursor.toString() }, "event relay active");

    /** A window of events after the cursor, read and planned (relay-window.ts): what to publish, where the cursor goes. */
    async function walk(): Promise<{ publish: TaskEventRow[]; cursor: bigint; inFull: boolean; backlog: boolean }> {
      // Settled is checked before the read: a writer that ends in between is then visible to the read.
      const gapSettled = gap === null ? false : await snapshotSettled(conn.client, gap.snapshot);
      const read = await readTaskEventsAfter(conn.client, cursor, batchSize, [...listening]);
      const plan = planRelayWindow({ cursor, rows: read.rows, snapshot: read.snapshot, gap, gapSettled, maxGapWaitMs, nowMs: Date.now() });
      for (const s of plan.skipped) {
        const ids = { from: s.from.toString(), to: s.to.toString() };
        if (s.forced) opts.log.warn(ids, "event ids still unsettled after the wait limit; stepped over (subscribers may miss them)");
        else opts.log.debug(ids, "stepped over event ids that were never committed");
      }
      if (plan.gap !== null && gap === null) opts.log.debug({ from: plan.gap.from.toString(), to: plan.gap.to.toString() }, "waiting on uncommitted event ids");
      gap = plan.gap;
      // A full window read to its end means a backlog: read again at once.
      return { publish: plan.publish, cursor: plan.cursor, inFull: read.inFull, backlog: read.windowSize === batchSize && gap === null };
    }

    /**
     * While nobody listens the events need not be read, only passed: the
     * cursor moves to the horizon taken one poll earlier once its snapshot
     * has settled (readEventHorizon), whatever lies in between. Walking
     * them cost Postgres ~2 µs an event (three a task) and the notifier a
     * statement per 5,000. Null when the horizon has not settled for
     * maxGapWaitMs (a long transaction holds it): then the relay walks, and
     * steps over that transaction's ids as it does over any hole.
     */
    async function pass(): Promise<bigint | null> {
      let target = cursor;
      if (horizon !== null) {
        if (await snapshotSettled(conn.client, horizon.snapshot)) {
          if (horizon.maxId > target) target = horizon.maxId;
          horizon = null;
        } else if (Date.now() - horizon.seenAtMs >= maxGapWaitMs) {
          return null;
        }
      }
      horizon ??= { ...(await readEventHorizon(conn.client)), seenAtMs: Date.now() };
      return target;
    }

    while (!stopped) {
      const passed = listening.size === 0 && gap === null ? await pass() : null;
      // Walking: a horizon taken meanwhile is stale by the time nobody listens again.
      if (passed === null) horizon = null;
      const step = passed === null ? await walk() : { publish: [], cursor: passed, inFull: false, backlog: false };
      // Marks read after the events: a subscription that went live before one of them was committed is marked by now.
      const nowListening = await registry.listening();
      // A window read in full holds every tenant's events already.
      const added = step.inFull ? [] : [...nowListening].filter((t) => !listening.has(t));
      listening = nowListening;
      opts.metrics.listeningTenants.set(listening.size);
      const late = await readTaskEventsBetween(conn.client, cursor, step.cursor, added);
      const rows = late.length === 0 ? step.publish : [...step.publish, ...late].sort((a, b) => (BigInt(a.id) < BigInt(b.id) ? -1 : 1));
      const messages = rows.flatMap((row) => taskEventMessageOf(row) ?? []);
      await publishTaskEvents(opts.redis, opts.keys, messages);
      opts.metrics.relayed.inc(messages.length);
      if (messages.length > 0) opts.log.debug({ count: messages.length, through: step.cursor.toString() }, "task events relayed");
      if (step.cursor !== cursor) {
        await saveRelayCursor(conn.client, step.cursor);
        cursor = step.cursor;
      }
      const last = rows.at(-1);
      if (last !== undefined) opts.metrics.lagSeconds.set(Math.max(0, (Date.now() - last.at.getTime()) / 1000));
      if (!step.backlog) await sleeper.sleep(listening.size === 0 ? unlistenedIdleMs : idleMs);
    }
  }

  const done = (async () => {
    while (!stopped) {
      let conn: RelayConnection | undefined;
      try {
        conn = await openRelayConnection(opts.databaseUrl, opts.applicationName ?? `tasklane-event-relay/${process.pid}`);
        while (!stopped && !(await conn.tryLock())) await sleeper.sleep(standbyMs);
        if (stopped) break;
        active = true;
        opts.metrics.active.set(1);
        await relayWhileHeld(conn);
      } catch (error: unknown) {
        opts.log.warn({ err: error, wasActive: active }, "event relay interrupted; will retry");
      } finally {
        active = false;
        opts.metrics.active.set(0);
        // Ending the session releases the advisory lock for a standby.
        await conn?.close();
      }
      if (!stopped) await sleeper.sleep(standbyMs);
    }
  })();

  return {
    get active() {
      return active;
    },
    async stop() {
      stopped = true;
      sleeper.wake();
      await done;
    },
  };
}

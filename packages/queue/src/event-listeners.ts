/**
 * Which tenants have live task-event subscribers, so the notifier's relay
 * reads and publishes only their events: most tenants never open a
 * subscription, and relaying every event of every task cost the notifier
 * 30-40 µs of CPU per task (and Postgres a probe per event) for nobody.
 *
 * Gateways mark a tenant (a sorted set scored by expiry, on Redis's clock)
 * before they SUBSCRIBE its channel and refresh the mark while a subscriber
 * stays; the relay reads the marks after each read of task_events. An event
 * committed after a subscription went live was committed after the mark, so
 * the relay, reading marks after the events, sees the mark (event-relay.ts
 * then reads back what the window held for a newly marked tenant). One key,
 * single-key scripts: legal on a Redis Cluster, where `PUBSUB NUMSUB` only
 * answers for the node asked.
 */
import type { RedisClient } from "./connection.js";
import type { KeySpace } from "./naming.js";
import { luaScript } from "./scripts/load-scripts.js";

/** How long a mark holds without a refresh: a gateway that died stops costing the relay after this. */
export const EVENT_LISTENER_TTL_MS = 30_000;
/** Gateways refresh their marks this often: a third of the TTL, so two refreshes can fail before a mark lapses. */
export const EVENT_LISTENER_REFRESH_MS = 10_000;

interface ListenerCommands {
  tasklaneRegisterEventListeners(key: string, ttlMs: number, addedChannel: string, ...tenantIds: string[]): Promise<number>;
  tasklaneListeningTenants(key: string): Promise<string[]>;
}

function hasListenerCommands(redis: RedisClient): redis is RedisClient & ListenerCommands {
  return "tasklaneRegisterEventListeners" in redis && "tasklaneListeningTenants" in redis;
}

export class EventListenerRegistry {
  private readonly redis: RedisClient & ListenerCommands;

  constructor(
    redis: RedisClient,
    private readonly keys: KeySpace,
    private readonly ttlMs = EVENT_LISTENER_TTL_MS,
  ) {
    if (!hasListenerCommands(redis)) {
      redis.defineCommand("tasklaneRegisterEventListeners", { numberOfKeys: 1, lua: luaScript("register-event-listeners") });
      redis.defineCommand("tasklaneListeningTenants", { numberOfKeys: 1, lua: luaScript("listening-tenants") });
    }
    if (!hasListenerCommands(redis)) throw new Error("ioredis did not define the event-listener commands");
    this.redis = redis;
  }

  /**
   * Marks these tenants as listened to for the next ttlMs (a gateway calls
   * this before it subscribes, and to refresh); answers how many were not
   * marked before, which the script also announces (onNewListeners).
   */
  async register(tenantIds: readonly string[]): Promise<number> {
    if (tenantIds.length === 0) return 0;
    return this.redis.tasklaneRegisterEventListeners(this.keys.eventListeners, this.ttlMs, this.keys.eventListenersAddedChannel, ...tenantIds);
  }

  /**
   * Calls `onAdded` whenever a gateway marks a tenant that was not marked
   * before. `subscriber` becomes a subscriber connection (Redis allows no
   * other commands on it): pass a dedicated one. Resolves once subscribed;
   * the function it answers unsubscribes.
   */
  static async onNewListeners(subscriber: RedisClient, keys: KeySpace, onAdded: () => void): Promise<() => Promise<void>> {
    const channel = keys.eventListenersAddedChannel;
    const handler = (from: string) => {
      if (from === channel) onAdded();
    };
    subscriber.on("message", handler);
    await subscriber.subscribe(channel);
    return async () => {
      subscriber.off("message", handler);
      await subscriber.unsubscribe(channel);
    };
  }

  /** The tenants marked now. */
  async listening(): Promise<Set<string>> {
    return new Set(await this.redis.tasklaneListeningTenants(this.keys.eventListeners));
  }
}

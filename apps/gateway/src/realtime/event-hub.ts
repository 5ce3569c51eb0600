/**
 * The gateway's end of the task-event feed: one Redis subscriber connection
 * per process (shared with the pull doorbell), fanned out in-process to every
 * GraphQL subscription. A tenant's channel is subscribed while at least one
 * local subscriber of that tenant exists, so a gateway only receives the
 * tenants it serves.
 *
 * The relay publishes only the events of tenants marked as listened to
 * (EventListenerRegistry): a feed marks its tenant before it subscribes and
 * refreshes the mark while it lasts.
 *
 * Isolation does not rest on the channel name alone: a message is handed
 * only to listeners registered for the channel it arrived on, and only if
 * its own tenantId is that channel's tenant.
 */
import { EVENT_LISTENER_REFRESH_MS, decodeTaskEvents, type EventListenerRegistry, type KeySpace, type TaskEventMessage } from "@tasklane/queue";
import type { TaskRecord } from "@tasklane/db";
import type { Logger } from "../observability/logger.js";

/** One event as local subscribers see it. */
export interface HubEvent {
  readonly message: TaskEventMessage;
  /**
   * The task as it is now (it may have moved past this event), loaded once
   * however many local subscriptions ask within LOADED_TASK_KEEP_MS; null
   * when it is gone. A subscription that asks later loads it again.
   */
  task(): Promise<TaskRecord | null>;
}

export type HubListener = (event: HubEvent) => void;

/**
 * How long an event keeps the task it loaded for the subscriptions still to
 * ask. Without a bound, a stalled subscription's waiting events (up to
 * 10,000) kept every task a reading subscription had loaded for them, bodies
 * and all, until keep-alive ended its socket (12-24 s): a stalled and a
 * reading subscriber of 200 KiB tasks took a gateway's RSS from 239 to
 * 427 MB. Subscriptions in step ask within milliseconds; one further behind
 * reads the task again.
 */
export const LOADED_TASK_KEEP_MS = 1_000;

/** What the hub needs of its Redis connection (an ioredis client in subscriber mode). */
export interface PubSubConnection {
  on(event: "message", listener: (channel: string, message: string) => void): unknown;
  subscribe(channel: string): Promise<unknown>;
  unsubscribe(channel: string): Promise<unknown>;
}

export type TaskLoader = (tenantId: string, taskId: string) => Promise<TaskRecord | null>;

/** What the hub needs of the registry: marking its tenants as listened to. */
export type ListenerMarks = Pick<EventListenerRegistry, "register">;

interface TenantFeed {
  readonly tenantId: string;
  readonly listeners: Set<HubListener>;
  /** Resolves once the tenant is marked and Redis confirmed the SUBSCRIBE. */
  readonly ready: Promise<unknown>;
  /** Highest event id handed out: the relay re-publishes a batch after a crash, subscribers see it once. */
  lastEventId: bigint;
}

export class TaskEventHub {
  readonly #feeds = new Map<string, TenantFeed>();
  #closed = false;
  readonly #refresh: NodeJS.Timeout;
  readonly #sweep: NodeJS.Timeout;
  /** Events holding a loaded task, oldest first, each with when it was loaded. */
  readonly #loaded: Array<{ at: number; forget(): void }> = [];

  constructor(
    private readonly subscriber: PubSubConnection,
    private readonly keys: KeySpace,
    private readonly loadTask: TaskLoader,
    private readonly log: Logger,
    private readonly marks: ListenerMarks,
    refreshMs = EVENT_LISTENER_REFRESH_MS,
    private readonly keepLoadedMs = LOADED_TASK_KEEP_MS,
  ) {
    subscriber.on("message", (channel: string, payload: string) => this.#dispatch(channel, payload));
    this.#refresh = setInterval(() => void this.#refreshMarks(), refreshMs).unref();
    this.#sweep = setInterval(() => this.#forgetLoaded(), keepLoadedMs).unref();
  }

  /** Registers `listener` for one tenant's events; resolves when the feed is live. Call the result to stop. */
  async listen(tenantId: string, listener: HubListener): Promise<() => void> {
    if (this.#closed) throw new Error("event hub is closed");
    const channel = this.keys.eventsChannel(tenantId);
    let feed = this.#feeds.get(channel);
    if (feed === undefined) {
      // Marked before subscribing: once listen() resolves, every later event is relayed (event-listeners.ts).
      const ready = this.marks.register([tenantId]).then(() => this.subscriber.subscribe(channel));
      feed = { tenantId, listeners: new Set(), ready, lastEventId: 0n };
      this.#feeds.set(channel, feed);
    }
    feed.listeners.add(listener);
    const current = feed;
    try {
      await current.ready;
    } catch (error: unknown) {
      this.#remove(channel, current, listener);
      throw new Error(`could not subscribe to task events of ${tenantId}`, { cause: error });
    }
    let removed = false;
    return () => {
      if (removed) return;
      removed = true;
      this.#remove(channel, current, listener);
    };
  }

  /** Local subscriptions right now, for metrics and tests. */
  get listenerCount(): number {
    let n = 0;
    for (const feed of this.#feeds.values()) n += feed.listeners.size;
    return n;
  }

  close(): void {
    this.#closed = true;
    clearInterval(this.#refresh);
    clearInterval(this.#sweep);
    this.#loaded.length = 0;
    this.#feeds.clear();
  }

  async #refreshMarks(): Promise<void> {
    const tenants = [...this.#feeds.values()].map((f) => f.tenantId);
    try {
      await this.marks.register(tenants);
    } catch (error: unknown) {
      // A mark outlives two failed refreshes; the next one may well succeed.
      this.log.warn({ err: error, tenants: tenants.length }, "could not refresh the task-event listener marks");
    }
  }

  #forgetLoaded(): void {
    const cutoff = Date.now() - this.keepLoadedMs;
    let n = 0;
    while (n < this.#loaded.length && (this.#loaded[n] as { at: number }).at <= cutoff) n += 1;
    for (const loaded of this.#loaded.splice(0, n)) loaded.forget();
  }

  #remove(channel: string, feed: TenantFeed, listener: HubListener): void {
    feed.listeners.delete(listener);
    if (feed.listeners.size > 0 || this.#feeds.get(channel) !== feed) return;
    this.#feeds.delete(channel);
    // Redis runs this connection's commands in order, so a SUBSCRIBE issued after this still wins.
    this.subscriber.unsubscribe(channel).catch((error: unknown) => this.log.debug({ err: error, channel }, "unsubscribe failed"));
  }

  #dispatch(channel: string, payload: string): void {
    const feed = this.#feeds.get(channel);
    if (feed === undefined) return;
    const messages = decodeTaskEvents(payload);
    if (messages === null || messages.some((m) => m.tenantId !== feed.tenantId)) {
      this.log.warn({ channel }, "dropped a malformed or misaddressed task event message");
      return;
    }
    for (const message of messages) {
      const id = BigInt(message.eventId);
      if (id <= feed.lastEventId) continue;
      feed.lastEventId = id;
      let loading: Promise<TaskRecord | null> | undefined;
      const event: HubEvent = {
        message,
        task: () => {
          if (loading === undefined) {
            loading = this.loadTask(message.tenantId, message.taskId);
            this.#loaded.push({ at: Date.now(), forget: () => (loading = undefined) });
          }
          return loading;
        },
      };
      for (const listener of feed.listeners) listener(event);
    }
  }
}

/**
 * How many subscription events one gateway resolves at once: at most
 * EVENT_EXECUTIONS_PER_TENANT of one tenant's and EVENT_EXECUTIONS_PER_GATEWAY
 * in all; the rest wait their turn, first come first served (a tenant at its
 * share does not hold up another's).
 *
 * Why: every subscription resolves its own selection for every event, all
 * at once. Each event's answer is bounded (its bodies share one 4 MiB answer
 * budget, as a query's do), but 30 `workflowUpdated { tasks { task { payload
 * } } }` subscriptions on one connection over a workflow of 20 × 200 KiB
 * payloads built 30 × 4 MiB together per event and piled them onto the
 * socket at once (past its 8 MiB, socket-output-limit.ts: closed, though its
 * reader was reading). Queries are held to the tenant's share of the pool
 * (TENANT_POOL_SHARE); events were not. They are not refused either: a
 * waiting event waits (its stream keeps at most 10,000 events behind it,
 * event-stream.ts), since a refusal would be an event lost.
 *
 * A wait holds no slot: a subscription asks for one only once its next event
 * has arrived, and gives it back once that event's result is built, before
 * it is serialised and sent.
 */
import { createSourceEventStream, execute, type ExecutionArgs, type ExecutionResult } from "graphql";

/** Events of one tenant resolved at once on one gateway. */
export const EVENT_EXECUTIONS_PER_TENANT = 2;
/** Events resolved at once on one gateway, all tenants together (each up to a 4 MiB answer, held a few times over). */
export const EVENT_EXECUTIONS_PER_GATEWAY = 8;

interface Waiter {
  readonly tenant: string;
  readonly start: () => void;
}

export class EventExecutions {
  readonly #perTenant: number;
  readonly #perGateway: number;
  readonly #running = new Map<string, number>();
  #total = 0;
  /** Every waiting event, in arrival order; granted in that order as far as each one's tenant has room. */
  readonly #waiting: Waiter[] = [];

  constructor(perTenant = EVENT_EXECUTIONS_PER_TENANT, perGateway = EVENT_EXECUTIONS_PER_GATEWAY) {
    this.#perTenant = perTenant;
    this.#perGateway = perGateway;
  }

  /** Events resolving and waiting now (tests, diagnostics). */
  get load(): { running: number; waiting: number } {
    return { running: this.#total, waiting: this.#waiting.length };
  }

  /** Runs `resolve` once `tenant` and the gateway have room for one more event. */
  async run<T>(tenant: string, resolve: () => Promise<T> | T): Promise<T> {
    // Others' waiters are ones whose tenant is at its share: this one may pass them, never its own tenant's.
    if (this.#hasRoom(tenant) && !this.#waiting.some((w) => w.tenant === tenant)) {
      this.#take(tenant);
    } else {
      await new Promise<void>((start) => this.#waiting.push({ tenant, start }));
    }
    try {
      return await resolve();
    } finally {
      this.#release(tenant);
    }
  }

  #hasRoom(tenant: string): boolean {
    return this.#total < this.#perGateway && (this.#running.get(tenant) ?? 0) < this.#perTenant;
  }

  #take(tenant: string): void {
    this.#total += 1;
    this.#running.set(tenant, (this.#running.get(tenant) ?? 0) + 1);
  }

  #release(tenant: string): void {
    this.#total -= 1;
    const left = (this.#running.get(tenant) ?? 1) - 1;
    if (left === 0) this.#running.delete(tenant);
    else this.#running.set(tenant, left);
    // The first waiters whose tenant has room: a tenant at its share leaves its later events waiting, not others'.
    for (let i = 0; i < this.#waiting.length && this.#total < this.#perGateway; ) {
      const waiter = this.#waiting[i] as Waiter;
      if (!this.#hasRoom(waiter.tenant)) {
        i += 1;
        continue;
      }
      this.#waiting.splice(i, 1);
      this.#take(waiter.tenant);
      waiter.start();
    }
  }
}

type SubscriptionResult = ExecutionResult | AsyncGenerator<ExecutionResult, void, void>;

/**
 * graphql-js's subscribe, but each event's selection is resolved within
 * `executions` (graphql-js resolves it with execute({ ...args, rootValue:
 * event }), as here). A hand-written iterator, as event-stream.ts's:
 * graphql-ws's return() reaches the source stream at once.
 */
export async function subscribeWithin(executions: EventExecutions, tenant: string, args: ExecutionArgs): Promise<SubscriptionResult> {
  const stream = await createSourceEventStream(args);
  if (!(Symbol.asyncIterator in stream)) return stream;
  const source = stream[Symbol.asyncIterator]();
  const end = async (): Promise<IteratorResult<ExecutionResult, void>> => {
    await source.return?.();
    return { done: true, value: undefined };
  };
  const events: AsyncGenerator<ExecutionResult, void, void> = {
    async next() {
      const event = await source.next();
      if (event.done === true) return { done: true, value: undefined };
      return { done: false, value: await executions.run(tenant, () => execute({ ...args, rootValue: event.value })) };
    },
    return: end,
    async throw(error: unknown) {
      await end();
      throw error;
    },
    [Symbol.asyncIterator]() {
      return events;
    },
  };
  return events;
}

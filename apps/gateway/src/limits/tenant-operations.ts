/**
 * Runs each GraphQL operation of a tenant within its share of this gateway
 * (tenant-concurrency.ts): the compiled executor wraps every HTTP operation
 * (a batch's each on its own) and ws.ts every WebSocket operation, including a
 * subscription's initial work (its subscribe resolver), not its later events.
 *
 * An operation holds its slot from the start of execution to its end, except
 * while it sleeps inside `outsideSlot` (a leaseTasks long poll waiting for
 * work, lease-service.ts): a
 * tenant's pollers would otherwise hold every slot while idle and lock out its
 * own submissions. The slot is found through AsyncLocalStorage because one
 * HTTP batch shares one context between operations that each hold a slot.
 *
 * Operator calls and anonymous requests are nobody's share and run at once.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { RateLimitedError } from "@tasklane/core";
import type { GraphQLError } from "graphql";
import type { Principal } from "../auth/principal.js";
import { toGraphQLError } from "../graphql/errors.js";
import { ConcurrencyRefusal, RETRY_AFTER_SECONDS, type TenantGate } from "./tenant-concurrency.js";

const currentSlot = new AsyncLocalStorage<OperationSlot>();

function refusal(): GraphQLError {
  return toGraphQLError(new RateLimitedError(RETRY_AFTER_SECONDS));
}

/** Acquires from the gate; a refusal becomes the contract's RATE_LIMITED (429, Retry-After). */
async function acquire(gate: TenantGate, key: string): Promise<void> {
  try {
    await gate.acquire(key);
  } catch (error: unknown) {
    if (error instanceof ConcurrencyRefusal) throw refusal();
    throw error;
  }
}

/** One operation's slot. Several root fields of one operation share it. */
class OperationSlot {
  #held = true;
  #ended = false;
  #left = false;
  #idle = 0;
  #regaining: Promise<void> | undefined;

  constructor(
    private readonly gate: TenantGate,
    private readonly key: string,
  ) {}

  /** Gives the slot back while `sleep` runs (the first of concurrent sleepers does), and takes it again before returning. */
  async idle<T>(sleep: () => Promise<T>): Promise<T> {
    if (this.#idle++ === 0 && this.#held && !this.#ended) {
      this.#held = false;
      this.gate.release(this.key);
    }
    let result: T;
    try {
      result = await sleep();
    } finally {
      this.#idle -= 1;
    }
    // Refused (waited too long): nothing was leased while asleep, so RATE_LIMITED is safe to answer.
    await this.#regain();
    return result;
  }

  #regain(): Promise<void> {
    if (this.#held || this.#ended || this.#left) return Promise.resolve();
    this.#regaining ??= acquire(this.gate, this.key)
      .then(() => {
        // The operation ended meanwhile (graphql-js returns as soon as an error nulls the whole answer).
        if (this.#ended || this.#left) this.gate.release(this.key);
        else this.#held = true;
      })
      .finally(() => {
        this.#regaining = undefined;
      });
    return this.#regaining;
  }

  /** Gives the slot up for the rest of the operation (see leaveSlot). */
  leave(): void {
    this.#left = true;
    if (!this.#held) return;
    this.#held = false;
    this.gate.release(this.key);
  }

  end(): void {
    this.#ended = true;
    if (!this.#held) return;
    this.#held = false;
    this.gate.release(this.key);
  }
}

export class TenantOperations {
  constructor(readonly gate: TenantGate) {}

  /**
   * Runs `operation` once the principal's tenant has a free slot; `refused`
   * answers instead (nothing ran) when the tenant's queue is full or the wait
   * too long.
   */
  async run<T>(principal: Principal, operation: () => Promise<T> | T, refused: (error: GraphQLError) => T): Promise<T> {
    if (principal.kind !== "tenant") return operation();
    try {
      await this.gate.acquire(principal.tenantId);
    } catch (error: unknown) {
      if (error instanceof ConcurrencyRefusal) return refused(refusal());
      throw error;
    }
    const slot = new OperationSlot(this.gate, principal.tenantId);
    try {
      return await currentSlot.run(slot, operation);
    } finally {
      slot.end();
    }
  }
}

/**
 * Gives the current operation's slot up for the rest of it, for work whose
 * use of Postgres is bounded per tenant already: a submission goes through
 * the SubmitCoalescer, which runs at most a few statements per tenant lane
 * and merges the rest. Held by each submission, the slots capped how many
 * could wait to be merged: 32 submitTask calls in flight went at half the
 * rate with 3 slots as with 10 (bench s2).
 */
export function leaveSlot(): void {
  currentSlot.getStore()?.leave();
}

/**
 * Runs `sleep` without the current operation's slot (a long poll's wait for
 * work); outside any operation it just runs it. May reject with RATE_LIMITED
 * when the slot cannot be had back in time.
 */
export function outsideSlot<T>(sleep: () => Promise<T>): Promise<T> {
  const slot = currentSlot.getStore();
  return slot === undefined ? sleep() : slot.idle(sleep);
}

/**
 * The suite's GraphQL client: raw fetch, so every answer's HTTP status and
 * error code can be recorded (the typed-error checks need them), with a
 * bounded retry loop for clients that keep submitting through an outage.
 */
import { sleep } from "./wait.js";

export interface GqlAnswer<T> {
  status: number;
  data?: T | null;
  errors?: { message: string; extensions?: { code?: string; retryAfterSeconds?: number } }[];
  /** Set when no HTTP answer came at all (connection refused or reset). */
  networkError?: string;
}

export async function gql<T>(url: string, query: string, variables: Record<string, unknown>, token?: string, timeoutMs = 30_000): Promise<GqlAnswer<T>> {
  try {
    const res = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: JSON.stringify({ query, variables }),
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = await res.text();
    try {
      const body = JSON.parse(text) as { data?: T | null; errors?: GqlAnswer<T>["errors"] };
      return { status: res.status, ...body };
    } catch {
      return { status: res.status, errors: [{ message: `non-JSON answer: ${text.slice(0, 200)}` }] };
    }
  } catch (error) {
    return { status: 0, networkError: error instanceof Error ? `${error.name}: ${error.message}` : String(error) };
  }
}

/** What each failed answer looked like, for the report: "503 OVERLOADED", "500 INTERNAL_SERVER_ERROR", "network". */
export type ErrorTally = Map<string, number>;

export const describeFailure = (a: GqlAnswer<unknown>) =>
  a.networkError !== undefined ? "network (connection refused/reset)" : `${a.status} ${a.errors?.[0]?.extensions?.code ?? "no code"}${a.errors?.[0]?.extensions?.retryAfterSeconds !== undefined ? " +retryAfter" : ""}`;

/**
 * Repeats one operation until it answers without errors (bounded by count and
 * time); every failure is tallied. Safe only for idempotent operations
 * (submissions carry idempotency keys).
 */
export async function untilAnswered<T>(call: () => Promise<GqlAnswer<T>>, tally: ErrorTally, what: string, maxMs = 120_000): Promise<T> {
  const deadline = Date.now() + maxMs;
  for (let i = 0; ; i++) {
    const a = await call();
    if (a.data && !a.errors) return a.data;
    const kind = describeFailure(a);
    tally.set(kind, (tally.get(kind) ?? 0) + 1);
    if (Date.now() > deadline) throw new Error(`${what}: no answer within ${maxMs} ms; last ${kind} ${JSON.stringify(a.errors ?? a.networkError).slice(0, 300)}`);
    const advice = a.errors?.[0]?.extensions?.retryAfterSeconds;
    await sleep(Math.min(1_000, typeof advice === "number" ? advice * 1000 : 100 * Math.min(i + 1, 5)));
  }
}

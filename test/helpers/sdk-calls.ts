/**
 * What the SDK tests ask of a call: the TasklaneError it rejects with, and a
 * fetch that loses the answers of chosen operations (the gateway did the work;
 * the connection reset on the way back), to see whether the SDK sends a call
 * again after an ambiguous failure.
 */
import { TasklaneError, type FetchLike } from "@tasklane/sdk";

/** The TasklaneError `promise` rejects with; anything else (or no rejection) fails the test. */
export async function sdkRejection(promise: Promise<unknown>): Promise<TasklaneError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof TasklaneError)) throw new Error(`expected a TasklaneError, got ${String(error)}`);
  return error;
}

/**
 * A fetch that sends every request and, for a GraphQL document whose text
 * matches `operation` (every request when omitted), reads the answer, runs
 * `meanwhile` (what happens while the answer is on its way) and throws the
 * reset undici throws. `sent()` counts the requests it lost.
 */
export function losingAnswers(operation?: RegExp, meanwhile?: (lost: number) => Promise<void>): { fetch: FetchLike; sent: () => number } {
  let lost = 0;
  const fetchLike: FetchLike = async (input, init) => {
    const res = await fetch(input, init);
    if (operation !== undefined && !operation.test((JSON.parse(String(init.body)) as { query: string }).query)) return res;
    lost += 1;
    await res.text();
    await meanwhile?.(lost);
    throw new TypeError("fetch failed", { cause: Object.assign(new Error("socket hang up"), { code: "ECONNRESET" }) });
  };
  return { fetch: fetchLike, sent: () => lost };
}

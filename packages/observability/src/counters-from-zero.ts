import type { Counter } from "prom-client";

/**
 * Reports a counter's known label values at 0 from the start. A series that
 * appears only at its first increment has no sample before it, so rate() and
 * increase() miss that first increment and a dashboard shows "no data" rather
 * than 0 until something happens. Only for label sets fixed in code (outcomes,
 * kinds, tables), never for values that grow with tenants.
 */
export function countFromZero<T extends string>(counter: Counter<T>, label: T, values: Iterable<string>): void {
  for (const value of values) counter.inc({ [label]: value } as Partial<Record<T, string>>, 0);
}

/**
 * The keys of `all` as a list: write the label values as a Record over their
 * union type, so the compiler fails when a value is added to the type but not here.
 */
export const labelValues = <K extends string>(all: Record<K, true>): readonly K[] => Object.keys(all) as K[];

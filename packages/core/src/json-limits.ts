/**
 * Size and depth of JSON values (payloads, results, metadata). Depth is
 * measured iteratively so a hostile 100k-deep value cannot overflow the stack
 * before we get to refuse it.
 */
import { BadUserInputError } from "./errors.js";

/** UTF-8 bytes of the JSON encoding; 0 for values JSON cannot encode at top level (undefined, functions). */
export function jsonByteLength(value: unknown): number {
  const text: string | undefined = JSON.stringify(value);
  return text === undefined ? 0 : Buffer.byteLength(text, "utf8");
}

/**
 * Nesting depth: a scalar is 0, `[]`/`{}` are 1, `[[1]]` is 2. Stops counting
 * once `stopAbove` is exceeded (cheap refusal of huge values). Throws a
 * TypeError on a cycle, which JSON cannot represent either.
 */
export function jsonDepth(value: unknown, stopAbove: number = Number.POSITIVE_INFINITY): number {
  return walkJson(value, stopAbove).depth;
}

const isNonFinite = (v: unknown) => typeof v === "number" && !Number.isFinite(v);

/** Depth, and whether a number JSON cannot hold (NaN, ±Infinity) is anywhere in it: one walk for both. */
function walkJson(value: unknown, stopAbove: number): { depth: number; nonFinite: boolean } {
  type Frame = { node: object; depth: number; exit: boolean };
  const ancestors = new Set<object>();
  const stack: Frame[] = [];
  let max = 0;
  let nonFinite = isNonFinite(value);
  if (value !== null && typeof value === "object") stack.push({ node: value, depth: 1, exit: false });
  while (stack.length > 0) {
    const frame = stack.pop() as Frame;
    if (frame.exit) {
      ancestors.delete(frame.node);
      continue;
    }
    if (ancestors.has(frame.node)) throw new TypeError("Value contains a cycle");
    if (frame.depth > max) max = frame.depth;
    if (max > stopAbove) return { depth: max, nonFinite };
    ancestors.add(frame.node);
    stack.push({ node: frame.node, depth: frame.depth, exit: true });
    const children: unknown[] = Array.isArray(frame.node) ? frame.node : Object.values(frame.node);
    for (const child of children) {
      if (child !== null && typeof child === "object") stack.push({ node: child, depth: frame.depth + 1, exit: false });
      else if (isNonFinite(child)) nonFinite = true;
    }
  }
  return { depth: max, nonFinite };
}

/** The first NaN or ±Infinity and its dotted path below the value (`""`: the value itself). Only on refusal. */
function firstNonFinite(value: unknown, path = ""): { path: string; value: number } | null {
  if (isNonFinite(value)) return { path, value: value as number };
  if (value === null || typeof value !== "object") return null;
  for (const [key, child] of Object.entries(value)) {
    const found = firstNonFinite(child, path === "" ? key : `${path}.${key}`);
    if (found !== null) return found;
  }
  return null;
}

export interface JsonLimits {
  maxBytes: number;
  maxDepth: number;
  /** Field name used in the error, e.g. "payload" or "inputs.3.metadata". */
  path: string;
}

/** The first limit `value` breaks, as a message naming the limit, or null. */
export function jsonLimitViolation(value: unknown, limits: Omit<JsonLimits, "path">): string | null {
  let walked: { depth: number; nonFinite: boolean };
  try {
    walked = walkJson(value, limits.maxDepth);
  } catch (e: unknown) {
    if (e instanceof TypeError) return "must be JSON-serialisable (it contains a cycle)";
    throw e;
  }
  // Depth first: encoding a too-deep value could itself overflow the stack.
  if (walked.depth > limits.maxDepth) return `must not be nested deeper than ${limits.maxDepth} levels`;
  // JSON has no NaN or Infinity: encoding would store null in their place (1e400 parses as Infinity).
  if (walked.nonFinite) {
    const found = firstNonFinite(value);
    const where = found === null ? "" : found.path === "" ? ` (it is ${found.value})` : ` (.${found.path} is ${found.value})`;
    return `must hold only finite numbers${where}`;
  }
  let bytes: number;
  try {
    bytes = jsonByteLength(value);
  } catch (e: unknown) {
    // JSON.stringify throws TypeError for BigInt values.
    if (e instanceof TypeError) return "must be JSON-serialisable";
    throw e;
  }
  if (bytes > limits.maxBytes) return `must not exceed ${limits.maxBytes} bytes as JSON (got ${bytes})`;
  return null;
}

export function assertJsonWithin(value: unknown, limits: JsonLimits): void {
  const problem = jsonLimitViolation(value, limits);
  if (problem !== null) {
    throw new BadUserInputError(`${limits.path} ${problem}`, [{ path: limits.path, message: problem }]);
  }
}

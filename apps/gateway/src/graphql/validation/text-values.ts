/**
 * Strings PostgreSQL cannot store: U+0000 (text and jsonb both refuse it) and
 * unpaired UTF-16 surrogates (jsonb refuses the escape; text would silently
 * get U+FFFD). Left to the database they surface as INTERNAL_SERVER_ERROR,
 * and the database's error text quotes the offending value into the log; so
 * they are refused before execution with BAD_USER_INPUT naming where, never
 * echoing what.
 *
 * Every string a resolver sees comes from a string literal of the document or
 * from the request's variables (keys included), so checking those two is
 * complete. Variables are walked iteratively: a 10,000-deep JSON value must
 * not overflow the stack here.
 */
import { BadUserInputError } from "@tasklane/core";
import { BREAK, Kind, visit, type DocumentNode } from "graphql";

// A high surrogate not followed by a low one, or a low one not preceded by a high one.
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

const MAX_PATH_CHARS = 120;

const REASON = "must not contain NUL (U+0000) or unpaired surrogate characters";

function unstorable(text: string): boolean {
  return UNSTORABLE.test(text);
}

/**
 * Path of the first unstorable string or key inside `value`, or null. Every
 * value seen is kept with its parent's index and its own key in flat arrays,
 * so a clean request (the common case) builds no path at all: only the one
 * refused is spelled out.
 */
function findInValue(value: unknown, root: string): string | null {
  const values: unknown[] = [value];
  const parents: number[] = [-1];
  const keys: string[] = [root];
  const pending: number[] = [0];
  const add = (item: unknown, parent: number, key: string): void => {
    pending.push(values.push(item) - 1);
    parents.push(parent);
    keys.push(key);
  };
  const pathOf = (at: number): string => {
    const parts: string[] = [];
    for (let i = at; i >= 0; i = parents[i] as number) parts.push(keys[i] as string);
    return parts.reverse().join(".");
  };
  while (pending.length > 0) {
    const at = pending.pop() as number;
    const current = values[at];
    if (typeof current === "string") {
      if (unstorable(current)) return pathOf(at);
    } else if (Array.isArray(current)) {
      current.forEach((item, i) => add(item, at, String(i)));
    } else if (current !== null && typeof current === "object") {
      const record = current as Record<string, unknown>;
      for (const key of Object.keys(record)) {
        if (unstorable(key)) return pathOf(at);
        add(record[key], at, key);
      }
    }
  }
  return null;
}

/**
 * Verdicts on documents already read. Apollo hands every request sending the
 * same text the same parsed document (its document store), so a hot
 * operation's literals are walked once, not on each call.
 */
const documentVerdicts = new WeakMap<DocumentNode, boolean>();

function findInDocument(document: DocumentNode): boolean {
  const known = documentVerdicts.get(document);
  if (known !== undefined) return known;
  const found = walkDocument(document);
  documentVerdicts.set(document, found);
  return found;
}

function walkDocument(document: DocumentNode): boolean {
  let found = false;
  visit(document, {
    [Kind.STRING](node) {
      if (!unstorable(node.value)) return undefined;
      found = true;
      return BREAK;
    },
  });
  return found;
}

/** The refusal for a request carrying an unstorable string, or null. */
export function textRefusal(document: DocumentNode, variables: Readonly<Record<string, unknown>> | undefined | null): BadUserInputError | null {
  const path = findInDocument(document) ? "document" : findInValue(variables ?? {}, "variables");
  if (path === null) return null;
  // Keys come from the caller's JSON: keep the path short enough to read, not a place to smuggle data back.
  const where = path.length > MAX_PATH_CHARS ? `${path.slice(0, MAX_PATH_CHARS)}…` : path;
  return new BadUserInputError(`Strings ${REASON} (at ${where})`, [{ path: where, message: REASON }]);
}

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

/** Path of the first unstorable string or key inside `value`, or null. */
function findInValue(value: unknown, root: string): string | null {
  const stack: Array<{ value: unknown; path: string }> = [{ value, path: root }];
  while (stack.length > 0) {
    const { value: current, path } = stack.pop() as { value: unknown; path: string };
    if (typeof current === "string") {
      if (unstorable(current)) return path;
    } else if (Array.isArray(current)) {
      current.forEach((item, i) => stack.push({ value: item, path: `${path}.${i}` }));
    } else if (current !== null && typeof current === "object") {
      for (const [key, item] of Object.entries(current)) {
        if (unstorable(key)) return path;
        stack.push({ value: item, path: `${path}.${key}` });
      }
    }
  }
  return null;
}

/** Whether any variable value or key is unstorable: the common, clean case walked without building a path per value. */
function anyInValue(value: unknown): boolean {
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const current = stack.pop();
    if (typeof current === "string") {
      if (unstorable(current)) return true;
    } else if (Array.isArray(current)) {
      for (const item of current) stack.push(item);
    } else if (current !== null && typeof current === "object") {
      const record = current as Record<string, unknown>;
      for (const key in record) {
        if (unstorable(key)) return true;
        stack.push(record[key]);
      }
    }
  }
  return false;
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
  const values = variables ?? {};
  const path = findInDocument(document) ? "document" : anyInValue(values) ? findInValue(values, "variables") : null;
  if (path === null) return null;
  // Keys come from the caller's JSON: keep the path short enough to read, not a place to smuggle data back.
  const where = path.length > MAX_PATH_CHARS ? `${path.slice(0, MAX_PATH_CHARS)}…` : path;
  return new BadUserInputError(`Strings ${REASON} (at ${where})`, [{ path: where, message: REASON }]);
}

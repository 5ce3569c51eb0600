/**
 * Identifiers and secrets. Ids are `<prefix>_<uuidv7 hex>`: readable in logs,
 * typed by their prefix, and time-sortable so btree inserts stay append-only.
 */
import { createHash, randomBytes, randomInt, timingSafeEqual } from "node:crypto";
import { v7 as uuidv7 } from "uuid";

export const IdPrefix = {
  /** Task ids. */
  task: "task",
  /** Tenant ids. */
  tenant: "ten",
  /** API key ids (not the secret). */
  apiKey: "key",
  /** Queue ids (the API addresses queues by name). */
  queue: "que",
  /** Schedule ids. */
  schedule: "sch",
  /** Workflow ids. */
  workflow: "wf",
  /** Webhook endpoint ids. */
  webhook: "whk",
  /** Webhook delivery ids; also the stable webhook-id header across retries. */
  delivery: "dlv",
  /** Console (human) user ids. */
  consoleUser: "usr",
} as const;
export type IdPrefix = (typeof IdPrefix)[keyof typeof IdPrefix];

// Version nibble 7 and RFC 4122 variant, so only ids we could have minted pass.
const UUIDV7_HEX = "[0-9a-f]{12}7[0-9a-f]{3}[89ab][0-9a-f]{15}";
const ID_PATTERNS = new Map<string, RegExp>(
  Object.values(IdPrefix).map((p) => [p, new RegExp(`^${p}_${UUIDV7_HEX}$`)]),
);

export function newId(prefix: IdPrefix): string {
  return `${prefix}_${uuidv7().replaceAll("-", "")}`;
}

/** Lets the API answer NOT_FOUND for a malformed id without a database round trip. */
export function isWellFormedId(prefix: IdPrefix, s: string): boolean {
  return ID_PATTERNS.get(prefix)?.test(s) ?? false;
}

const LEASE_TOKEN = /^lt_(\d{1,15})_[A-Za-z0-9_-]{22}$/;

/**
 * A fresh token per lease. The generation (the task's lease counter) is
 * readable for debugging; the random part makes tokens unguessable. `_taskId`
 * is not encoded: storage always compares the (taskId, token) pair.
 */
export function newLeaseToken(_taskId: string, generation: number): string {
  if (!Number.isSafeInteger(generation) || generation < 0 || generation > 999_999_999_999_999) {
    throw new RangeError(`Lease generation must be a non-negative integer, got ${generation}`);
  }
  return `lt_${generation}_${randomBytes(16).toString("base64url")}`;
}

export function parseLeaseToken(token: string): { generation: number } | null {
  const m = LEASE_TOKEN.exec(token);
  return m?.[1] === undefined ? null : { generation: Number(m[1]) };
}

const PREFIX_ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789";
const API_KEY_SECRET = /^(tl_[a-z0-9]{8})_[A-Za-z0-9_-]{43}$/;

/**
 * A new API key. The public prefix (lower-case alphanumerics, so it never
 * contains the `_` separator) is stored in clear to find the key row; only the
 * sha256 of the full secret is stored.
 */
export function newApiKeySecret(): { secret: string; prefix: string } {
  let publicPart = "";
  for (let i = 0; i < 8; i++) publicPart += PREFIX_ALPHABET[randomInt(PREFIX_ALPHABET.length)];
  const prefix = `tl_${publicPart}`;
  return { secret: `${prefix}_${randomBytes(32).toString("base64url")}`, prefix };
}

/** The stored prefix of a presented secret, or null when it cannot be one of ours. */
export function apiKeyPrefixOf(secret: string): string | null {
  return API_KEY_SECRET.exec(secret)?.[1] ?? null;
}

/** A plain sha256 suffices: the secret has 256 bits of entropy, so no slow KDF is needed. */
export function hashSecret(secret: string): string {
  return createHash("sha256").update(secret, "utf8").digest("hex");
}

const HEX = /^(?:[0-9a-fA-F]{2})*$/;

/** Constant-time comparison of two hex digests; malformed hex or different lengths compare unequal. */
export function safeEqualHex(a: string, b: string): boolean {
  if (a.length !== b.length || !HEX.test(a) || !HEX.test(b)) return false;
  return timingSafeEqual(Buffer.from(a, "hex"), Buffer.from(b, "hex"));
}

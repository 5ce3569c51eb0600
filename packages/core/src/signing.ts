/**
 * Standard Webhooks signatures (https://www.standardwebhooks.com), used for
 * PUSH requests, callbacks and webhook deliveries alike, so receivers can use
 * any off-the-shelf Standard Webhooks verifier.
 */
import { createHmac, createSecretKey, randomBytes, timingSafeEqual, type KeyObject } from "node:crypto";
import { LRUCache } from "lru-cache";

const SECRET_PREFIX = "whsec_";
const SIGNATURE_VERSION = "v1";

export type SignatureHeaderName = "webhook-id" | "webhook-timestamp" | "webhook-signature";

/**
 * The Postgres channel a tenant's signing-secret rotation NOTIFYs (payload:
 * the tenant id) in the statement that rotates it, so workers that sign PUSH
 * requests from a cached copy of the secrets reload it before the next
 * request rather than at their next periodic reload.
 */
export const SIGNING_SECRET_ROTATIONS_CHANNEL = "tasklane_signing_secrets";

export function generateSigningSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(32).toString("base64")}`;
}

/** The HMAC key inside a `whsec_<base64>` secret, or null when the secret is malformed. */
function decodeSecret(secret: string): KeyObject | null {
  if (!secret.startsWith(SECRET_PREFIX)) return null;
  const encoded = secret.slice(SECRET_PREFIX.length);
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(encoded)) return null;
  const key = Buffer.from(encoded, "base64");
  return key.length > 0 ? createSecretKey(key) : null;
}

/**
 * Imported keys by secret. Checking, decoding and importing the key was half
 * of signing one PUSH request (~3.7 against ~1.7 µs with the key at hand), and
 * a worker signs every attempt with its tenant's few secrets. Bounded, so
 * secrets rotated out do not stay; a malformed secret is not kept (it is
 * refused every time, which only a bug of ours sends).
 */
const importedKeys = new LRUCache<string, KeyObject>({ max: 1_000 });

function keyOf(secret: string): KeyObject | null {
  const known = importedKeys.get(secret);
  if (known !== undefined) return known;
  const key = decodeSecret(secret);
  if (key !== null) importedKeys.set(secret, key);
  return key;
}

function hmac(key: KeyObject, msgId: string, timestampSeconds: number, body: string): Buffer {
  return createHmac("sha256", key).update(`${msgId}.${timestampSeconds}.${body}`, "utf8").digest();
}

export interface SignInput {
  secret: string;
  msgId: string;
  timestampSeconds: number;
  body: string;
}

/** `v1,<base64 HMAC-SHA256 of "msgId.timestamp.body">`. Throws on a malformed secret: that is our bug, not the receiver's. */
export function signPayload({ secret, msgId, timestampSeconds, body }: SignInput): string {
  const key = keyOf(secret);
  if (key === null) throw new TypeError("Signing secret must look like whsec_<base64>");
  return `${SIGNATURE_VERSION},${hmac(key, msgId, timestampSeconds, body).toString("base64")}`;
}

/**
 * Headers for one outbound request. Signing with every current secret (space
 * separated) lets receivers verify with either the old or the new secret
 * during a rotation.
 */
export function signatureHeaders(
  secrets: string[],
  msgId: string,
  timestampSeconds: number,
  body: string,
): Record<SignatureHeaderName, string> {
  if (secrets.length === 0) throw new TypeError("At least one signing secret is required");
  return {
    "webhook-id": msgId,
    "webhook-timestamp": String(timestampSeconds),
    "webhook-signature": secrets.map((secret) => signPayload({ secret, msgId, timestampSeconds, body })).join(" "),
  };
}

export interface VerifyInput {
  secrets: string[];
  /** Header names are matched case-insensitively. */
  headers: Readonly<Record<string, string | undefined>>;
  body: string;
  nowSeconds: number;
  /** Replay window either side of now. @defaultValue 300 */
  toleranceSeconds?: number;
}

function header(headers: VerifyInput["headers"], name: SignatureHeaderName): string | undefined {
  for (const [k, v] of Object.entries(headers)) if (k.toLowerCase() === name) return v;
  return undefined;
}

export function verifySignature({ secrets, headers, body, nowSeconds, toleranceSeconds = 300 }: VerifyInput): boolean {
  const msgId = header(headers, "webhook-id");
  const timestamp = header(headers, "webhook-timestamp");
  const signatures = header(headers, "webhook-signature");
  if (!msgId || !timestamp || !signatures || !/^\d{1,15}$/.test(timestamp)) return false;
  const ts = Number(timestamp);
  // The timestamp is signed, so bounding it defeats replays of captured requests.
  if (Math.abs(nowSeconds - ts) > toleranceSeconds) return false;

  const expected: Buffer[] = [];
  for (const secret of secrets) {
    const key = keyOf(secret);
    if (key !== null) expected.push(hmac(key, msgId, ts, body));
  }
  let matched = false;
  for (const candidate of signatures.split(" ")) {
    const comma = candidate.indexOf(",");
    if (comma < 0 || candidate.slice(0, comma) !== SIGNATURE_VERSION) continue;
    const given = Buffer.from(candidate.slice(comma + 1), "base64");
    for (const mac of expected) {
      // No early exit: the time taken does not reveal which candidate matched.
      if (given.length === mac.length && timingSafeEqual(given, mac)) matched = true;
    }
  }
  return matched;
}

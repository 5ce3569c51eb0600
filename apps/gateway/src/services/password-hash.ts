/**
 * Console user passwords: scrypt (node:crypto) with a random 16-byte salt per
 * user, stored as `scrypt$N$r$p$<salt b64url>$<hash b64url>` so the cost can
 * be raised later without invalidating existing hashes.
 *
 * N = 2^15, r = 8, p = 1: 32 MiB and ~0.1–0.3 s per check on this machine
 * class (measured), slow enough to make offline guessing expensive and still
 * unnoticeable at sign-in. Work runs on libuv's thread pool, off the event loop.
 */
import { randomBytes, scrypt as scryptCallback, timingSafeEqual, type ScryptOptions } from "node:crypto";

const N = 1 << 15;
const R = 8;
const P = 1;
const KEY_LENGTH = 32;
const SALT_BYTES = 16;
/** scrypt needs 128·N·r bytes; Node's default maxmem (32 MiB) is exactly that, so leave headroom. */
const MAX_MEM = 64 * 1024 * 1024;

function derive(password: string, salt: Buffer, options: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scryptCallback(password.normalize("NFKC"), salt, KEY_LENGTH, { ...options, maxmem: MAX_MEM }, (error, key) => (error ? reject(error) : resolve(key)));
  });
}

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(SALT_BYTES);
  const key = await derive(password, salt, { N, r: R, p: P });
  return ["scrypt", N, R, P, salt.toString("base64url"), key.toString("base64url")].join("$");
}

/** Constant-time check; a malformed stored hash verifies as false (after the same work). */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parts = stored.split("$");
  const [scheme, n, r, p, salt, hash] = parts;
  const params = { N: Number(n), r: Number(r), p: Number(p) };
  const wellFormed =
    parts.length === 6 &&
    scheme === "scrypt" &&
    Number.isSafeInteger(params.N) &&
    params.N > 1 &&
    params.N <= 1 << 20 &&
    Number.isSafeInteger(params.r) &&
    params.r > 0 &&
    params.r <= 32 &&
    Number.isSafeInteger(params.p) &&
    params.p > 0 &&
    params.p <= 16 &&
    salt !== undefined &&
    hash !== undefined;
  const expected = wellFormed ? Buffer.from(hash, "base64url") : Buffer.alloc(KEY_LENGTH);
  const actual = await derive(password, wellFormed ? Buffer.from(salt, "base64url") : Buffer.alloc(SALT_BYTES), wellFormed ? params : { N, r: R, p: P });
  return wellFormed && expected.length === actual.length && timingSafeEqual(expected, actual);
}

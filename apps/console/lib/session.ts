/**
 * The signed-in user, read on the server from next-auth's session cookie (a
 * JWE encrypted with NEXTAUTH_SECRET). It holds the tenant session key, which
 * only this server ever decrypts: next-auth's /api/auth/session answers the
 * email and tenant, never the key (see the session callback in lib/auth.ts).
 */
import "server-only";
import { decode } from "next-auth/jwt";
import { cookies, headers } from "next/headers";
import { redirect } from "next/navigation";
import { REQUESTED_PATH_HEADER, signInPath } from "./callback-url";
import { authSecret } from "./config";

export interface ConsoleSession {
  email: string;
  tenantId: string;
  apiKey: string;
  apiKeyId: string;
  /** Epoch ms; the gateway refuses the key after it. */
  expiresAt: number;
}

/** next-auth v4's names: __Secure- when NEXTAUTH_URL is https. */
const COOKIE_NAMES = ["__Secure-next-auth.session-token", "next-auth.session-token"];

export async function readSession(): Promise<ConsoleSession | null> {
  const jar = await cookies();
  const raw = COOKIE_NAMES.map((name) => jar.get(name)?.value).find((v) => v !== undefined);
  if (raw === undefined) return null;
  let token: Awaited<ReturnType<typeof decode>>;
  try {
    token = await decode({ token: raw, secret: authSecret() });
  } catch {
    return null; // Tampered with, or sealed with another secret (the console restarted without NEXTAUTH_SECRET).
  }
  if (token === null) return null;
  const { email, tenantId, apiKey, apiKeyId, apiKeyExpiresAt } = token;
  if (typeof email !== "string" || typeof tenantId !== "string" || typeof apiKey !== "string" || typeof apiKeyId !== "string") return null;
  if (typeof apiKeyExpiresAt !== "number" || apiKeyExpiresAt <= Date.now()) return null;
  return { email, tenantId, apiKey, apiKeyId, expiresAt: apiKeyExpiresAt };
}

/** The sign-in page, set to return to the page being rendered (proxy.ts names it). */
export async function signInRedirect(reason?: "expired"): Promise<never> {
  redirect(signInPath((await headers()).get(REQUESTED_PATH_HEADER), reason));
}

/**
 * The signed-in user, or off to the sign-in page. A session cookie that no longer works (its key
 * expired after 12 h, or it was sealed by another NEXTAUTH_SECRET) says why there: "Your session
 * has ended" rather than a bare sign-in form. (Signing out deletes the cookie.)
 */
export async function requireSession(): Promise<ConsoleSession> {
  const session = await readSession();
  if (session !== null) return session;
  const jar = await cookies();
  return signInRedirect(COOKIE_NAMES.some((name) => jar.has(name)) ? "expired" : undefined);
}

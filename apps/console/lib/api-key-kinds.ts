/** The API keys page's two lists: the tenant's own keys and live console sessions. */
import type { ApiKey } from "./api/types";

/**
 * A console sign-in's key is the only kind that expires: consoleSignIn sets
 * expiresAt, createApiKey cannot. So the expiry, which nobody can give a key
 * of their own, tells them apart; the name ("console session <email>") is the
 * user's to choose too and proves nothing.
 */
export function isSessionKey(key: Pick<ApiKey, "expiresAt">): boolean {
  return key.expiresAt !== null;
}

/** Every key the user made, whatever its name or state; sessions only while they still work. */
export function splitApiKeys<K extends Pick<ApiKey, "expiresAt" | "revokedAt">>(all: K[], now: number): { keys: K[]; sessions: K[] } {
  return {
    keys: all.filter((k) => !isSessionKey(k)),
    sessions: all.filter((k) => isSessionKey(k) && !k.revokedAt && Date.parse(k.expiresAt ?? "") > now),
  };
}

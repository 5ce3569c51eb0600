/**
 * Console users: people who sign in to the web console for one tenant.
 *
 * Sign-in verifies the password and mints a short-lived tenant API key
 * (scopes ["full"], expires after CONSOLE_SESSION_TTL_MS) for the console's
 * server to call this API with; the console keeps it in its encrypted session
 * cookie and revokes it at sign-out. Session keys are not counted toward
 * MAX_API_KEYS_PER_TENANT (see ApiKeyService.create); a user keeps at most
 * MAX_CONSOLE_SESSIONS_PER_USER of them. Every way a sign-in can fail
 * (unknown email, wrong password, malformed email) costs one scrypt and ends
 * in the same UNAUTHENTICATED error.
 */
import { randomBytes } from "node:crypto";
import { ConflictError, MAX_CONSOLE_SESSIONS_PER_USER, NotFoundError, RateLimitedError, UnauthenticatedError, newId } from "@tasklane/core";
import { Prisma, type Database } from "@tasklane/db";
import { ApiKeyScope } from "../auth/scopes.js";
import type { ApiKeyService } from "./api-key-service.js";
import { hashPassword, verifyPassword } from "./password-hash.js";

type ConsoleUserRow = Prisma.ConsoleUserModel;

/** How long a console session's API key lives (the console's session lasts as long). */
export const CONSOLE_SESSION_TTL_MS = 12 * 60 * 60 * 1000;
export const CONSOLE_SESSION_KEY_PREFIX = "console session ";

/** Failed sign-ins per email per gateway instance before RATE_LIMITED; a guessing brake, not a lockout. */
const MAX_FAILURES = 10;
const FAILURE_WINDOW_MS = 15 * 60 * 1000;
const MAX_TRACKED_EMAILS = 10_000;

export interface ConsoleSessionGrant {
  user: ConsoleUserRow;
  token: string;
  apiKeyId: string;
  expiresAt: Date;
}

export class ConsoleUserService {
  readonly #failures = new Map<string, { count: number; resetAt: number }>();
  #dummyHash: Promise<string> | undefined;

  constructor(
    private readonly db: Database,
    private readonly apiKeys: ApiKeyService,
    private readonly now: () => number = Date.now,
  ) {}

  /** Operator only (checked by the resolver). `email` arrives trimmed and lower-cased. */
  async create(tenantId: string, email: string, password: string): Promise<ConsoleUserRow> {
    const tenant = await this.db.prisma.tenant.findUnique({ where: { id: tenantId }, select: { id: true } });
    if (tenant === null) throw new NotFoundError("Tenant", tenantId);
    const passwordHash = await hashPassword(password);
    try {
      return await this.db.prisma.consoleUser.create({ data: { id: newId("usr"), tenantId, email, passwordHash } });
    } catch (error: unknown) {
      // P2002: unique constraint (email) violated.
      if (error instanceof Prisma.PrismaClientKnownRequestError && error.code === "P2002") {
        throw new ConflictError("A console user with this email already exists");
      }
      throw error;
    }
  }

  /** `email` is null when it could not be an email at all: still one scrypt, same error. */
  async signIn(email: string | null, password: string): Promise<ConsoleSessionGrant> {
    if (email !== null) this.#checkThrottle(email);
    const user = email === null ? null : await this.db.prisma.consoleUser.findUnique({ where: { email } });
    const ok = await verifyPassword(password, user?.passwordHash ?? (await this.#dummy()));
    if (user === null || !ok) {
      if (email !== null) this.#recordFailure(email);
      throw new UnauthenticatedError();
    }
    this.#failures.delete(user.email);
    const expiresAt = new Date(this.now() + CONSOLE_SESSION_TTL_MS);
    // A key with an expiry: outside MAX_API_KEYS_PER_TENANT, so a tenant at
    // its cap can still sign in (and revoke keys there). What bounds them is
    // MAX_CONSOLE_SESSIONS_PER_USER: this user's oldest beyond it go now.
    // The scheduler's retention deletes the rest a week after they expire
    // (EXPIRED_KEY_RETENTION_DAYS).
    const name = `${CONSOLE_SESSION_KEY_PREFIX}${user.email}`;
    const { row, secret } = await this.apiKeys.create(user.tenantId, name, [ApiKeyScope.full], expiresAt);
    await this.apiKeys.trimExpiringKeys(user.tenantId, name, MAX_CONSOLE_SESSIONS_PER_USER);
    return { user, token: secret, apiKeyId: row.id, expiresAt };
  }

  /** A hash of a random password, so an unknown email costs exactly one scrypt like a known one. */
  #dummy(): Promise<string> {
    this.#dummyHash ??= hashPassword(randomBytes(16).toString("base64url"));
    return this.#dummyHash;
  }

  #checkThrottle(email: string): void {
    const entry = this.#failures.get(email);
    const now = this.now();
    if (entry === undefined) return;
    if (entry.resetAt <= now) {
      this.#failures.delete(email);
      return;
    }
    if (entry.count >= MAX_FAILURES) throw new RateLimitedError((entry.resetAt - now) / 1000);
  }

  #recordFailure(email: string): void {
    const now = this.now();
    const entry = this.#failures.get(email);
    if (entry !== undefined && entry.resetAt > now) {
      entry.count += 1;
      return;
    }
    if (this.#failures.size >= MAX_TRACKED_EMAILS) {
      for (const [key, value] of this.#failures) if (value.resetAt <= now) this.#failures.delete(key);
      if (this.#failures.size >= MAX_TRACKED_EMAILS) this.#failures.clear();
    }
    this.#failures.set(email, { count: 1, resetAt: now + FAILURE_WINDOW_MS });
  }
}

/**
 * A tenant's webhook endpoints and their delivery log. Delivery itself
 * (fan-out, signing, retries, disabling a failing endpoint) is the notifier's;
 * this is the configuration side and what the tenant may read back.
 */
import {
  BadUserInputError,
  ConflictError,
  assertNever,
  IdPrefix,
  NotFoundError,
  generateSigningSecret,
  isWellFormedId,
  newId,
  type CreateWebhookInput,
  type UpdateWebhookInput,
} from "@tasklane/core";
import {
  deliveryUrl,
  prismaRunner,
  redeliverDelivery,
  redeliverFailedSince,
  reserveOwnedSlot,
  type Database,
  type Prisma,
} from "@tasklane/db";
import { assertOutboundUrl, type HostResolver } from "./outbound-url.js";

export type WebhookRow = Prisma.WebhookModel;
export type WebhookDeliveryRow = Prisma.WebhookDeliveryModel;

/**
 * What a delivery shows through the API: every column but its body. A body
 * carries the task (payload and result, up to 256 KiB each), so a page of
 * 500 read whole was up to ~256 MB in the gateway, past the heap Node gives
 * a 1 GiB container.
 */
const DELIVERY_VIEW = {
  id: true,
  tenantId: true,
  webhookId: true,
  event: true,
  taskId: true,
  status: true,
  attempts: true,
  lastResponseCode: true,
  lastError: true,
  createdAt: true,
  deliveredAt: true,
  nextAttemptAt: true,
} as const satisfies Prisma.WebhookDeliverySelect;

export type WebhookDeliveryView = Pick<WebhookDeliveryRow, keyof typeof DELIVERY_VIEW>;

/** A deleted webhook's secret column (NOT NULL): its secret is dropped at deletion. */
export const DELETED_WEBHOOK_SECRET = "";

/** lastError of the deliveries a deletion abandons: what the notifier says of one it finds deleted at its claim. */
export const DELETED_WEBHOOK_ERROR = "webhook was deleted";

/**
 * One statement: the webhook is deleted and its PENDING deliveries not in
 * flight are FAILED, so the log does not show them waiting for a retry
 * (up to WEBHOOK_RETRY_SCHEDULE's longest step, or a day for a Retry-After)
 * that will never be sent. A claimed one (locked_until ahead) is left to
 * record its outcome under its claim.
 */
const DELETE_WEBHOOK = `
  WITH w AS (
    UPDATE webhooks SET deleted_at = now(), enabled = false, secret = $3, previous_secret = NULL, previous_secret_expires_at = NULL
    WHERE id = $1 AND tenant_id = $2 AND deleted_at IS NULL
    RETURNING id
  ), abandoned AS (
    UPDATE webhook_deliveries d SET status = 'FAILED', last_error = $4 FROM w
    WHERE d.webhook_id = w.id AND d.status = 'PENDING' AND (d.locked_until IS NULL OR d.locked_until < now())
  )
  SELECT id FROM w`;

/** What a webhook the tenant disabled itself says in disabledReason. */
export const DISABLED_BY_TENANT = "disabled by the tenant";

/**
 * One statement, so it cannot interleave with the notifier recording an
 * outcome (which disables at the threshold) between a read and a write.
 * $5 enabled: null leaves it; true on a disabled endpoint also clears the
 * reason and the failure streak, or the next failed attempt would count on
 * from the streak that disabled it; false on an enabled one records that the
 * tenant did it (an endpoint already disabled keeps the first reason).
 * A new URL also re-addresses the endpoint's PENDING deliveries, so their
 * retries go where the tenant now receives, rather than failing at the old
 * address and disabling the endpoint again. enabled: false stops the
 * deliveries waiting for an attempt at once (FAILED, as the notifier would
 * abandon them at their next claim; redeliverWebhookDeliveries brings them
 * back once it is enabled again), so re-enabling within a retry's wait does
 * not quietly resume them; one in flight records its outcome (stopped rows
 * and re-addressed ones are disjoint: two updates of one row in a statement
 * would keep only one).
 */
const UPDATE_WEBHOOK = `
  WITH w AS (
    UPDATE webhooks SET
      url = COALESCE($3::text, url),
      events = COALESCE($4::text[], events),
      enabled = COALESCE($5::boolean, enabled),
      disabled_reason = CASE WHEN $5::boolean THEN NULL WHEN NOT $5::boolean AND enabled THEN $6::text ELSE disabled_reason END,
      failure_streak = CASE WHEN $5::boolean AND NOT enabled THEN 0 ELSE failure_streak END
    WHERE id = $1 AND tenant_id = $2 AND deleted_at IS NULL
    RETURNING *
  ), stopped AS (
    UPDATE webhook_deliveries d SET status = 'FAILED', last_error = 'webhook is disabled: ' || COALESCE(w.disabled_reason, $6::text), url = w.url FROM w
    WHERE $5::boolean IS FALSE AND d.webhook_id = w.id AND d.status = 'PENDING' AND (d.locked_until IS NULL OR d.locked_until < now())
  ), readdressed AS (
    UPDATE webhook_deliveries d SET url = w.url FROM w
    WHERE $3::text IS NOT NULL AND d.webhook_id = w.id AND d.status = 'PENDING' AND d.url <> w.url
      AND NOT ($5::boolean IS FALSE AND (d.locked_until IS NULL OR d.locked_until < now()))
  )
  SELECT id, tenant_id, url, events, secret, previous_secret, previous_secret_expires_at, enabled, disabled_reason, failure_streak, deleted_at, created_at FROM w`;

/**
 * How long the secret a rotation replaced keeps signing beside the new one,
 * as the tenant's signing secret (Stripe lets an old endpoint secret live up
 * to 24 h, Svix 24 h): long enough to deploy the new one to every receiver.
 */
export const PREVIOUS_WEBHOOK_SECRET_GRACE_SECONDS = 24 * 60 * 60;

/**
 * One statement: the current secret becomes the previous one (an older
 * previous one, from a rotation less than 24 h ago, ends at once: rotating
 * twice withdraws a leaked secret), the new one signs from the next attempt.
 */
const ROTATE_WEBHOOK_SECRET = `
  UPDATE webhooks SET previous_secret = secret,
    previous_secret_expires_at = now() + make_interval(secs => $4),
    secret = $3
  WHERE id = $1 AND tenant_id = $2 AND deleted_at IS NULL
  RETURNING id, tenant_id, url, events, secret, previous_secret, previous_secret_expires_at, enabled, disabled_reason, failure_streak, deleted_at, created_at`;

interface WebhookSqlRow {
  id: string;
  tenant_id: string;
  url: string;
  events: string[];
  secret: string;
  previous_secret: string | null;
  previous_secret_expires_at: Date | null;
  enabled: boolean;
  disabled_reason: string | null;
  failure_streak: number;
  deleted_at: Date | null;
  created_at: Date;
}

function fromSqlRow(row: WebhookSqlRow): WebhookRow {
  return {
    id: row.id,
    tenantId: row.tenant_id,
    url: row.url,
    events: row.events,
    secret: row.secret,
    previousSecret: row.previous_secret,
    previousSecretExpiresAt: row.previous_secret_expires_at,
    enabled: row.enabled,
    disabledReason: row.disabled_reason,
    failureStreak: row.failure_streak,
    deletedAt: row.deleted_at,
    createdAt: row.created_at,
  };
}

export class WebhookService {
  constructor(
    private readonly db: Database,
    private readonly opts: { allowPrivateTargets: boolean; resolver?: HostResolver },
  ) {}

  /**
   * The secret is returned here and never again (only the notifier reads it
   * back, to sign). The URL gets the same SSRF policy as PUSH endpoints now;
   * the notifier checks the resolved address again at every connect.
   */
  async create(tenantId: string, input: CreateWebhookInput): Promise<{ row: WebhookRow; secret: string }> {
    await assertOutboundUrl(input.url, "input.url", {
      allowPrivate: this.opts.allowPrivateTargets,
      ...(this.opts.resolver ? { resolver: this.opts.resolver } : {}),
    });
    const secret = generateSigningSecret();
    // MAX_WEBHOOKS_PER_TENANT, exact under concurrent creates (owned-caps.ts).
    const row = await this.db.prisma.$transaction(async (tx) => {
      await reserveOwnedSlot(prismaRunner(tx), tenantId, "webhooks");
      return tx.webhook.create({ data: { id: newId(IdPrefix.webhook), tenantId, url: input.url, events: input.events, secret } });
    });
    return { row, secret };
  }

  /**
   * Changes what is given (url, events, enabled); see UPDATE_WEBHOOK. A new
   * URL gets the same SSRF policy as in create. Absent, another tenant's and
   * deleted are the same NOT_FOUND.
   */
  async update(tenantId: string, id: string, input: UpdateWebhookInput): Promise<WebhookRow> {
    if (!isWellFormedId(IdPrefix.webhook, id)) throw new NotFoundError("Webhook", id);
    if (input.url != null) {
      await assertOutboundUrl(input.url, "input.url", {
        allowPrivate: this.opts.allowPrivateTargets,
        ...(this.opts.resolver ? { resolver: this.opts.resolver } : {}),
      });
    }
    const { rows } = await this.db.pool.query<WebhookSqlRow>(UPDATE_WEBHOOK, [
      id,
      tenantId,
      input.url ?? null,
      input.events ?? null,
      input.enabled ?? null,
      DISABLED_BY_TENANT,
    ]);
    const row = rows[0];
    if (row === undefined) throw new NotFoundError("Webhook", id);
    return fromSqlRow(row);
  }

  /**
   * A new secret for the endpoint, returned here and never again; the one it
   * replaces signs too (a second v1 signature in webhook-signature) for
   * PREVIOUS_WEBHOOK_SECRET_GRACE_SECONDS. Absent, another tenant's and
   * deleted are the same NOT_FOUND.
   */
  async rotateSecret(tenantId: string, id: string): Promise<{ row: WebhookRow; secret: string }> {
    if (!isWellFormedId(IdPrefix.webhook, id)) throw new NotFoundError("Webhook", id);
    const secret = generateSigningSecret();
    const { rows } = await this.db.pool.query<WebhookSqlRow>(ROTATE_WEBHOOK_SECRET, [id, tenantId, secret, PREVIOUS_WEBHOOK_SECRET_GRACE_SECONDS]);
    const row = rows[0];
    if (row === undefined) throw new NotFoundError("Webhook", id);
    return { row: fromSqlRow(row), secret };
  }

  /**
   * Soft delete: the row stays for the delivery log (until retention prunes
   * it, pruneCredentials), fan-out skips it, and its deliveries waiting for
   * an attempt are FAILED at once (DELETE_WEBHOOK); one in flight records
   * its outcome and, if that is a retry, is abandoned by the notifier. Its secrets (and a rotated-out one) go at once: nothing
   * signs with a deleted endpoint's secret, and it is never shown again.
   * Absent, another tenant's and already deleted are the same NOT_FOUND.
   */
  async delete(tenantId: string, id: string): Promise<boolean> {
    if (!isWellFormedId(IdPrefix.webhook, id)) throw new NotFoundError("Webhook", id);
    const { rowCount } = await this.db.pool.query(DELETE_WEBHOOK, [id, tenantId, DELETED_WEBHOOK_SECRET, DELETED_WEBHOOK_ERROR]);
    if (rowCount !== 1) throw new NotFoundError("Webhook", id);
    return true;
  }

  list(tenantId: string): Promise<WebhookRow[]> {
    return this.db.prisma.webhook.findMany({ where: { tenantId, deletedAt: null }, orderBy: [{ createdAt: "asc" }, { id: "asc" }] });
  }

  /**
   * Newest first (createdAt, then id, descending). With a webhookId, that
   * endpoint's deliveries (a deleted endpoint's log stays readable); another
   * tenant's id is NOT_FOUND, like an unknown one. Without, every delivery of
   * the tenant, callbacks included. `status` keeps only those; `before` (a
   * delivery id of this tenant, typically the last of the previous page)
   * starts after it in that order, so pages walk every row once. The
   * (tenant_id, created_at) and (webhook_id, created_at) indexes serve both
   * orders (docs/internals.md, notifier).
   */
  async deliveries(
    tenantId: string,
    webhookId: string | null,
    first: number,
    filter: { status?: WebhookDeliveryRow["status"] | null; before?: string | null } = {},
  ): Promise<WebhookDeliveryView[]> {
    if (webhookId !== null) await this.ownedWebhook(tenantId, webhookId);
    let keyset: Prisma.WebhookDeliveryWhereInput = {};
    if (filter.before != null) {
      const cursor = isWellFormedId(IdPrefix.delivery, filter.before)
        ? await this.db.prisma.webhookDelivery.findFirst({ where: { id: filter.before, tenantId }, select: { id: true, createdAt: true } })
        : null;
      if (cursor === null) throw new NotFoundError("WebhookDelivery", filter.before);
      // The bound on createdAt alone is what the index range uses; the OR settles ties on id.
      keyset = { createdAt: { lte: cursor.createdAt }, OR: [{ createdAt: { lt: cursor.createdAt } }, { id: { lt: cursor.id } }] };
    }
    return this.db.prisma.webhookDelivery.findMany({
      where: {
        tenantId,
        ...(webhookId !== null ? { webhookId } : {}),
        ...(filter.status != null ? { status: filter.status } : {}),
        ...keyset,
      },
      orderBy: [{ createdAt: "desc" }, { id: "desc" }],
      take: first,
      select: DELIVERY_VIEW,
    });
  }

  /**
   * A finished delivery (FAILED, abandoned included, or DELIVERED) goes back
   * to PENDING, due now, for a fresh round of attempts with the same body and
   * webhook-id (its id); attempts so far stay. Unknown and another tenant's:
   * NOT_FOUND. PENDING (waiting or in flight), a deleted webhook's, a
   * disabled webhook's, a URL no longer allowed: CONFLICT, nothing written.
   */
  async redeliver(tenantId: string, id: string): Promise<WebhookDeliveryView> {
    if (!isWellFormedId(IdPrefix.delivery, id)) throw new NotFoundError("WebhookDelivery", id);
    const url = await deliveryUrl(this.db, tenantId, id);
    if (url === null) throw new NotFoundError("WebhookDelivery", id);
    try {
      await assertOutboundUrl(url, "url", {
        allowPrivate: this.opts.allowPrivateTargets,
        ...(this.opts.resolver ? { resolver: this.opts.resolver } : {}),
      });
    } catch (error: unknown) {
      // The URL was allowed when the delivery was made; refused now (ALLOW_PRIVATE_TARGETS, DNS) is the delivery's state, not the input.
      if (error instanceof BadUserInputError) throw new ConflictError(`Delivery ${id} cannot be redelivered: its ${error.message}`);
      throw error;
    }
    const result = await redeliverDelivery(this.db, tenantId, id, url);
    switch (result.kind) {
      case "redelivered":
        // As the redelivery left it: read back, it could already be in the new round, or DELIVERED.
        return result.delivery;
      case "not_found":
        throw new NotFoundError("WebhookDelivery", id);
      case "in_flight":
        throw new ConflictError(`Delivery ${id} is PENDING (waiting for or in an attempt); only a DELIVERED or FAILED delivery can be redelivered`);
      case "webhook_deleted":
        throw new ConflictError(`Delivery ${id} cannot be redelivered: its webhook was deleted`);
      case "webhook_disabled":
        throw new ConflictError(
          `Delivery ${id} cannot be redelivered: its webhook is disabled${result.reason ? ` (${result.reason})` : ""}; enable it first (updateWebhook with enabled: true)`,
        );
      case "url_changed":
        throw new ConflictError(`Delivery ${id} was re-addressed meanwhile; try again`);
      default:
        return assertNever(result);
    }
  }

  /**
   * Svix's recover: the webhook's FAILED deliveries created at or after
   * `since` back to PENDING, oldest first, at most MAX_REDELIVERIES_PER_CALL
   * (redeliverFailedSince). Unknown and another tenant's webhook: NOT_FOUND;
   * deleted or disabled: CONFLICT, nothing written.
   */
  async redeliverSince(tenantId: string, webhookId: string, since: Date): Promise<number> {
    const webhook = await this.ownedWebhook(tenantId, webhookId);
    if (webhook.deletedAt !== null) throw new ConflictError(`Webhook ${webhookId} was deleted; its deliveries cannot be redelivered`);
    if (!webhook.enabled) {
      throw new ConflictError(
        `Webhook ${webhookId} is disabled${webhook.disabledReason ? ` (${webhook.disabledReason})` : ""}; enable it first (updateWebhook with enabled: true)`,
      );
    }
    return redeliverFailedSince(this.db, tenantId, webhookId, since);
  }

  /** This tenant's webhook, deleted or not; NOT_FOUND otherwise. */
  private async ownedWebhook(tenantId: string, webhookId: string): Promise<Pick<WebhookRow, "id" | "enabled" | "deletedAt" | "disabledReason">> {
    const owned = isWellFormedId(IdPrefix.webhook, webhookId)
      ? await this.db.prisma.webhook.findFirst({ where: { id: webhookId, tenantId }, select: { id: true, enabled: true, deletedAt: true, disabledReason: true } })
      : null;
    if (owned === null) throw new NotFoundError("Webhook", webhookId);
    return owned;
  }
}

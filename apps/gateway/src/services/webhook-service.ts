/**
 * A tenant's webhook endpoints and their delivery log. Delivery itself
 * (fan-out, signing, retries, disabling a failing endpoint) is the notifier's;
 * this is the configuration side and what the tenant may read back.
 */
import {
  IdPrefix,
  MAX_WEBHOOKS_PER_TENANT,
  NotFoundError,
  QuotaExceededError,
  generateSigningSecret,
  isWellFormedId,
  newId,
  type CreateWebhookInput,
} from "@tasklane/core";
import type { Database, Prisma } from "@tasklane/db";
import { assertOutboundUrl, type HostResolver } from "./outbound-url.js";

export type WebhookRow = Prisma.WebhookModel;
export type WebhookDeliveryRow = Prisma.WebhookDeliveryModel;

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
    // A soft cap: two concurrent creates may both pass the count; the bound still holds within a few.
    const live = await this.db.prisma.webhook.count({ where: { tenantId, deletedAt: null } });
    if (live >= MAX_WEBHOOKS_PER_TENANT) throw new QuotaExceededError(`A tenant may have at most ${MAX_WEBHOOKS_PER_TENANT} webhooks`);
    const secret = generateSigningSecret();
    const row = await this.db.prisma.webhook.create({
      data: { id: newId(IdPrefix.webhook), tenantId, url: input.url, events: input.events, secret },
    });
    return { row, secret };
  }

  /**
   * Soft delete: the row stays for the delivery log, fan-out skips it, and
   * deliveries already queued for it are abandoned by the notifier.
   * Absent, another tenant's and already deleted are the same NOT_FOUND.
   */
  async delete(tenantId: string, id: string): Promise<boolean> {
    if (!isWellFormedId(IdPrefix.webhook, id)) throw new NotFoundError("Webhook", id);
    const { count } = await this.db.prisma.webhook.updateMany({
      where: { id, tenantId, deletedAt: null },
      data: { deletedAt: new Date(), enabled: false },
    });
    if (count === 0) throw new NotFoundError("Webhook", id);
    return true;
  }

  list(tenantId: string): Promise<WebhookRow[]> {
    return this.db.prisma.webhook.findMany({ where: { tenantId, deletedAt: null }, orderBy: [{ createdAt: "asc" }, { id: "asc" }] });
  }

  /**
   * Newest first. With a webhookId, that endpoint's deliveries (a deleted
   * endpoint's log stays readable); another tenant's id is NOT_FOUND, like an
   * unknown one. Without, every delivery of the tenant, callbacks included.
   */
  async deliveries(tenantId: string, webhookId: string | null, first: number): Promise<WebhookDeliveryRow[]> {
    if (webhookId !== null) {
      const owned = isWellFormedId(IdPrefix.webhook, webhookId)
        ? await this.db.prisma.webhook.findFirst({ where: { id: webhookId, tenantId }, select: { id: true } })
        : null;
      if (owned === null) throw new NotFoundError("Webhook", webhookId);
    }
    return this.db.prisma.webhookDelivery.findMany({
      where: { tenantId, ...(webhookId !== null ? { webhookId } : {}) },
      orderBy: [{ createdAt: "desc" }, { id: "desc" }],
      take: first,
    });
  }
}

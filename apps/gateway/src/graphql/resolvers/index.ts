import { ApiKeyResolver } from "./api-key.resolver.js";
import { LeaseResolver } from "./lease.resolver.js";
import { QueueResolver } from "./queue.resolver.js";
import { ScheduleResolver } from "./schedule.resolver.js";
import { SubscriptionResolver } from "./subscription.resolver.js";
import { TaskResolver } from "./task.resolver.js";
import { TenantResolver } from "./tenant.resolver.js";
import { WebhookResolver } from "./webhook.resolver.js";
import { WorkflowResolver } from "./workflow.resolver.js";

export const resolvers = [
  TenantResolver,
  ApiKeyResolver,
  QueueResolver,
  TaskResolver,
  ScheduleResolver,
  WorkflowResolver,
  WebhookResolver,
  LeaseResolver,
  SubscriptionResolver,
] as const;

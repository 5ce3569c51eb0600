import { ApiKeyResolver } from "./api-key.resolver.js";
import { ConsoleUserResolver } from "./console-user.resolver.js";
import { DeadLetterResolver } from "./dead-letter.resolver.js";
import { LeaseResolver } from "./lease.resolver.js";
import { QueueResolver } from "./queue.resolver.js";
import { ScheduleResolver } from "./schedule.resolver.js";
import { SubscriptionResolver } from "./subscription.resolver.js";
import { TaskResolver } from "./task.resolver.js";
import { TaskActivityResolver } from "./task-activity.resolver.js";
import { TaskReplayResolver } from "./task-replay.resolver.js";
import { TaskRescheduleResolver } from "./task-reschedule.resolver.js";
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
  ConsoleUserResolver,
  DeadLetterResolver,
  TaskActivityResolver,
  TaskRescheduleResolver,
  TaskReplayResolver,
] as const;

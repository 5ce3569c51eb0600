/**
 * The console's shorter journeys in Debian's headless Chromium against one
 * real platform (gateway, scheduler, worker, notifier, the built console):
 * each suite in console-pages/ signs in as a user of its own tenant, in its
 * own browser context, with its own PUSH receiver. Starting the platform
 * costs a file ~12 s of a 2-core machine; six files each starting their own
 * spent ~80 s of the suite on it.
 *
 * The suites run one after another (one gateway: the dead-letter suite stops
 * and restarts it). The console's main journey (console.test.ts), its forms
 * and its resilience to a gateway outage keep platforms of their own.
 */
import { afterAll, beforeAll } from "vitest";
import { startSharedConsolePlatform, type SharedConsolePlatform } from "../helpers/console-platform.js";
import { describeDeadLetterBulk } from "./console-pages/dead-letter-bulk.js";
import { describeQueueLifecycle } from "./console-pages/queue-lifecycle.js";
import { describeRecordPages } from "./console-pages/record-pages.js";
import { describeTaskReplay } from "./console-pages/task-replay.js";
import { describeTaskReschedule } from "./console-pages/task-reschedule.js";
import { describeWebhookRotation } from "./console-pages/webhook-rotation.js";

let shared: SharedConsolePlatform | undefined;

beforeAll(async () => {
  shared = await startSharedConsolePlatform();
}, 180_000);

afterAll(async () => {
  await shared?.stop();
});

const platform = (): SharedConsolePlatform => {
  if (shared === undefined) throw new Error("the shared console platform did not start");
  return shared;
};

describeRecordPages(platform);
describeTaskReplay(platform);
describeTaskReschedule(platform);
describeQueueLifecycle(platform);
describeWebhookRotation(platform);
describeDeadLetterBulk(platform);

/** A task as the API answers it (every field of the SDK's TaskFields), QUEUED in "default"; `overrides` replace fields. */
export function taskAnswer(overrides: Record<string, unknown> = {}) {
  return {
    id: "task_1",
    type: "t",
    queue: "default",
    payload: null,
    status: "QUEUED",
    priority: "NORMAL",
    runAt: "2026-12-06T10:00:00.000Z",
    createdAt: "2026-12-06T10:00:00.000Z",
    startedAt: null,
    completedAt: null,
    attempts: 0,
    maxAttempts: 3,
    timeoutSeconds: 300,
    result: null,
    lastError: null,
    idempotencyKey: null,
    orderingKey: null,
    workflowId: null,
    scheduleId: null,
    cancelRequested: false,
    traceParent: null,
    ...overrides,
  };
}

import { createRepeatThrottle } from "@tasklane/config";
import { FastPathTimeout, withinFastPathWait, type FleetLimits } from "@tasklane/queue";

/** A PULL queue's start rate (queues.rate_*). */
export interface StartRate {
  perSecond: number;
  burst: number;
}

export interface StartTokenReports {
  /**
   * A take Redis failed or did not answer within FAST_PATH_WAIT_MS: that look
   * leased nothing from the queue. `failures` counts them since the last call.
   */
  onTakeError?(error: unknown, queueId: string, failures: number): void;
  /** A refund Redis refused (the tokens are lost: the queue starts slower until its bucket refills). */
  onRefundError?(error: unknown, queueId: string, failures: number): void;
}

/**
 * No tokens, and no telling when there will be: the long poll sleeps its
 * usual POLL_MS and looks again (any wait > 0 says "held back by the rate").
 */
const NONE_FOR_NOW = { granted: 0, waitMs: 200 } as const;

/** Failures come with every look while Redis is down: one report per this long is enough. */
const REPORT_EVERY_MS = 10_000;

/** `report`, at most once per REPORT_EVERY_MS (config's RepeatThrottle), with the number of failures since the last report. */
function throttled(report: ((error: unknown, queueId: string, failures: number) => void) | undefined) {
  const throttle = createRepeatThrottle(REPORT_EVERY_MS);
  return (error: unknown, queueId: string) => {
    const line = throttle.failed();
    if (line !== undefined) report?.(error, queueId, line.suppressed + 1);
  };
}

/**
 * The start tokens a leaseTasks look takes from a rate-limited PULL queue's
 * bucket (FleetLimits, in Redis), and gives back for tasks that did not start.
 *
 * A start rate is a promise to the tenant's downstream, so nothing is leased
 * without a token, also while Redis cannot be asked. The call must still
 * answer: a take is not sent while the connection is not ready (it would
 * wait in ioredis's offline queue for as long as the outage lasts, and the
 * call with it), and is waited for at most FAST_PATH_WAIT_MS otherwise (a
 * connection that died unnoticed). Either way the look gets no tokens: the
 * queue leases nothing, a long poll looks again every POLL_MS and answers
 * empty at its end, and the queue leases again once Redis answers. Tokens a
 * late take is granted anyway go back. A refund is not sent while the
 * connection is not ready either: tokens lost only slow the queue down.
 * While Redis is ready this costs what the take always cost, and one timer.
 */
export class PullStartTokens {
  private readonly takeFailed: (error: unknown, queueId: string) => void;
  private readonly refundFailed: (error: unknown, queueId: string) => void;

  constructor(
    private readonly limits: FleetLimits,
    reports: StartTokenReports = {},
  ) {
    this.takeFailed = throttled(reports.onTakeError?.bind(reports));
    this.refundFailed = throttled(reports.onRefundError?.bind(reports));
  }

  /** Up to `want` tokens: how many are granted, and when none, the wait (> 0) before looking again. */
  async take(tenantId: string, queueId: string, rate: StartRate, want: number): Promise<{ granted: number; waitMs: number }> {
    if (!this.limits.redisReady) return NONE_FOR_NOW;
    const taking = this.limits.takeStartTokens(tenantId, queueId, rate.perSecond, rate.burst, want);
    try {
      return await withinFastPathWait(taking, "the start tokens", "this look leases nothing from the queue");
    } catch (error) {
      // Late, not lost: nothing starts on what it is granted, so that goes back.
      if (error instanceof FastPathTimeout) taking.then(({ granted }) => this.giveBack(tenantId, queueId, rate, granted), () => undefined);
      this.takeFailed(error, queueId);
      return NONE_FOR_NOW;
    }
  }

  /** Not awaited: the connection keeps the refund ahead of the next take. */
  giveBack(tenantId: string, queueId: string, rate: StartRate, count: number): void {
    if (count <= 0 || !this.limits.redisReady) return;
    this.limits.returnStartTokens(tenantId, queueId, rate.perSecond, rate.burst, count).catch((error: unknown) => this.refundFailed(error, queueId));
  }
}

/** The signed-in user's tenant: its limits and today's usage. */
import "server-only";
import { gql } from "../gateway";
import type { ApiResult } from "../graphql-error";
import type { Tenant } from "./types";

export async function getTenant(): Promise<ApiResult<Tenant>> {
  const result = await gql<{ tenant: Tenant }>(
    `query ConsoleTenant { tenant { id name
      limits { weight maxConcurrency apiRatePerSecond apiBurst maxPendingTasks dailyTaskQuota }
      usage { pendingTasks runningTasks submittedToday } } }`,
  );
  return result.ok ? { ok: true, data: result.data.tenant } : result;
}

/** Just the name, for the header. */
export async function getTenantName(): Promise<string | null> {
  const result = await gql<{ tenant: { name: string } }>(`query ConsoleTenantName { tenant { name } }`);
  return result.ok ? result.data.tenant.name : null;
}

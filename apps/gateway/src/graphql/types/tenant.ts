/** Tenants and their limits (contract: TenantLimits(Input), TenantUsage, Tenant, CreateTenantInput, TenantWithKey). */
import { TenantLimit } from "@tasklane/core";
import { Field, Float, ID, InputType, Int, ObjectType, registerEnumType } from "type-graphql";

registerEnumType(TenantLimit, { name: "TenantLimit", description: "a tenant limit removeLimits can take away" });

@ObjectType("TenantLimits", { simpleResolvers: true })
export class TenantLimits {
  @Field(() => Int, { description: "share of the worker fleet relative to other tenants" })
  weight!: number;

  @Field(() => Int, { nullable: true, description: "most tasks of this tenant running at once" })
  maxConcurrency!: number | null;

  @Field(() => Float, { description: "API token bucket refill" })
  apiRatePerSecond!: number;

  @Field(() => Int)
  apiBurst!: number;

  @Field(() => Int, { nullable: true, description: "SCHEDULED+QUEUED+RETRYING+BLOCKED cap; a cron run past it is SKIPPED, lastError saying so" })
  maxPendingTasks!: number | null;

  @Field(() => Int, { nullable: true, description: "new tasks per UTC day, cron runs included; a cron run past it is SKIPPED, lastError saying so" })
  dailyTaskQuota!: number | null;
}

@InputType("TenantLimitsInput")
export class TenantLimitsInput {
  @Field(() => Int, { nullable: true })
  weight?: number | null;

  @Field(() => Int, { nullable: true })
  maxConcurrency?: number | null;

  @Field(() => Float, { nullable: true })
  apiRatePerSecond?: number | null;

  @Field(() => Int, { nullable: true })
  apiBurst?: number | null;

  @Field(() => Int, { nullable: true })
  maxPendingTasks?: number | null;

  @Field(() => Int, { nullable: true })
  dailyTaskQuota?: number | null;

  @Field(() => [TenantLimit], {
    nullable: true,
    description: "limits to take away, leaving the tenant with no limit of that kind (a limit left null is left as it is)",
  })
  removeLimits?: TenantLimit[] | null;
}

@ObjectType("TenantUsage", { simpleResolvers: true })
export class TenantUsage {
  @Field(() => Int)
  pendingTasks!: number;

  @Field(() => Int)
  runningTasks!: number;

  @Field(() => Int)
  submittedToday!: number;
}

/** `usage` is a field resolver (tenant.resolver.ts): counted only when asked for. */
@ObjectType("Tenant", { simpleResolvers: true })
export class Tenant {
  @Field(() => ID)
  id!: string;

  @Field(() => String)
  name!: string;

  @Field(() => TenantLimits)
  limits!: TenantLimits;
}

@InputType("CreateTenantInput")
export class CreateTenantInput {
  @Field(() => String)
  name!: string;

  @Field(() => TenantLimitsInput, { nullable: true })
  limits?: TenantLimitsInput | null;
}

@ObjectType("TenantWithKey", { simpleResolvers: true })
export class TenantWithKey {
  @Field(() => Tenant)
  tenant!: Tenant;

  @Field(() => String, { description: "shown once" })
  apiKey!: string;

  @Field(() => String, { description: "shown once; signs PUSH requests and callbacks" })
  signingSecret!: string;
}

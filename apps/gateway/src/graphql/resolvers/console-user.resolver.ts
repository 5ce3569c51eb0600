/**
 * Console users: the operator creates them (admin token); the console's
 * server signs them in and receives a short-lived tenant credential.
 */
import { parseInput } from "@tasklane/core";
import { z } from "zod";
import { Arg, Ctx, ID, Mutation, Resolver } from "type-graphql";
import { requireOperator } from "../../auth/guards.js";
import type { GatewayContext } from "../context.js";
import { idArgSchema } from "../input-schemas.js";
import { ConsoleSession, ConsoleUser } from "../types/console-user.js";

const emailSchema = z
  .string()
  .trim()
  .toLowerCase()
  .max(254)
  .regex(/^[^\s@]+@[^\s@]+\.[^\s@]+$/, "must be an email address");

export const createConsoleUserArgsSchema = z.object({
  tenantId: idArgSchema,
  email: emailSchema,
  password: z.string().min(10, "must be at least 10 characters").max(200),
});

/** Sign-in input is never reported as invalid (that would tell what the policy is): it just fails. */
const passwordAttemptSchema = z.string().min(1).max(1000);

const toConsoleUser = (r: { id: string; tenantId: string; email: string; createdAt: Date }): ConsoleUser => ({
  id: r.id,
  tenantId: r.tenantId,
  email: r.email,
  createdAt: r.createdAt,
});

@Resolver(() => ConsoleUser)
export class ConsoleUserResolver {
  @Mutation(() => ConsoleUser, { description: "operator (admin token): a console user who signs in for this tenant" })
  async createConsoleUser(
    @Arg("tenantId", () => ID) tenantId: string,
    @Arg("email", () => String) email: string,
    @Arg("password", () => String) password: string,
    @Ctx() ctx: GatewayContext,
  ): Promise<ConsoleUser> {
    requireOperator(ctx.principal);
    const args = parseInput(createConsoleUserArgsSchema, { tenantId, email, password });
    const row = await ctx.services.consoleUsers.create(args.tenantId, args.email, args.password);
    ctx.log.info({ tenantId: row.tenantId, consoleUserId: row.id }, "console user created");
    return toConsoleUser(row);
  }

  @Mutation(() => ConsoleSession, {
    description: "checks a console user's password; answers a tenant API key that expires (UNAUTHENTICATED for any wrong email or password)",
  })
  async consoleSignIn(
    @Arg("email", () => String) email: string,
    @Arg("password", () => String) password: string,
    @Ctx() ctx: GatewayContext,
  ): Promise<ConsoleSession> {
    const parsedEmail = emailSchema.safeParse(email);
    const parsedPassword = passwordAttemptSchema.safeParse(password);
    const grant = await ctx.services.consoleUsers.signIn(
      parsedEmail.success ? parsedEmail.data : null,
      parsedPassword.success ? parsedPassword.data : "",
    );
    ctx.log.info({ tenantId: grant.user.tenantId, consoleUserId: grant.user.id, apiKeyId: grant.apiKeyId }, "console sign-in");
    return { token: grant.token, apiKeyId: grant.apiKeyId, expiresAt: grant.expiresAt, user: toConsoleUser(grant.user) };
  }
}

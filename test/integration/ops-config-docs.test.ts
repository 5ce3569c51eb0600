/**
 * The README's Configuration table is what an operator sets a deployment up
 * from: every variable an app reads through its packages/config schema has a
 * row there (variables read straight from process.env, such as the console's
 * and OpenTelemetry's, are documented beside their feature and not checked).
 */
import { describe, expect, it } from "vitest";
import { gatewayEnvSchema, notifierEnvSchema, schedulerEnvSchema, workerEnvSchema } from "@tasklane/config";
import { read } from "../helpers/infra-facts.js";

/** Variable names of the rows of README's "## Configuration" table. */
function documentedVariables(): Set<string> {
  const readme = read("README.md");
  const start = readme.indexOf("## Configuration");
  const section = readme.slice(start, readme.indexOf("\n## ", start + 1));
  return new Set([...section.matchAll(/^\| `([A-Z][A-Z0-9_]*)` \|/gm)].map((m) => m[1] as string));
}

describe("README Configuration", () => {
  it("has a row for every variable the gateway, scheduler, worker and notifier read", () => {
    const documented = documentedVariables();
    expect(documented.size).toBeGreaterThan(20);
    const read = new Set([gatewayEnvSchema, schedulerEnvSchema, workerEnvSchema, notifierEnvSchema].flatMap((schema) => Object.keys(schema.shape)));
    expect([...read].filter((name) => !documented.has(name)).sort()).toEqual([]);
  });
});

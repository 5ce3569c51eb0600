import { createRequire } from "node:module";
import { defineConfig } from "vitest/config";
import { SlowestFirstSequencer } from "./test/slowest-first-sequencer.js";

const require = createRequire(import.meta.url);
// Dependencies load graphql's CJS build; pin every import to it so there is one realm.
const graphqlAlias = [{ find: /^graphql$/, replacement: require.resolve("graphql") }];

/**
 * Integration files that are also security evidence (docs/security.md): they
 * run once, in the "security" project, beside test/security/*.
 */
const securityEvidence = [
  "test/integration/gateway-auth.test.ts",
  "test/integration/gateway-scopes.test.ts",
  "test/integration/gateway-http.test.ts",
  "test/integration/gateway-limits.test.ts",
  "test/integration/tenancy-isolation.test.ts",
  "test/integration/tenancy-rls.test.ts",
  "test/integration/realtime-webhooks.test.ts",
];

export default defineConfig({
  resolve: { alias: graphqlAlias },
  test: {
    // The longest files first, with or without Vitest's cache of earlier runs (a fresh clone has none).
    sequence: { sequencer: SlowestFirstSequencer },
    projects: [
      {
        resolve: { alias: graphqlAlias },
        test: {
          name: "unit",
          include: ["packages/*/src/**/*.test.ts", "apps/*/src/**/*.test.ts", "apps/console/lib/**/*.test.ts"],
          environment: "node",
          // Files in one worker share the module cache: loading the packages again for
          // each file was ~0.8 s of a 2-core machine per file (193 s of import in a full run).
          isolate: false,
          // Unit tests first; integration files (real processes, databases) after.
          sequence: { groupOrder: 0 },
          // Some cron suites walk thousands of occurrences; a loaded 2-core box needs headroom.
          testTimeout: 30_000,
        },
      },
      {
        resolve: { alias: graphqlAlias },
        test: {
          name: "integration",
          include: ["test/**/*.test.ts"],
          exclude: ["test/security/**", ...securityEvidence, "**/node_modules/**"],
          sequence: { groupOrder: 1 },
          environment: "node",
          testTimeout: 60_000,
          hookTimeout: 120_000,
          // As in the unit project: no module reload per file. Tests restore what they change.
          isolate: false,
          // Files run in parallel processes; each owns its database and Redis DB index.
          fileParallelism: true,
          maxWorkers: 2,
        },
      },
      {
        resolve: { alias: graphqlAlias },
        test: {
          name: "security",
          include: ["test/security/**/*.test.ts", ...securityEvidence],
          // After integration: these files start whole platforms of processes.
          sequence: { groupOrder: 2 },
          environment: "node",
          testTimeout: 60_000,
          hookTimeout: 120_000,
          isolate: false,
          fileParallelism: true,
          maxWorkers: 2,
        },
      },
    ],
  },
});

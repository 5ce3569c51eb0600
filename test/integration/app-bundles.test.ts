/**
 * The apps run from their build's bundle (scripts/bundle-app.mjs,
 * dist/bundle/main.js), which production, `npm start`, the bench and every
 * process test start. What bundling could break and the other tests would
 * not pin down: the entry holds stop signals before the rest is even read;
 * each file a module reads at run time is named relative to the bundle, so
 * it exists there and the workspace can move; classes the bundler renames
 * keep their names; and type-graphql's decorators still make the schema.
 */
import { readdirSync, readFileSync, existsSync } from "node:fs";
import path from "node:path";
import { buildClientSchema, getIntrospectionQuery, lexicographicSortSchema, printSchema, type IntrospectionQuery } from "graphql";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { appNodeArgs, repoRoot, type AppName } from "../helpers/app-process.js";
import { gql, randomSuffix, createTestRedis, type TestRedis } from "../helpers/platform.js";
import { createTenantVia, startGatewayProcess, type GatewayProcess } from "../helpers/ready-apps.js";
import { createTestDatabase, type TestDatabase } from "../helpers/test-database.js";

const APPS: AppName[] = ["gateway", "scheduler", "worker", "notifier"];

const bundleDir = (app: AppName) => path.join(repoRoot, "apps", app, "dist", "bundle");
const chunks = new Map<AppName, { file: string; code: string }[]>();
/** Each of the app's chunks (~10 MB in all), read once for the file's tests. */
function chunksOf(app: AppName): { file: string; code: string }[] {
  let read = chunks.get(app);
  if (read === undefined) {
    read = readdirSync(bundleDir(app))
      .filter((f) => f.endsWith(".js"))
      .map((f) => ({ file: f, code: readFileSync(path.join(bundleDir(app), f), "utf8") }));
    chunks.set(app, read);
  }
  return read;
}

describe.each(APPS)("%s's bundle", (app) => {
  it("is what the app's start script runs", () => {
    expect(appNodeArgs(app).at(-1)).toBe(path.join(bundleDir(app), "main.js"));
  });

  it("holds stop signals in its entry before it loads the rest, a chunk of its own", () => {
    const main = readFileSync(path.join(bundleDir(app), "main.js"), "utf8");
    const hold = main.indexOf("holdStopSignals();");
    const load = main.search(/await import\("\.\/start-[\w-]+\.js"\)/);
    expect(hold).toBeGreaterThan(-1);
    expect(load).toBeGreaterThan(hold);
    // The entry's static imports are the stop signals alone (and node:url for module locations).
    const staticImports = [...main.matchAll(/^import .*?from "([^"]+)";$|^import "([^"]+)";$/gm)].map((m) => m[1] ?? m[2]);
    expect(staticImports.filter((s) => !s?.startsWith("node:"))).toEqual([expect.stringMatching(/^\.\/stop-signals-[\w-]+\.js$/)]);
  });

  it("names every file its modules read at run time relative to itself, and each exists", () => {
    const located: string[] = [];
    for (const { code } of chunksOf(app)) {
      expect(code).not.toContain(repoRoot);
      for (const m of code.matchAll(/new URL\("([^"]+)", import\.meta\.url\)|__bundledPath\("([^"]+)"\)/g)) located.push((m[1] ?? m[2]) as string);
    }
    // Every app migrates and loads the Lua scripts, from packages/db and packages/queue.
    expect(located).toEqual(expect.arrayContaining(["../../../../packages/db/dist/migrations/apply-migrations.js", "../../../../packages/queue/dist/scripts/load-scripts.js"]));
    for (const relative of new Set(located)) expect(existsSync(path.join(bundleDir(app), decodeURIComponent(relative))), relative).toBe(true);
  });
});

it("keeps the name of each class the bundler renamed (two modules' SyntaxError, say), which errors and logs show", () => {
  const renamed = APPS.flatMap((app) =>
    chunksOf(app).flatMap(({ file, code }) =>
      [...code.matchAll(/^var ([A-Za-z_]\w*)\$\d+ = class\b[^\n]*\n\s*static \{\s*__name\(this, "([^"]+)"\)|^var ([A-Za-z_]\w*)\$\d+ = class\b/gm)].map((m) => ({ where: `${app}/${file}`, name: m[1] ?? m[3], kept: m[2] })),
    ),
  );
  expect(renamed.length, "no renamed class left to check").toBeGreaterThan(0);
  for (const { where, name, kept } of renamed) expect(kept, `class ${name} in ${where}`).toBe(name);
});

describe("the bundled gateway", () => {
  let tdb: TestDatabase;
  let redis: TestRedis;
  let gateway: GatewayProcess;
  const adminToken = `admin-${randomSuffix(16)}`;
  beforeAll(async () => {
    tdb = await createTestDatabase("bundle");
    redis = createTestRedis();
    gateway = await startGatewayProcess({ DATABASE_URL: tdb.url, REDIS_URL: redis.url, REDIS_KEY_PREFIX: redis.prefix, LOG_LEVEL: "warn" }, adminToken);
  });
  afterAll(async () => {
    await gateway?.app.stop();
    await redis?.cleanup();
    await tdb?.drop();
  });

  it("serves the committed SDL: type-graphql's decorators and their metadata survive bundling", async () => {
    const { apiKey } = await createTenantVia(gateway.url, adminToken, "bundle");
    const res = await gql<IntrospectionQuery>(gateway.url, getIntrospectionQuery({ descriptions: true, specifiedByUrl: true }), {}, apiKey);
    expect(res.errors).toBeUndefined();
    const served = `${printSchema(lexicographicSortSchema(buildClientSchema(res.data as IntrospectionQuery)))}\n`;
    expect(served).toBe(readFileSync(path.join(repoRoot, "apps/gateway/schema.graphql"), "utf8"));
  });
});

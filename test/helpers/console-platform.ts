/**
 * The whole platform for the console's browser tests: an in-process gateway,
 * scheduler, worker and notifier processes, the built console (`next start`),
 * a fresh database, a Redis key prefix of its own on DB 0 (never flushed) and
 * Debian's headless Chromium driven by playwright-core; and on it, sessions:
 * a tenant, a PUSH receiver whose answers the test steers per task type, and
 * a browser context and page. A file has the platform with one session
 * (startConsolePlatform) or shares it among suites (startSharedConsolePlatform).
 */
import { mkdir } from "node:fs/promises";
import path from "node:path";
import { chromium, type Browser, type BrowserContext, type Page } from "playwright-core";
import { repoRoot, startApp, waitFor, type AppProcess } from "./app-process.js";
import { startConsole, type ConsoleProcess } from "./console-process.js";
import { startReceiver, type HttpReceiver } from "./http-receiver.js";
import { createTenant, createTestDatabase, createTestRedis, gql, startGateway, type CreatedTenant, type GqlResponse, type StartedGateway, type TestDatabase } from "./platform.js";

const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
/** The flags ENVIRONMENT.md lists for Debian's chromium here; never a downloaded browser. */
const CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"];
const SCREENSHOT_DIR = path.join(repoRoot, "docs/screenshots");

export interface TaskView {
  id: string;
  status: string;
  attempts: number;
}

/** What the receiver answers for a task type: an HTTP status, optionally after a delay. */
export type Behaviour = (attempt: number) => { status: number; delayMs?: number };

export interface ConsolePlatform {
  tdb: TestDatabase;
  gateway: StartedGateway;
  receiver: HttpReceiver;
  consoleApp: ConsoleProcess;
  tenant: CreatedTenant;
  context: BrowserContext;
  page: Page;
  behaviour: Map<string, Behaviour>;
  api<T = Record<string, unknown>>(query: string, variables?: Record<string, unknown>, key?: string): Promise<GqlResponse<T>>;
  /** submitTask to the "hooks" queue unless the input names another. */
  submit(input: Record<string, unknown>): Promise<TaskView>;
  statusOf(id: string): Promise<string | undefined>;
  until(id: string, status: string): Promise<unknown>;
  /** Opens a console path and fails if the page is the error boundary. */
  open(pathname: string): Promise<void>;
  /**
   * Takes the gateway away (closed: its port refuses connections) and answers a function that
   * starts it again on the same port, address and operator token, as after a restart. On a shared
   * platform the gateway is every session's.
   */
  stopGateway(): Promise<() => Promise<void>>;
  /** docs/screenshots/<name>.png, only with SAVE_SCREENSHOTS=1 (CI never rewrites the committed pictures). */
  screenshot(name: string): Promise<void>;
  /** Closes the session's context and receiver; the platform too when it is the file's own (startConsolePlatform). */
  stop(): Promise<void>;
}

/**
 * The platform under a console, shared by the sessions opened on it: one
 * database, Redis prefix, gateway, scheduler, worker, notifier, console and
 * browser. Starting these costs a file ~12 s of a 2-core machine, so the
 * console's shorter journeys share one (console-pages.test.ts), each in a
 * session of its own tenant.
 */
export interface SharedConsolePlatform {
  /** A new tenant with its own PUSH receiver, browser context and page on this platform. */
  session(tenantName: string, limits: Record<string, unknown>): Promise<ConsolePlatform>;
  stop(): Promise<void>;
}

interface ConsoleInfrastructure {
  tdb: TestDatabase;
  /** The one answering now (stopGateway's restart replaces it). */
  gateway(): StartedGateway;
  consoleApp: ConsoleProcess;
  browser: Browser;
  stopGateway(): Promise<() => Promise<void>>;
  stop(): Promise<void>;
}

async function startConsoleInfrastructure(): Promise<ConsoleInfrastructure> {
  const tdb = await createTestDatabase("console");
  const redis = createTestRedis();
  // Whatever started before a failure in this setup is undone here: a missing browser
  // must not leave the apps running as orphans of the test run.
  const undo: (() => Promise<unknown>)[] = [() => tdb.drop(), () => redis.cleanup()];
  const started = async <T>(value: Promise<T>, stop: (v: T) => Promise<unknown>): Promise<T> => {
    try {
      const v = await value;
      undo.push(() => stop(v));
      return v;
    } catch (error) {
      for (const step of undo.reverse()) await step().catch(() => undefined);
      throw error;
    }
  };
  let gateway = await started(startGateway({ databaseUrl: tdb.url, redis, env: { ALLOW_PRIVATE_TARGETS: "1" } }), (g) => g.close());
  let gatewayUp = true;
  const env = { DATABASE_URL: tdb.url, REDIS_URL: redis.url, REDIS_KEY_PREFIX: redis.prefix, ALLOW_PRIVATE_TARGETS: "1", LOG_LEVEL: "warn" };
  const apps: AppProcess[] = await started(
    Promise.resolve([startApp("scheduler", env), startApp("worker", env), startApp("notifier", env)]),
    (list) => Promise.all(list.map((a) => a.stop())),
  );
  const consoleApp = await started(startConsole(gateway.url), (c) => c.stop());
  const browser: Browser = await started(chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS }), (b) => b.close());
  return {
    tdb,
    gateway: () => gateway,
    consoleApp,
    browser,
    async stopGateway() {
      const port = new URL(gateway.url).port;
      const adminToken = gateway.adminToken;
      await gateway.close();
      gatewayUp = false;
      return async () => {
        if (gatewayUp) return;
        gateway = await startGateway({ databaseUrl: tdb.url, redis, env: { ALLOW_PRIVATE_TARGETS: "1", PORT: port, ADMIN_TOKEN: adminToken } });
        gatewayUp = true;
      };
    },
    async stop() {
      await browser.close();
      await consoleApp.stop();
      await Promise.all(apps.map((a) => a.stop()));
      if (gatewayUp) await gateway.close();
      await redis.cleanup();
      await tdb.drop();
    },
  };
}

/** A tenant on `infra` with its own receiver, browser context and page; `stop` closes those, then runs `andThen`. */
async function openConsoleSession(
  infra: ConsoleInfrastructure,
  tenantName: string,
  limits: Record<string, unknown>,
  andThen: () => Promise<void> = async () => undefined,
): Promise<ConsolePlatform> {
  // Made first: a tenant left behind by a later failure harms nothing.
  const tenant = await createTenant(infra.gateway(), tenantName, limits);
  const behaviour = new Map<string, Behaviour>();
  const receiver = await startReceiver(async (req, res) => {
    const body = req.json as { type: string; attempt: number };
    const answer = behaviour.get(body.type)?.(body.attempt) ?? { status: 200 };
    if (answer.delayMs) await new Promise((r) => setTimeout(r, answer.delayMs));
    res.writeHead(answer.status, { "content-type": "application/json" }).end(JSON.stringify({ handled: body.type, attempt: body.attempt }));
  });
  const context = await infra.browser.newContext({ viewport: { width: 1280, height: 860 }, deviceScaleFactor: 1 }).catch(async (error: unknown) => {
    await receiver.close();
    throw error;
  });
  const page = await context.newPage().catch(async (error: unknown) => {
    await context.close().catch(() => undefined);
    await receiver.close();
    throw error;
  });
  const { consoleApp } = infra;
  const api = <T = Record<string, unknown>>(query: string, variables?: Record<string, unknown>, key = tenant.apiKey) => gql<T>(infra.gateway().url, query, variables, key);
  const statusOf = async (id: string) => (await api<{ task: TaskView | null }>(`query ($id: ID!) { task(id: $id) { id status attempts } }`, { id })).data?.task?.status;
  return {
    tdb: infra.tdb,
    get gateway() {
      return infra.gateway();
    },
    receiver,
    consoleApp,
    tenant,
    context,
    page,
    behaviour,
    api,
    statusOf,
    async submit(input) {
      const res = await api<{ submitTask: TaskView }>(`mutation ($i: SubmitTaskInput!) { submitTask(input: $i) { id status attempts } }`, { i: { queue: "hooks", ...input } });
      if (!res.data?.submitTask) throw new Error(JSON.stringify(res.errors));
      return res.data.submitTask;
    },
    until: (id, status) => waitFor(`task ${id} to be ${status}`, async () => (await statusOf(id)) === status, 45_000, 100),
    async open(pathname) {
      await page.goto(`${consoleApp.url}${pathname}`);
      await page.waitForLoadState("domcontentloaded");
      // The route's loading skeleton streams first; the page proper replaces it once its data is in.
      await page.getByText("Loading…", { exact: true }).first().waitFor({ state: "detached", timeout: 30_000 });
      if ((await page.getByText("This page could not be shown").count()) > 0) throw new Error(`${pathname} rendered the error boundary`);
    },
    stopGateway: () => infra.stopGateway(),
    async screenshot(name) {
      if (process.env.SAVE_SCREENSHOTS !== "1") return;
      await mkdir(SCREENSHOT_DIR, { recursive: true });
      // From the top, once charts have finished their first layout.
      await page.evaluate(() => window.scrollTo(0, 0));
      await page.waitForTimeout(400);
      await page.screenshot({ path: path.join(SCREENSHOT_DIR, `${name}.png`), fullPage: true });
    },
    async stop() {
      await context.close();
      await receiver.close();
      await andThen();
    },
  };
}

/** The platform with one session: the file's own, stopped with it. */
export async function startConsolePlatform(tenantName: string, limits: Record<string, unknown>): Promise<ConsolePlatform> {
  const infra = await startConsoleInfrastructure();
  try {
    return await openConsoleSession(infra, tenantName, limits, () => infra.stop());
  } catch (error) {
    await infra.stop().catch(() => undefined);
    throw error;
  }
}

/** The platform for several sessions (each its own tenant), stopped once they are done. */
export async function startSharedConsolePlatform(): Promise<SharedConsolePlatform> {
  const infra = await startConsoleInfrastructure();
  return {
    session: (tenantName, limits) => openConsoleSession(infra, tenantName, limits),
    stop: () => infra.stop(),
  };
}

/** A console user of the platform's tenant, made with the operator token (createConsoleUser); throws if refused. */
export async function createConsoleUser(p: ConsolePlatform, email: string, password: string): Promise<void> {
  const res = await gql(
    p.gateway.url,
    `mutation ($t: ID!, $e: String!, $p: String!) { createConsoleUser(tenantId: $t, email: $e, password: $p) { id } }`,
    { t: p.tenant.tenantId, e: email, p: password },
    p.gateway.adminToken,
  );
  if (res.errors) throw new Error(`createConsoleUser failed: ${JSON.stringify(res.errors)}`);
}

/**
 * A console user of the platform's tenant, signed in on `p.page` through the sign-in form
 * (the console sends an anonymous visitor there), left on the page asked for (Tasks unless told).
 */
export async function signInNewConsoleUser(p: ConsolePlatform, email: string, password: string, landing = { path: "/tasks", heading: "Tasks" }): Promise<void> {
  await createConsoleUser(p, email, password);
  await p.page.goto(`${p.consoleApp.url}${landing.path}`);
  await p.page.waitForURL(/\/signin/);
  await p.page.getByLabel("Email").fill(email);
  await p.page.getByLabel("Password").fill(password);
  await p.page.getByRole("button", { name: "Sign in" }).click();
  await p.page.getByRole("heading", { name: landing.heading, level: 1 }).waitFor({ timeout: 30_000 });
}

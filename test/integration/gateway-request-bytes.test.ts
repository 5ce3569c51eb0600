/**
 * The gateway's bound on request bodies held at once (MAX_INFLIGHT_REQUEST_BYTES,
 * at its 16 MiB minimum here; one tenant at most half, callers without a valid
 * credential 1 MiB together): past it a request is answered 503 OVERLOADED with
 * Retry-After before its body is read, and changes nothing; a body's bytes are
 * given back when its answer is sent. Requests
 * here hold their bytes by declaring a Content-Length and sending the body
 * only partly, as a slow upload does.
 */
import http from "node:http";
import { describe, expect, it } from "vitest";
import { useGateway } from "../helpers/gateway-fixture.js";
import { createTenant, gql } from "../helpers/platform.js";
import { sampleValue } from "../helpers/prometheus-text.js";

const MIB = 1024 * 1024;
const SUBMIT = `mutation ($type: String!) { submitTask(input: { type: $type }) { id } }`;

interface Answer {
  status: number;
  retryAfter: string | undefined;
  body: { data?: unknown; errors?: Array<{ extensions?: { code?: string } }> };
}

/**
 * A submitTask POST of exactly `bytes` bytes (JSON whitespace makes up the
 * size) whose body is sent in two parts: `finish()` sends the rest and
 * resolves with the answer.
 */
function heldSubmit(url: string, apiKey: string, type: string, bytes: number) {
  return heldPost(url, `Bearer ${apiKey}`, type, bytes);
}

function heldPost(url: string, authorization: string, type: string, bytes: number, headers: http.OutgoingHttpHeaders = {}) {
  const head = JSON.stringify({ query: SUBMIT, variables: { type } }).slice(0, -1);
  const rest = " ".repeat(bytes - head.length - 1) + "}";
  let answer!: Promise<Answer>;
  const req = http.request(url, {
    method: "POST",
    headers: { "content-type": "application/json", "content-length": bytes, authorization, ...headers },
  });
  answer = new Promise((resolve, reject) => {
    req.on("response", (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () =>
        resolve({ status: res.statusCode ?? 0, retryAfter: res.headers["retry-after"], body: JSON.parse(Buffer.concat(chunks).toString("utf8")) }),
      );
    });
    req.on("error", reject);
  });
  req.write(head);
  return {
    answer,
    finish(): Promise<Answer> {
      req.end(rest);
      return answer;
    },
    /** Leaves without sending the rest. */
    abandon(): void {
      answer.catch(() => undefined);
      req.destroy();
    },
  };
}

async function metric(base: string, name: string): Promise<number | undefined> {
  return sampleValue(await (await fetch(`${base}/metrics`)).text(), name);
}

describe("gateway bound on request bodies held at once", () => {
  const platform = useGateway({ env: { MAX_INFLIGHT_REQUEST_BYTES: String(16 * MIB) } });

  it("refuses past a tenant's half and past the whole bound, before reading the body, and admits again once bodies are answered", async () => {
    const { gateway } = platform;
    const base = gateway.url.replace(/\/graphql$/, "");
    const [a, b, c] = await Promise.all([createTenant(gateway, "bytes-a"), createTenant(gateway, "bytes-b"), createTenant(gateway, "bytes-c")]);

    // A holds its whole half (8 MiB); its next request is refused, while B still gets in.
    const heldA = heldSubmit(gateway.url, a.apiKey, "held-a", 8 * MIB);
    await expect.poll(() => metric(base, "tasklane_gateway_held_request_bytes"), { timeout: 10_000 }).toBe(8 * MIB);
    const refusedA = await heldSubmit(gateway.url, a.apiKey, "refused-a", 1024).answer;
    expect(refusedA.status).toBe(503);
    expect(refusedA.retryAfter).toBe("1");
    expect(refusedA.body.errors?.[0]?.extensions?.code).toBe("OVERLOADED");
    const smallB = await gql<{ submitTask: { id: string } }>(gateway.url, SUBMIT, { type: "small-b" }, b.apiKey);
    expect(smallB.status).toBe(200);
    expect(smallB.data?.submitTask.id).toMatch(/^task_/);

    // B holds the other half: the bound is full, and C, holding nothing, is refused too.
    const heldB = heldSubmit(gateway.url, b.apiKey, "held-b", 8 * MIB);
    await expect.poll(() => metric(base, "tasklane_gateway_held_request_bytes"), { timeout: 10_000 }).toBe(16 * MIB);
    const refusedC = await gql(gateway.url, SUBMIT, { type: "refused-c" }, c.apiKey);
    expect(refusedC.status).toBe(503);
    expect(refusedC.errors?.[0]?.extensions?.code).toBe("OVERLOADED");
    // A request without a body holds nothing and is served.
    expect((await fetch(`${base}/livez`)).status).toBe(200);

    // Answered bodies give their bytes back: A's held request runs, then C gets in.
    const doneA = await heldA.finish();
    expect(doneA.status).toBe(200);
    expect(doneA.body.errors).toBeUndefined();
    const smallC = await gql<{ submitTask: { id: string } }>(gateway.url, SUBMIT, { type: "small-c" }, c.apiKey);
    expect(smallC.status).toBe(200);
    expect((await heldB.finish()).status).toBe(200);
    await expect.poll(() => metric(base, "tasklane_gateway_held_request_bytes"), { timeout: 10_000 }).toBe(0);

    // The refused requests changed nothing; the admitted ones each made their task.
    const { rows } = await platform.database.db.pool.query<{ type: string }>("SELECT type FROM tasks ORDER BY type");
    expect(rows.map((r) => r.type)).toEqual(["held-a", "held-b", "small-b", "small-c"]);
    expect(await metric(base, "tasklane_gateway_request_bytes_refused_total")).toBe(2);
  });

  it("counts a tenant's keys against one half, and callers without a valid credential against 1 MiB together", async () => {
    const { gateway } = platform;
    const base = gateway.url.replace(/\/graphql$/, "");
    const d = await createTenant(gateway, "bytes-d");
    const second = await gql<{ createApiKey: { secret: string } }>(gateway.url, `mutation { createApiKey(name: "second") { secret } }`, {}, d.apiKey);
    const secondKey = second.data!.createApiKey.secret;
    const refusedBefore = (await metric(base, "tasklane_gateway_request_bytes_refused_total")) ?? 0;

    const heldD = heldSubmit(gateway.url, d.apiKey, "held-d", 8 * MIB);
    await expect.poll(() => metric(base, "tasklane_gateway_held_request_bytes"), { timeout: 10_000 }).toBe(8 * MIB);
    const viaSecondKey = await heldSubmit(gateway.url, secondKey, "second-key-d", 1024).answer;
    expect(viaSecondKey.status).toBe(503);

    // Made-up credentials are one caller: the first holds the anonymous MiB, the next is refused.
    const madeUp = heldPost(gateway.url, "Bearer tl_made_up_1", "anon", 1 * MIB);
    await expect.poll(() => metric(base, "tasklane_gateway_held_request_bytes"), { timeout: 10_000 }).toBe(9 * MIB);
    const madeUpAgain = await heldPost(gateway.url, "Bearer tl_made_up_2", "anon", 1024).answer;
    expect(madeUpAgain.status).toBe(503);
    expect(madeUpAgain.body.errors?.[0]?.extensions?.code).toBe("OVERLOADED");

    // The made-up credential's admitted request is answered as any unauthenticated one.
    const anonymous = await madeUp.finish();
    expect(anonymous.body.errors?.[0]?.extensions?.code).toBe("UNAUTHENTICATED");
    expect((await heldD.finish()).body.errors).toBeUndefined();
    expect(await metric(base, "tasklane_gateway_request_bytes_refused_total")).toBe(refusedBefore + 2);
    const tasks = await gql<{ tasks: { nodes: Array<{ type: string }> } }>(gateway.url, `{ tasks(first: 10) { nodes { type } } }`, {}, d.apiKey);
    expect(tasks.data?.tasks.nodes.map((t) => t.type)).toEqual(["held-d"]);
  });

  it("charges a compressed body as the largest body, and answers a body too large for the anonymous allowance UNAUTHENTICATED, not OVERLOADED", async () => {
    const { gateway } = platform;
    const base = gateway.url.replace(/\/graphql$/, "");
    await expect.poll(() => metric(base, "tasklane_gateway_held_request_bytes"), { timeout: 10_000 }).toBe(0);
    const e = await createTenant(gateway, "bytes-e");
    const refusedBefore = (await metric(base, "tasklane_gateway_request_bytes_refused_total")) ?? 0;

    // Express inflates it up to MAX_BODY_BYTES (8 MiB): 4 KiB of gzip says nothing of what it will hold.
    const gzipped = heldPost(gateway.url, `Bearer ${e.apiKey}`, "gzipped", 4096, { "content-encoding": "gzip" });
    try {
      await expect.poll(() => metric(base, "tasklane_gateway_held_request_bytes"), { timeout: 10_000 }).toBe(8 * MIB);
    } finally {
      gzipped.abandon();
    }
    await expect.poll(() => metric(base, "tasklane_gateway_held_request_bytes"), { timeout: 10_000 }).toBe(0);

    // 2 MiB never fits the anonymous 1 MiB: a revoked key told OVERLOADED would send it again forever.
    const tooLarge = await heldPost(gateway.url, "Bearer tl_made_up_3", "anon-large", 2 * MIB).answer;
    expect(tooLarge.status).toBe(200);
    expect(tooLarge.retryAfter).toBeUndefined();
    expect(tooLarge.body.errors?.[0]?.extensions?.code).toBe("UNAUTHENTICATED");
    expect(await metric(base, "tasklane_gateway_request_bytes_refused_total")).toBe(refusedBefore);
    const { rows } = await platform.database.db.pool.query("SELECT 1 FROM tasks WHERE type IN ('gzipped', 'anon-large')");
    expect(rows).toHaveLength(0);
  });
});

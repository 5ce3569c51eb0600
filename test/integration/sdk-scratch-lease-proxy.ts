// SCRATCH (to be deleted): stands in for the gateway's lease resolvers using @tasklane/db, forwarding everything else.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { apiKeyPrefixOf, decideAfterFailure, parseLeaseToken } from "@tasklane/core";
import { completeAttempts, extendLease, failAttempt, getTask, startAttemptsFromQueue, type Database, type TaskRecord } from "@tasklane/db";
import { toTask } from "@tasklane/gateway/graphql/mappers";

const conflict = { errors: [{ message: "Lease is no longer held", extensions: { code: "CONFLICT", reason: "STALE_LEASE" } }], data: null };
const task = (r: TaskRecord) => toTask(r);

export async function startLeaseProxy(db: Database, target: string) {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      void (async () => {
        const raw = Buffer.concat(chunks).toString("utf8");
        const body = JSON.parse(raw) as { query: string; variables: Record<string, any> };
        const m = /\b(leaseTasks|heartbeat|completeTask|failTask)\s*\(/.exec(body.query);
        if (!m) {
          const r = await fetch(target, { method: "POST", headers: { "content-type": "application/json", authorization: String(req.headers.authorization ?? "") }, body: raw });
          const headers: Record<string, string> = { "content-type": "application/json" };
          for (const h of ["retry-after", "x-request-id"]) { const v = r.headers.get(h); if (v) headers[h] = v; }
          res.writeHead(r.status, headers).end(await r.text());
          return;
        }
        const key = String(req.headers.authorization ?? "").replace(/^Bearer /, "");
        const prefix = apiKeyPrefixOf(key);
        const tenantId = (await db.pool.query("SELECT tenant_id FROM api_keys WHERE prefix = $1", [prefix])).rows[0]?.tenant_id as string;
        const v = body.variables;
        let out: unknown;
        if (m[1] === "leaseTasks") {
          const queueId = (await db.pool.query("SELECT id FROM queues WHERE tenant_id = $1 AND name = $2", [tenantId, v.queue])).rows[0]?.id as string;
          const deadline = Date.now() + (v.waitSeconds ?? 0) * 1000;
          for (;;) {
            const started = await startAttemptsFromQueue(db, queueId, v.max ?? 1, 60, { workerId: v.workerId, leaseMs: (v.leaseSeconds ?? 30) * 1000, actor: "proxy" });
            if (started.length > 0 || Date.now() >= deadline || res.destroyed) {
              out = { data: { leaseTasks: started.map((s) => ({ task: task(s.task), leaseToken: s.leaseToken, leaseExpiresAt: s.leaseExpiresAt })) } };
              break;
            }
            await new Promise((r) => setTimeout(r, 50));
          }
        } else {
          const gen = parseLeaseToken(v.leaseToken)?.generation ?? -1;
          if (m[1] === "heartbeat") {
            const hb = await extendLease(db, tenantId, v.taskId, gen, (v.extendSeconds ?? 30) * 1000);
            out = hb ? { data: { heartbeat: hb } } : conflict;
          } else if (m[1] === "completeTask") {
            const r = await completeAttempts(db, [{ taskId: v.taskId, leaseGeneration: gen, result: v.result }], "proxy");
            out = r.accepted[0] ? { data: { completeTask: task(r.accepted[0]) } } : conflict;
          } else {
            const t = await getTask(db, tenantId, v.taskId);
            if (!t) out = conflict;
            else {
              const decision = decideAfterFailure({ attempt: t.attempts, maxAttempts: t.maxAttempts, retryable: v.retryable ?? true, backoff: { strategy: t.backoffStrategy, delaySeconds: t.backoffDelaySeconds, maxDelaySeconds: t.backoffMaxDelaySeconds, jitter: t.backoffJitter } });
              const r = await failAttempt(db, { taskId: v.taskId, leaseGeneration: gen, error: v.error, outcome: "FAILED", decision }, "proxy", 300_000);
              out = r.accepted[0] ? { data: { failTask: task(r.accepted[0]) } } : conflict;
            }
          }
        }
        if (!res.destroyed) res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(out));
      })().catch((e: unknown) => { console.error("proxy", e); res.writeHead(500).end(String(e)); });
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/graphql`, close: () => { server.closeAllConnections(); return new Promise<void>((r) => server.close(() => r())); } };
}

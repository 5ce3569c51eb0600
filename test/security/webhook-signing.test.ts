/**
 * Signatures checked by an independent verifier: the Standard Webhooks
 * reference library (npm `standardwebhooks`), not our signing code. Genuine
 * webhook deliveries, PUSH requests and callbacks from the real notifier and
 * worker processes verify; a changed body, a timestamp outside the library's
 * 5-minute tolerance, a wrong secret, a changed message id and a stripped
 * signature do not.
 */
import { Webhook } from "standardwebhooks";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { waitFor } from "../helpers/app-process.js";
import { startReceiver, type HttpReceiver, type ReceivedRequest } from "../helpers/http-receiver.js";
import { useAttackPlatform } from "./attack-platform.js";

const TOLERANCE_MS = 5 * 60 * 1000;
const OTHER_SECRET = `whsec_${Buffer.alloc(32, 7).toString("base64")}`;

function signedHeaders(req: ReceivedRequest): Record<string, string> {
  const pick = (name: string) => String(req.headers[name] ?? "");
  return { "webhook-id": pick("webhook-id"), "webhook-timestamp": pick("webhook-timestamp"), "webhook-signature": pick("webhook-signature") };
}

/** Why the independent verifier refuses, or "accepted". */
function verdict(secret: string, body: string, headers: Record<string, string>): string {
  try {
    new Webhook(secret).verify(body, headers);
    return "accepted";
  } catch (error: unknown) {
    return error instanceof Error ? error.message : String(error);
  }
}

/** Every way a request could be tampered with, and what the verifier must say. */
function attacks(secret: string, req: ReceivedRequest): Record<string, string> {
  const headers = signedHeaders(req);
  const sentAt = Number(headers["webhook-timestamp"]) * 1000;
  // The verifier reads the clock: move only Date, only for this one call.
  const at = (ms: number) => {
    vi.useFakeTimers({ toFake: ["Date"], now: ms });
    try {
      return verdict(secret, req.body, headers);
    } finally {
      vi.useRealTimers();
    }
  };
  return {
    genuine: verdict(secret, req.body, headers),
    "changed body": verdict(secret, req.body.replace(/"type":"/, '"type":"x'), headers),
    "appended whitespace": verdict(secret, `${req.body} `, headers),
    "wrong secret": verdict(OTHER_SECRET, req.body, headers),
    "changed message id": verdict(secret, req.body, { ...headers, "webhook-id": `${headers["webhook-id"]}x` }),
    "timestamp moved": verdict(secret, req.body, { ...headers, "webhook-timestamp": String(Number(headers["webhook-timestamp"]) - 1) }),
    "signature stripped": verdict(secret, req.body, { ...headers, "webhook-signature": "" }),
    "signature under another version": verdict(secret, req.body, { ...headers, "webhook-signature": headers["webhook-signature"]?.replace(/(^|\s)v1,/g, "$1v2,") ?? "" }),
    "received 6 minutes late": at(sentAt + TOLERANCE_MS + 60_000),
    "received 6 minutes early": at(sentAt - TOLERANCE_MS - 60_000),
  };
}

const EXPECTED = {
  genuine: "accepted",
  "changed body": "No matching signature found",
  "appended whitespace": "No matching signature found",
  "wrong secret": "No matching signature found",
  "changed message id": "No matching signature found",
  "timestamp moved": "No matching signature found",
  "signature stripped": "Missing required headers",
  "signature under another version": "No matching signature found",
  "received 6 minutes late": "Message timestamp too old",
  "received 6 minutes early": "Message timestamp too new",
};

describe("security: webhook signing, checked by an independent verifier", () => {
  let receiver: HttpReceiver;
  beforeAll(async () => {
    receiver = await startReceiver((_req, res) => {
      res.writeHead(200, { "content-type": "application/json" }).end('{"ok":true}');
    });
  });
  afterAll(async () => {
    await receiver?.close();
  });
  const allow = { ALLOW_PRIVATE_TARGETS: "1" };
  const platform = useAttackPlatform({ gatewayEnv: allow, apps: { scheduler: allow, worker: allow, notifier: allow }, canaryWebhookUrl: () => `${receiver.url}/canary` });
  const key = () => platform.canaries.apiKey;

  afterEach(() => {
    vi.useRealTimers();
  });

  it("webhook deliveries verify with the endpoint's secret, and every tampering is refused", async () => {
    const submitted = await platform.call<{ submitTask: { id: string } }>(
      `mutation ($p: JSON, $u: String) { submitTask(input: { type: "signed", payload: $p, callbackUrl: $u }) { id } }`,
      { p: { canary: platform.canaries.payloadValue }, u: `${receiver.url}/callback` },
      key(),
    );
    const taskId = submitted.data?.submitTask.id;
    const lease = await waitFor("the lease", async () => {
      const res = await platform.call<{ leaseTasks: Array<{ leaseToken: string; task: { id: string } }> }>(`mutation { leaseTasks(queue: "default", workerId: "signing", max: 10) { leaseToken task { id } } }`, {}, key());
      return res.data?.leaseTasks.find((l) => l.task.id === taskId);
    }, 15_000, 100);
    await platform.call(`mutation ($id: ID!, $t: String!) { completeTask(taskId: $id, leaseToken: $t, result: { ok: true }) { id } }`, { id: taskId, t: lease.leaseToken }, key());
    const isFor = (path: string) => (r: ReceivedRequest) => r.path === path && JSON.stringify(r.json).includes(String(taskId));
    const delivery = await waitFor("the webhook delivery", () => receiver.requests.find(isFor("/canary")), 30_000, 50);
    expect(attacks(platform.canaries.webhookSecret, delivery)).toEqual(EXPECTED);

    // The callback is signed with the tenant's signing secret, never the endpoint's.
    const callback = await waitFor("the callback", () => receiver.requests.find(isFor("/callback")), 30_000, 50);
    expect(attacks(platform.canaries.signingSecret, callback)).toEqual(EXPECTED);
    expect(verdict(platform.canaries.webhookSecret, callback.body, signedHeaders(callback))).toBe("No matching signature found");
  });

  it("PUSH requests verify with the tenant's signing secret, and every tampering is refused", async () => {
    const queue = await platform.call(`mutation ($u: String!) { upsertQueue(input: { name: "signed-push", mode: PUSH, endpointUrl: $u }) { name } }`, { u: `${receiver.url}/push` }, key());
    expect(queue.errors).toBeUndefined();
    const submitted = await platform.call<{ submitTask: { id: string } }>(`mutation { submitTask(input: { type: "push", queue: "signed-push" }) { id } }`, {}, key());
    const taskId = submitted.data?.submitTask.id;
    const push = await waitFor("the PUSH request", () => receiver.requests.find((r) => r.path === "/push" && JSON.stringify(r.json).includes(String(taskId))), 30_000, 50);
    expect(push.headers["idempotency-key"]).toBe(taskId);
    expect(attacks(platform.canaries.signingSecret, push)).toEqual(EXPECTED);
  });

  it("leaks none of the planted secrets into logs, metrics or error messages", async () => {
    expect(await platform.leaks()).toEqual([]);
  });
});

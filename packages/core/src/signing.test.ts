import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import { generateSigningSecret, signPayload, signatureHeaders, verifySignature } from "./signing.js";

// Published Standard Webhooks test vector (standard-webhooks spec/README).
const SPEC = {
  secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
  msgId: "msg_p5jXN8AQM9LWM0D4loKWxJek",
  timestampSeconds: 1614265330,
  body: '{"test": 2432232314}',
  signature: "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=",
};

function independentSignature(secret: string, msgId: string, ts: number, body: string): string {
  const key = Buffer.from(secret.replace(/^whsec_/, ""), "base64");
  return `v1,${createHmac("sha256", key).update(`${msgId}.${ts}.${body}`).digest("base64")}`;
}

describe("signing secrets", () => {
  it("are whsec_ + base64 of 32 bytes, unique", () => {
    const s = generateSigningSecret();
    expect(s).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(s.slice(6), "base64")).toHaveLength(32);
    expect(generateSigningSecret()).not.toBe(s);
  });
});

describe("signPayload", () => {
  it("matches the published vector", () => {
    expect(signPayload(SPEC)).toBe(SPEC.signature);
  });

  it("matches an independent HMAC for a fresh secret and unicode body", () => {
    const secret = generateSigningSecret();
    const body = JSON.stringify({ taskId: "task_1", note: "héllo ☃" });
    expect(signPayload({ secret, msgId: "dlv_1", timestampSeconds: 1700000000, body })).toBe(
      independentSignature(secret, "dlv_1", 1700000000, body),
    );
  });

  it("refuses a malformed secret, every time it is used", () => {
    for (let i = 0; i < 2; i++) {
      expect(() => signPayload({ ...SPEC, secret: "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw" })).toThrow(TypeError);
      expect(() => signPayload({ ...SPEC, secret: "whsec_" })).toThrow(TypeError);
    }
  });

  it("signs right with each of many secrets, one used again after the others", () => {
    const secrets = Array.from({ length: 1_100 }, () => generateSigningSecret());
    for (const secret of [...secrets, secrets[0]!]) {
      expect(signPayload({ secret, msgId: "m", timestampSeconds: 1, body: "b" })).toBe(independentSignature(secret, "m", 1, "b"));
    }
  });
});

describe("signatureHeaders", () => {
  it("signs with every secret, space separated", () => {
    const other = generateSigningSecret();
    const h = signatureHeaders([SPEC.secret, other], SPEC.msgId, SPEC.timestampSeconds, SPEC.body);
    expect(h).toEqual({
      "webhook-id": SPEC.msgId,
      "webhook-timestamp": "1614265330",
      "webhook-signature": `${SPEC.signature} ${independentSignature(other, SPEC.msgId, SPEC.timestampSeconds, SPEC.body)}`,
    });
  });

  it("needs at least one secret", () => {
    expect(() => signatureHeaders([], "m", 1, "b")).toThrow();
  });
});

describe("verifySignature", () => {
  const headers = { "webhook-id": SPEC.msgId, "webhook-timestamp": String(SPEC.timestampSeconds), "webhook-signature": SPEC.signature };
  const ok = { secrets: [SPEC.secret], headers, body: SPEC.body, nowSeconds: SPEC.timestampSeconds };

  it("accepts a valid signature", () => {
    expect(verifySignature(ok)).toBe(true);
  });

  it("matches header names case-insensitively", () => {
    const upper = { "Webhook-Id": headers["webhook-id"], "Webhook-Timestamp": headers["webhook-timestamp"], "Webhook-Signature": SPEC.signature };
    expect(verifySignature({ ...ok, headers: upper })).toBe(true);
  });

  it("accepts when any listed signature matches any secret (rotation)", () => {
    const old = generateSigningSecret();
    const h = signatureHeaders([old, SPEC.secret], SPEC.msgId, SPEC.timestampSeconds, SPEC.body);
    expect(verifySignature({ ...ok, headers: h })).toBe(true);
    expect(verifySignature({ ...ok, secrets: [generateSigningSecret(), old], headers: h })).toBe(true);
    expect(verifySignature({ ...ok, headers: { ...headers, "webhook-signature": `v1,AAAA v2,xyz ${SPEC.signature}` } })).toBe(true);
  });

  it("refuses a tampered body, id, timestamp or secret", () => {
    expect(verifySignature({ ...ok, body: '{"test": 2432232315}' })).toBe(false);
    expect(verifySignature({ ...ok, headers: { ...headers, "webhook-id": "msg_other" } })).toBe(false);
    expect(verifySignature({ ...ok, headers: { ...headers, "webhook-timestamp": "1614265331" }, nowSeconds: 1614265331 })).toBe(false);
    expect(verifySignature({ ...ok, secrets: [generateSigningSecret()] })).toBe(false);
  });

  it("refuses outside the tolerance window, either side", () => {
    expect(verifySignature({ ...ok, nowSeconds: SPEC.timestampSeconds + 300 })).toBe(true);
    expect(verifySignature({ ...ok, nowSeconds: SPEC.timestampSeconds + 301 })).toBe(false);
    expect(verifySignature({ ...ok, nowSeconds: SPEC.timestampSeconds - 301 })).toBe(false);
    expect(verifySignature({ ...ok, nowSeconds: SPEC.timestampSeconds + 1000, toleranceSeconds: 1000 })).toBe(true);
  });

  it("refuses missing or malformed headers", () => {
    expect(verifySignature({ ...ok, headers: { ...headers, "webhook-signature": undefined } })).toBe(false);
    expect(verifySignature({ ...ok, headers: { ...headers, "webhook-timestamp": "abc" } })).toBe(false);
    expect(verifySignature({ ...ok, headers: { ...headers, "webhook-signature": SPEC.signature.slice(3) } })).toBe(false);
    expect(verifySignature({ ...ok, headers: { ...headers, "webhook-signature": `v2,${SPEC.signature.slice(3)}` } })).toBe(false);
  });
});

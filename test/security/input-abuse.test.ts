/**
 * Hostile input to the gateway process: payloads just over the limit, deeply
 * nested JSON, bytes that are not UTF-8, strings the database cannot store,
 * a 1 MB string in every string field of the contract, cron and time zone
 * injection, hostile numbers. Every answer is a typed error and every table
 * is unchanged (row counts and content digests, before and after).
 */
import { readFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { MAX_PAYLOAD_BYTES } from "@tasklane/core";
import { Kind, buildSchema, getNamedType, isInputObjectType, parse, type GraphQLArgument, type GraphQLInputField, type ValueNode } from "graphql";
import { beforeAll, describe, expect, it } from "vitest";
import { codeOf } from "../helpers/platform.js";
import { useAttackPlatform, type RawAnswer } from "./attack-platform.js";
import { BAD_CRONS, BAD_NUMBERS, BAD_TIMEZONES, RAW_NUMBER_BODIES, STRING_TARGETS, replaceAt, stringLeaves } from "./input-cases.js";

const contractPath = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../shared/contract/schema.graphql");
const HUGE = "x".repeat(1024 * 1024);
const SUBMIT = `mutation ($i: SubmitTaskInput!) { submitTask(input: $i) { id } }`;

/** Variable name → the argument path it is passed at, in the operation's root field (`input.task.type`). */
function variablePaths(query: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  const walk = (value: ValueNode, at: string[]) => {
    if (value.kind === Kind.VARIABLE) out.set(value.name.value, at);
    else if (value.kind === Kind.OBJECT) for (const field of value.fields) walk(field.value, [...at, field.name.value]);
    else if (value.kind === Kind.LIST) for (const item of value.values) walk(item, at);
  };
  const operation = parse(query).definitions[0];
  if (operation?.kind !== Kind.OPERATION_DEFINITION) return out;
  const root = operation.selectionSet.selections[0];
  if (root?.kind === Kind.FIELD) for (const arg of root.arguments ?? []) walk(arg.value, [arg.name.value]);
  return out;
}

function codeIn(res: RawAnswer): string | undefined {
  return res.json?.errors?.[0]?.extensions?.code;
}

describe("security: input abuse", () => {
  const platform = useAttackPlatform();
  const key = () => platform.canaries.apiKey;
  let before: Record<string, string>;

  beforeAll(async () => {
    // Every base call of the catalogue is valid, so each refusal below is about the one value changed.
    for (const target of STRING_TARGETS) {
      const res = await platform.call(target.query, target.vars, target.operator ? platform.adminToken : key());
      expect({ op: target.op, code: codeOf(res) ?? "OK", message: res.errors?.[0]?.message }).toMatchObject({ op: target.op, code: expect.stringMatching(/^(OK|NOT_FOUND)$/) });
    }
    // The limit itself is accepted (so "just over" below is really about one byte).
    const atLimit = await platform.call(SUBMIT, { i: { type: "limit", payload: { s: "x".repeat(MAX_PAYLOAD_BYTES - 8) } } }, key());
    expect(atLimit.errors).toBeUndefined();
    before = await platform.snapshot();
  });

  it("covers every string argument and input field of the contract", async () => {
    const contract = buildSchema(await readFile(contractPath, "utf8"));
    const isText = (t: GraphQLArgument | GraphQLInputField) => ["String", "ID", "DateTime", "JSON"].includes(getNamedType(t.type).name);
    const wanted = new Set<string>();
    const walkInput = (prefix: string, arg: GraphQLArgument | GraphQLInputField, seen: Set<string>) => {
      const named = getNamedType(arg.type);
      if (isText(arg)) wanted.add(`${prefix}.${arg.name}`);
      if (isInputObjectType(named) && !seen.has(named.name)) {
        for (const field of Object.values(named.getFields())) walkInput(`${prefix}.${arg.name}`, field, new Set([...seen, named.name]));
      }
    };
    for (const root of [contract.getQueryType(), contract.getMutationType()]) {
      for (const field of Object.values(root?.getFields() ?? {})) for (const arg of field.args) walkInput(field.name, arg, new Set());
    }
    const covered = STRING_TARGETS.flatMap((target) => {
      const argumentOf = variablePaths(target.query);
      return stringLeaves(target.vars).map((leaf) => {
        const [variable, ...rest] = leaf;
        return [target.op, ...(argumentOf.get(String(variable)) ?? ["?"]), ...rest.filter((p) => typeof p === "string")].join(".");
      });
    });
    const missing = [...wanted].filter((w) => !covered.some((c) => c === w || c.startsWith(`${w}.`)));
    expect(wanted.size).toBeGreaterThan(50);
    expect(missing).toEqual([]);
  });

  it("refuses a 1 MB string in every string field with a typed error, and writes nothing", async () => {
    const attempts = STRING_TARGETS.flatMap((target) => stringLeaves(target.vars).map((leaf) => ({ target, leaf })));
    const outcomes: string[] = [];
    // A few at a time: each is a 1 MB request, and the machine has two cores.
    for (let i = 0; i < attempts.length; i += 4) {
      const batch = attempts.slice(i, i + 4).map(async ({ target, leaf }) => {
        const res = await platform.post({ query: target.query, variables: replaceAt(target.vars, leaf, HUGE) }, target.operator ? platform.adminToken : key());
        const code = codeIn(res);
        const data = res.json?.data as Record<string, unknown> | null | undefined;
        const returnedNothing = data == null || Object.values(data).every((v) => v === null || (Array.isArray(v) && v.length === 0) || (typeof v === "object" && v !== null && (v as { totalCount?: number }).totalCount === 0));
        const verdict = code === "BAD_USER_INPUT" || code === "NOT_FOUND" ? "refused" : code === undefined && returnedNothing ? "nothing found" : `UNEXPECTED ${res.status} ${res.text.slice(0, 200)}`;
        return `${target.op} ${leaf.join(".")}: ${verdict}`;
      });
      outcomes.push(...(await Promise.all(batch)));
    }
    expect(outcomes).toHaveLength(83);
    if (process.env.SECURITY_DEBUG) console.log(outcomes.join("\n"));
    expect(outcomes.filter((o) => o.includes("UNEXPECTED"))).toEqual([]);
    // Creating operations must refuse outright, never "succeed" with a truncated copy.
    expect(outcomes.filter((o) => /^(submitTask|submitTasks|createSchedule|submitWorkflow|upsertQueue|createWebhook|createApiKey|createTenant) /.test(o) && !o.endsWith("refused"))).toEqual([]);
    expect(await platform.snapshot()).toEqual(before);
  });

  it("refuses a payload one byte over the limit, 1,001 inputs, and 10,000-deep JSON in variables and in the document", async () => {
    const over = await platform.call(SUBMIT, { i: { type: "over", payload: { s: "x".repeat(MAX_PAYLOAD_BYTES - 7) } } }, key());
    expect(over.errors?.[0]).toMatchObject({ extensions: { code: "BAD_USER_INPUT" }, message: expect.stringContaining(`${MAX_PAYLOAD_BYTES} bytes`) });
    const metadata = await platform.call(SUBMIT, { i: { type: "over", metadata: { s: "x".repeat(20_000) } } }, key());
    expect(codeOf(metadata)).toBe("BAD_USER_INPUT");
    const batch = await platform.call(`mutation ($i: [SubmitTaskInput!]!) { submitTasks(inputs: $i) { id } }`, { i: Array.from({ length: 1001 }, () => ({ type: "b" })) }, key());
    expect(codeOf(batch)).toBe("BAD_USER_INPUT");

    const deepJson = `${"[".repeat(10_000)}${"]".repeat(10_000)}`;
    for (const field of ["payload", "metadata"]) {
      const res = await platform.post(`{"query":${JSON.stringify(SUBMIT)},"variables":{"i":{"type":"deep","${field}":${deepJson}}}}`, key());
      expect({ field, code: codeIn(res) }).toEqual({ field, code: "BAD_USER_INPUT" });
    }
    const literal = await platform.post({ query: `mutation { submitTask(input: { type: "deep", payload: ${deepJson} }) { id } }` }, key());
    expect(codeIn(literal)).toBe("BAD_USER_INPUT");
    expect(literal.status).toBeLessThan(500);
    const deepObject = `${'{"a":'.repeat(10_000)}1${"}".repeat(10_000)}`;
    const objects = await platform.post(`{"query":${JSON.stringify(SUBMIT)},"variables":{"i":{"type":"deep","payload":${deepObject}}}}`, key());
    expect(codeIn(objects)).toBe("BAD_USER_INPUT");
    expect(await platform.snapshot()).toEqual(before);
  });

  it("refuses bodies that are not UTF-8, and strings with NUL or unpaired surrogates in any field", async () => {
    const prefix = Buffer.from(`{"query":${JSON.stringify(SUBMIT)},"variables":{"i":{"type":"`);
    for (const bytes of [[0xff], [0xc3, 0x28], [0xed, 0xa0, 0x80], [0xf8, 0x88, 0x80, 0x80, 0x80], [0xe2, 0x82]]) {
      const res = await platform.post(Buffer.concat([prefix, Buffer.from(bytes), Buffer.from(`"}}}`)]), key());
      expect({ bytes, status: res.status, code: codeIn(res) }).toEqual({ bytes, status: 400, code: "BAD_USER_INPUT" });
    }
    const hostile = ["a\u0000b", "\ud800", "x\udc00y"];
    for (const text of hostile) {
      for (const leaf of stringLeaves(STRING_TARGETS[0]?.vars)) {
        const res = await platform.post({ query: SUBMIT, variables: replaceAt(STRING_TARGETS[0]?.vars, leaf, text) }, key());
        expect({ leaf, text: JSON.stringify(text), code: codeIn(res) }).toEqual({ leaf, text: JSON.stringify(text), code: "BAD_USER_INPUT" });
      }
      const asKey = await platform.post({ query: SUBMIT, variables: { i: { type: "k", payload: { [text]: 1 } } } }, key());
      expect(codeIn(asKey)).toBe("BAD_USER_INPUT");
    }
    const inDocument = await platform.post({ query: `mutation { submitTask(input: { type: "a\\u0000b" }) { id } }` }, key());
    expect(codeIn(inDocument)).toBe("BAD_USER_INPUT");
    expect(await platform.snapshot()).toEqual(before);
  });

  it("refuses cron and time zone injection on createSchedule and updateSchedule", async () => {
    const created = await platform.call<{ createSchedule: { id: string } }>(`mutation { createSchedule(input: { name: "target", cron: "0 0 1 1 *", task: { type: "x" } }) { id } }`, {}, key());
    const id = created.data?.createSchedule.id;
    expect(id).toBeDefined();
    const baseline = await platform.snapshot();
    const create = `mutation ($c: String!, $z: String) { createSchedule(input: { name: "inj", cron: $c, timezone: $z, task: { type: "x" } }) { id } }`;
    const update = `mutation ($id: ID!, $c: String, $z: String) { updateSchedule(id: $id, input: { cron: $c, timezone: $z }) { id } }`;
    for (const cron of BAD_CRONS) {
      expect({ cron, code: codeOf(await platform.call(create, { c: cron, z: "UTC" }, key())) }).toEqual({ cron, code: "BAD_USER_INPUT" });
      expect({ cron, code: codeOf(await platform.call(update, { id, c: cron }, key())) }).toEqual({ cron, code: "BAD_USER_INPUT" });
    }
    for (const tz of BAD_TIMEZONES) {
      expect({ tz, code: codeOf(await platform.call(create, { c: "0 0 1 1 *", z: tz }, key())) }).toEqual({ tz, code: "BAD_USER_INPUT" });
      expect({ tz, code: codeOf(await platform.call(update, { id, z: tz }, key())) }).toEqual({ tz, code: "BAD_USER_INPUT" });
    }
    expect(await platform.snapshot()).toEqual(baseline);
  });

  it("refuses negative, enormous, non-finite and non-integer numbers", async () => {
    const baseline = await platform.snapshot();
    const outcomes: string[] = [];
    for (const c of BAD_NUMBERS) {
      const res = await platform.call(c.query, c.vars, c.operator ? platform.adminToken : key());
      outcomes.push(`${c.label}: ${codeOf(res) ?? "ACCEPTED"}`);
    }
    for (const c of RAW_NUMBER_BODIES) outcomes.push(`${c.label}: ${codeIn(await platform.post(c.body, key())) ?? "ACCEPTED"}`);
    expect(outcomes.filter((o) => !o.endsWith(": BAD_USER_INPUT"))).toEqual([]);
    expect(await platform.snapshot()).toEqual(baseline);
  });

  it("leaks none of the planted secrets into logs, metrics or error messages", async () => {
    expect(await platform.leaks()).toEqual([]);
  });
});

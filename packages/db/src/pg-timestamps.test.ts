import pg from "pg";
import { describe, expect, it } from "vitest";
import { poolTypeParsers, rememberingTimestampParser } from "./pg-timestamps.js";

const TIMESTAMPTZ = pg.types.builtins.TIMESTAMPTZ;

describe("rememberingTimestampParser", () => {
  it("answers what pg's own parser answers, for repeated and new texts alike", () => {
    const own = pg.types.getTypeParser(TIMESTAMPTZ, "text") as (text: string) => unknown;
    const parse = rememberingTimestampParser(own);
    const texts = ["2026-12-02 13:10:01.123+00", "2026-12-02 13:10:01+00", "1999-01-08 04:05:06.789-08", "2026-12-02 13:10:01.123+00", "0044-03-15 12:00:00+00 BC"];
    for (const text of [...texts, ...texts]) expect((parse(text) as Date).getTime()).toBe((own(text) as Date).getTime());
    expect(parse("infinity")).toBe(own("infinity"));
    expect(parse("-infinity")).toBe(own("-infinity"));
  });

  it("parses each text once while it is recent, and hands out a Date of its own every time", () => {
    const parsed: string[] = [];
    const parse = rememberingTimestampParser((text) => {
      parsed.push(text);
      return new Date(text.replace(" ", "T").replace("+00", "Z"));
    });
    const first = parse("2026-12-02 13:10:01.123+00") as Date;
    first.setTime(0);
    const second = parse("2026-12-02 13:10:01.123+00") as Date;
    expect(second).not.toBe(first);
    expect(second.toISOString()).toBe("2026-12-02T13:10:01.123Z");
    expect(parsed).toEqual(["2026-12-02 13:10:01.123+00"]);
  });

  it("keeps 'infinity' out of what it remembers (it is not a Date)", () => {
    let calls = 0;
    const parse = rememberingTimestampParser(() => {
      calls++;
      return Number.POSITIVE_INFINITY;
    });
    parse("infinity");
    parse("infinity");
    expect(calls).toBe(2);
  });
});

describe("poolTypeParsers", () => {
  it("replaces the timestamp parsers only", () => {
    const { getTypeParser } = poolTypeParsers();
    expect(getTypeParser(TIMESTAMPTZ, "text")).not.toBe(pg.types.getTypeParser(TIMESTAMPTZ, "text"));
    expect((getTypeParser(TIMESTAMPTZ, "text") as (t: string) => Date)("2026-12-02 13:10:01.5+00").toISOString()).toBe("2026-12-02T13:10:01.500Z");
    expect(getTypeParser(pg.types.builtins.INT4, "text")).toBe(pg.types.getTypeParser(pg.types.builtins.INT4, "text"));
    expect(getTypeParser(pg.types.builtins.JSONB, "text")).toBe(pg.types.getTypeParser(pg.types.builtins.JSONB, "text"));
  });
});

import { describe, expect, it } from "vitest";
import { parseInput } from "../schemas/parse.js";
import { createScheduleInputSchema, updateScheduleInputSchema } from "../schemas/schedule.js";
import { canonicalTimezone } from "./canonical-timezone.js";
import { IANA_ZONE_NAMES } from "./iana-zone-names.js";

const TEMPLATE = { type: "tick" };

describe("canonicalTimezone", () => {
  it("gives the IANA database's case for a name typed in any case", () => {
    expect(canonicalTimezone("europe/london")).toBe("Europe/London");
    expect(canonicalTimezone("EUROPE/LONDON")).toBe("Europe/London");
    expect(canonicalTimezone("utc")).toBe("UTC");
    expect(canonicalTimezone("america/argentina/buenos_aires")).toBe("America/Argentina/Buenos_Aires");
    expect(canonicalTimezone("america/port-au-prince")).toBe("America/Port-au-Prince");
    expect(canonicalTimezone("africa/dar_es_salaam")).toBe("Africa/Dar_es_Salaam");
    expect(canonicalTimezone("etc/gmt+5")).toBe("Etc/GMT+5");
    expect(canonicalTimezone("est5edt")).toBe("EST5EDT");
  });

  it("never turns a link into another name (Intl would answer Asia/Calcutta, America/New_York, Europe/Kiev)", () => {
    expect(canonicalTimezone("asia/kolkata")).toBe("Asia/Kolkata");
    expect(canonicalTimezone("Asia/Calcutta")).toBe("Asia/Calcutta");
    expect(canonicalTimezone("us/eastern")).toBe("US/Eastern");
    expect(canonicalTimezone("europe/kyiv")).toBe("Europe/Kyiv");
  });

  it("leaves every name of the list as it is", () => {
    for (const name of IANA_ZONE_NAMES) expect(canonicalTimezone(name)).toBe(name);
  });
});

describe("schedule inputs", () => {
  it("store the time zone in the database's case, on create and on update", () => {
    expect(parseInput(createScheduleInputSchema, { name: "n", cron: "0 9 * * *", timezone: "europe/london", task: TEMPLATE }).timezone).toBe("Europe/London");
    expect(parseInput(createScheduleInputSchema, { name: "n", cron: "0 9 * * *", timezone: "asia/kolkata", task: TEMPLATE }).timezone).toBe("Asia/Kolkata");
    expect(parseInput(createScheduleInputSchema, { name: "n", cron: "0 9 * * *", task: TEMPLATE }).timezone).toBe("UTC");
    expect(parseInput(updateScheduleInputSchema, { timezone: "america/new_york" }).timezone).toBe("America/New_York");
    expect(parseInput(updateScheduleInputSchema, {}).timezone).toBeUndefined();
  });

  it("still refuse a name that is no zone", () => {
    expect(() => parseInput(updateScheduleInputSchema, { timezone: "europe/nowhere" })).toThrow(/timezone/);
  });
});

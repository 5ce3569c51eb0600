import { it } from "vitest";
import { CronExpressionParser } from "cron-parser";
import { IANAZone } from "luxon";
import { validateCron } from "./cron-expression.js";
import { ZoneClock } from "./zone-clock.js";
it("bench", () => {
  let t = performance.now();
  for (let i = 0; i < 1000; i++) IANAZone.isValidZone("America/New_York");
  console.log("1000 isValidZone ms", performance.now() - t);
  t = performance.now();
  for (let i = 0; i < 1000; i++) { const x = CronExpressionParser.parse("30 2 * * *", { currentDate: new Date(1_767_225_600_000 + i * 60_000), tz: "UTC" }); x.next(); x.next(); x.next(); }
  console.log("1000 parse+3next daily ms", performance.now() - t);
  t = performance.now();
  for (let i = 0; i < 1000; i++) { const x = CronExpressionParser.parse("30 2 * * *", { currentDate: new Date(1_767_225_600_000 + i * 60_000), tz: "UTC" }); x.fields.hour.values.length; }
  console.log("1000 parse+fields ms", performance.now() - t);
  t = performance.now();
  for (let i = 0; i < 1000; i++) validateCron("30 2 * * *", "America/New_York");
  console.log("1000 validateCron ms", performance.now() - t);
  const c = new ZoneClock("America/New_York");
  t = performance.now();
  for (let i = 0; i < 1000; i++) c.resolve(1_767_225_600_000 + i * 60_000);
  console.log("1000 resolve ms", performance.now() - t);
  t = performance.now();
  for (let i = 0; i < 1000; i++) new Date(1_767_225_600_000 + i).toISOString();
  console.log("x", performance.now() - t);
});

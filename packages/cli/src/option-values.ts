/**
 * Parsers for option values: a bad value is commander's usage error (exit 2)
 * naming the option, before anything is sent.
 */
import { InvalidArgumentError } from "commander";
import { isEventId } from "@tasklane/core/schemas/pagination";
import { TaskStatus } from "@tasklane/sdk";

/** An integer from `min` to `max`. */
export function integerIn(min: number, max: number): (value: string) => number {
  return (value) => {
    const n = Number(value);
    if (!/^\d+$/.test(value.trim()) || !Number.isSafeInteger(n) || n < min || n > max) {
      throw new InvalidArgumentError(`expected an integer from ${min} to ${max}.`);
    }
    return n;
  };
}

/** Seconds, fractions allowed, from `min` to `max`. */
export function secondsIn(min: number, max: number): (value: string) => number {
  return (value) => {
    const n = Number(value);
    if (value.trim() === "" || !Number.isFinite(n) || n < min || n > max) throw new InvalidArgumentError(`expected seconds from ${min} to ${max}.`);
    return n;
  };
}

const STATUSES: readonly string[] = Object.values(TaskStatus);
const isTaskStatus = (name: string): name is TaskStatus => STATUSES.includes(name);

/** "QUEUED,running" → ["QUEUED", "RUNNING"]; an unknown status names the ones there are. */
export function taskStatuses(value: string): TaskStatus[] {
  const names = value
    .split(",")
    .map((s) => s.trim().toUpperCase())
    .filter((s) => s !== "");
  const statuses = names.filter(isTaskStatus);
  if (names.length === 0 || statuses.length < names.length) {
    throw new InvalidArgumentError(`expected statuses from ${STATUSES.join(", ")}, comma-separated.`);
  }
  return [...new Set(statuses)];
}

/** An event id (TaskEvent.id) as the API takes it: decimal digits, no leading zero, at most a Postgres bigint. */
export function eventId(value: string): string {
  if (!isEventId(value)) throw new InvalidArgumentError("expected an event id: the digits of a line's id as tasks tail prints it.");
  return value;
}

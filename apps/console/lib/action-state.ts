/** What a server action hands back to its form (rendered by FormStatus and field hints). */
import type { ApiFailure } from "./graphql-error";

export interface ActionState {
  status: "idle" | "success" | "error";
  message?: string;
  /** Field name in the form → problem. */
  fieldErrors?: Record<string, string>;
  /** A secret to show exactly once (API key, webhook signing secret). */
  secret?: string;
  /** Where the new thing lives (e.g. the task a trigger created). */
  href?: string;
}

export const IDLE: ActionState = { status: "idle" };

/**
 * An API failure as form state. `fields` maps the API's input paths
 * ("input.cron") to the form's field names ("cron").
 */
export function errorState(error: ApiFailure, fields: Record<string, string> = {}): ActionState {
  const fieldErrors: Record<string, string> = {};
  for (const [path, message] of Object.entries(error.fieldErrors)) {
    const field = fields[path] ?? Object.entries(fields).find(([prefix]) => path.startsWith(`${prefix}.`))?.[1];
    if (field !== undefined) fieldErrors[field] ??= message;
  }
  return { status: "error", message: describeFailure(error), fieldErrors };
}

export function describeFailure(error: ApiFailure): string {
  if (error.notAvailable) return "This feature is not available on this Tasklane platform yet.";
  switch (error.code) {
    case "UNAVAILABLE":
      return "The Tasklane API could not be reached. Try again in a moment.";
    case "FORBIDDEN":
      return "Your session is not allowed to do this.";
    case "RATE_LIMITED":
      return "Too many requests right now; wait a few seconds and try again.";
    case "INTERNAL_SERVER_ERROR":
      return "The API failed unexpectedly. Try again; if it keeps happening, check the gateway's logs.";
    default:
      return error.message;
  }
}

/** What a failed API call looks like to pages and actions (safe to send to the browser). */
export interface ApiFailure {
  /** The contract's extensions.code, or UNAVAILABLE when the gateway could not be reached. */
  code: string;
  message: string;
  /** The operation exists in the schema but its feature has not shipped on this platform yet. */
  notAvailable: boolean;
  /** Per-field problems from BAD_USER_INPUT, keyed by the input path ("input.cron"). */
  fieldErrors: Record<string, string>;
}

export type ApiResult<T> = { ok: true; data: T } | { ok: false; error: ApiFailure };

interface RawError {
  message?: unknown;
  extensions?: { code?: unknown; fieldErrors?: unknown };
}

export function failureFrom(raw: RawError | undefined, fallback = "The request failed"): ApiFailure {
  const code = typeof raw?.extensions?.code === "string" ? raw.extensions.code : "INTERNAL_SERVER_ERROR";
  const message = typeof raw?.message === "string" ? raw.message : fallback;
  const fieldErrors: Record<string, string> = {};
  if (Array.isArray(raw?.extensions?.fieldErrors)) {
    for (const item of raw.extensions.fieldErrors as unknown[]) {
      if (typeof item === "object" && item !== null && "path" in item && "message" in item) {
        const { path, message: fieldMessage } = item as { path: unknown; message: unknown };
        if (typeof path === "string" && typeof fieldMessage === "string") fieldErrors[path] ??= fieldMessage;
      }
    }
  }
  return { code, message, notAvailable: code === "BAD_USER_INPUT" && /not available yet/i.test(message), fieldErrors };
}

export const unavailable = (detail: string): ApiFailure => ({
  code: "UNAVAILABLE",
  message: `The Tasklane API could not be reached (${detail})`,
  notAvailable: false,
  fieldErrors: {},
});

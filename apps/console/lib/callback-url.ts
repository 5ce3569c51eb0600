/**
 * Where sign-in sends the user afterwards. Only a path on this console is
 * ever accepted (never an open redirect): anything naming another origin,
 * a protocol-relative "//host", or the sign-in page itself becomes "/".
 */

/** The request header proxy.ts sets to the path being rendered (Server Components cannot read the URL). */
export const REQUESTED_PATH_HEADER = "x-console-path";

/** Any origin works as the base: only whether the result stays on it matters. */
const BASE = "http://console.invalid";

/** `value` as a same-origin "/path?query", or "/" when it is anything else. */
export function safeCallback(value: string | string[] | null | undefined): string {
  const raw = Array.isArray(value) ? value[0] : value;
  if (!raw || !raw.startsWith("/")) return "/";
  try {
    const url = new URL(raw, BASE);
    // The normalised path is what gets redirected to: "/.//evil.example" normalises to "//evil.example",
    // which a browser reads as another origin. A path starting with two slashes (or a backslash) is refused.
    if (url.origin !== BASE || url.pathname.startsWith("/signin") || /^\/[\/\\]/.test(url.pathname)) return "/";
    return `${url.pathname}${url.search}`;
  } catch {
    return "/";
  }
}

/** The sign-in page, asked to come back to `requested` (when there is somewhere worth returning to). */
export function signInPath(requested: string | null | undefined, reason?: "expired"): string {
  const search = new URLSearchParams();
  if (reason) search.set("reason", reason);
  const back = safeCallback(requested);
  if (back !== "/") search.set("callbackUrl", back);
  const text = search.toString();
  return text ? `/signin?${text}` : "/signin";
}

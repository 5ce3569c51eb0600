/**
 * CSRF for the console's own route handlers: a request that names an Origin
 * must come from this console. (Server actions get the same check from Next
 * itself; next-auth's POSTs carry its CSRF token.)
 */
export function isSameOrigin(request: Request): boolean {
  const origin = request.headers.get("origin");
  if (origin === null) return true; // Same-origin GETs (EventSource, navigation) usually send none.
  const host = request.headers.get("x-forwarded-host") ?? request.headers.get("host");
  try {
    return host !== null && new URL(origin).host === host;
  } catch {
    return false;
  }
}

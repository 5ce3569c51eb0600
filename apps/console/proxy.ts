/**
 * Hands the requested page's path to Server Components (which cannot read the
 * URL), so requireSession() can send a signed-out user to /signin with a
 * callbackUrl and sign-in can bring them back to the page they asked for.
 * Authentication itself stays in requireSession(); this only passes the path
 * (and escapes a broken percent-escape in it, see below).
 */
import { NextResponse, type NextRequest } from "next/server";
import { REQUESTED_PATH_HEADER } from "./lib/callback-url";
import { escapeBrokenSegments } from "./lib/route-param";

export function proxy(request: NextRequest) {
  const search = new URLSearchParams(request.nextUrl.search);
  // Next's own cache-busting parameter on client navigations is no part of the page's address.
  search.delete("_rsc");
  const query = search.toString();
  const headers = new Headers(request.headers);
  // Always overwritten: a client-sent value never reaches the app (and safeCallback vets it anyway).
  headers.set(REQUESTED_PATH_HEADER, `${request.nextUrl.pathname}${query ? `?${query}` : ""}`);
  // A segment edited into a broken escape ("/tasks/%E0%A4%A") made Next answer 500 before any page
  // ran; with its stray "%" escaped it reaches the page, which answers 404 (lib/route-param.ts).
  const pathname = escapeBrokenSegments(request.nextUrl.pathname);
  if (pathname !== request.nextUrl.pathname) {
    const url = request.nextUrl.clone();
    url.pathname = pathname;
    return NextResponse.rewrite(url, { request: { headers } });
  }
  return NextResponse.next({ request: { headers } });
}

export const config = {
  // Pages only: not next-auth's or the live route's handlers, Next's assets, or the icon.
  matcher: ["/((?!api/|_next/|signin|icon|favicon).*)"],
};

/**
 * Record pages' [id] and [name] segments when a person edits the URL into a
 * broken percent-escape ("%", "%E0%A4%A"). No record has such an id or name:
 * the page must answer 404 like any unknown one. Next failed to decode such a
 * segment itself and answered 500 before any page ran, so proxy.ts escapes
 * the stray "%" first (escapeBrokenSegments) and the page reads it back
 * (decodeSegment).
 */

/** `pathname` with every "%" of a segment that is not valid percent-encoding escaped as "%25"; the rest as it was. */
export function escapeBrokenSegments(pathname: string): string {
  return pathname
    .split("/")
    .map((segment) => (decodeSegment(segment) === null ? segment.replaceAll("%", "%25") : segment))
    .join("/");
}

/** A segment decoded, or null when it is not valid percent-encoding. */
export function decodeSegment(segment: string): string | null {
  try {
    return decodeURIComponent(segment);
  } catch {
    return null;
  }
}

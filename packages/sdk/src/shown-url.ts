/**
 * A URL as the SDK's error messages show it: credentials written into it
 * (`https://user:secret@host/graphql`) become `***`, because those messages
 * end up in logs and on terminals.
 */
export function shownUrl(url: string): string {
  return url.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^/?#]*@/i, "$1***@");
}

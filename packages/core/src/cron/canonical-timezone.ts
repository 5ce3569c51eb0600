import { IANA_ZONE_NAMES } from "./iana-zone-names.js";

/**
 * Lower-cased name -> the name as the IANA database spells it: its own names
 * (links included), then any ICU knows beyond them (Intl.supportedValuesOf,
 * where the runtime has it) for a zone newer than the list.
 */
let byLowerCase: Map<string, string> | undefined;

function index(): Map<string, string> {
  if (byLowerCase) return byLowerCase;
  const map = new Map<string, string>();
  const icu = typeof Intl.supportedValuesOf === "function" ? Intl.supportedValuesOf("timeZone") : [];
  for (const name of [...IANA_ZONE_NAMES, ...icu]) {
    const key = name.toLowerCase();
    if (!map.has(key)) map.set(key, name);
  }
  byLowerCase = map;
  return map;
}

/**
 * A valid time zone name (timezoneProblem found nothing wrong) in the case
 * the IANA database spells it: `europe/london` is `Europe/London`, `utc` is
 * `UTC`. Only the case changes: a link stays the name it is (`asia/kolkata`
 * is `Asia/Kolkata`, never the `Asia/Calcutta` Intl's own canonicalisation
 * answers, and `US/Eastern` stays itself). A name in neither list is left as
 * typed.
 */
export function canonicalTimezone(timezone: string): string {
  return index().get(timezone.toLowerCase()) ?? timezone;
}

/** Bounded polling: every wait in the suite has a deadline (the integration tests' own helper). */
export { waitFor as waitUntil } from "../../../helpers/wait-for.js";

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

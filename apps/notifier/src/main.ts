/**
 * `npm start -w apps/notifier`: the entry. It hears SIGTERM and SIGINT before it
 * loads the rest of the app (0.3-1 s of module loading here, in which a signal
 * ended the process with 143 and no log line), then runs start.ts, which
 * logs a signal held meanwhile and stops once its start-up is done. The build
 * bundles it (scripts/bundle-app.mjs) with start.ts and all it imports in a
 * chunk of their own, so this much runs before that chunk is even read.
 */
import { holdStopSignals } from "@tasklane/config/stop-signals";

holdStopSignals();
await import("./start.js");

/**
 * `npm start -w apps/notifier`: the entry. It hears SIGTERM and SIGINT before it
 * loads the rest of the app (0.6-2 s of module loading here, in which a signal
 * ended the process with 143 and no log line), then runs start.ts, which
 * logs a signal held meanwhile and stops once its start-up is done.
 */
import { holdStopSignals } from "@tasklane/config/stop-signals";

holdStopSignals();
await import("./start.js");

/**
 * How a background app (scheduler, worker, notifier) starts its ops server:
 * only when METRICS_PORT is set, and a port it cannot serve stops the app at
 * start with one line naming the variable (exit code 1), as every other
 * setting it cannot use does.
 */
import { errorChain, exitWithMessage } from "@tasklane/config";
import { startOpsServer, type OpsServer, type OpsServerOptions } from "./ops-server.js";

export interface OpsServerOrExitOptions extends Omit<OpsServerOptions, "port"> {
  /** METRICS_PORT; undefined: no ops server. */
  port: number | undefined;
}

/** The app's ops server, undefined without METRICS_PORT; exits the process when it cannot listen. */
export async function startOpsServerOrExit(program: string, options: OpsServerOrExitOptions): Promise<OpsServer | undefined> {
  const { port } = options;
  if (port === undefined) return undefined;
  return startOpsServer({ ...options, port }).catch((error: unknown) => exitWithMessage(program, `cannot serve METRICS_PORT ${port}: ${errorChain(error)}`));
}

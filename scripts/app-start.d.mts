/** The node flags and the script (relative to `appDir`) of the app's start script. */
export function appStartCommand(appDir: string): { flags: string[]; script: string };
/** The arguments for `node` that run the app as its start script does: its flags, then its script's path. */
export function appNodeArgs(appDir: string): string[];

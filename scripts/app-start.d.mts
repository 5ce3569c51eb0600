/** The node flags and the script (relative to `appDir`) of the app's start script. */
export function appStartCommand(appDir: string): { flags: string[]; script: string };

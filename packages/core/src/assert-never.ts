/**
 * Compile-time exhaustiveness check for switches over the const enums.
 * If a new enum value is added and a switch forgets it, `x` is no longer
 * `never` and tsc fails; at run time (data from an older/newer peer) it throws
 * instead of silently falling through.
 */
export function assertNever(x: never): never {
  throw new Error(`Unexpected value: ${JSON.stringify(x)}`);
}

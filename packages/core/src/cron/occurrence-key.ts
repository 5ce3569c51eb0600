/**
 * The identity of one scheduled run. Stored in a unique column, it makes
 * materialising an occurrence idempotent: two scheduler instances that both
 * pass the CAS race, or a retry after a crash, insert the same key and the
 * second insert is refused. The version is part of it so that editing a
 * schedule (which bumps the version) never collides with runs of the old
 * definition at the same instant.
 */
export function occurrenceKey(scheduleId: string, version: number, scheduledAt: Date): string {
  return `${scheduleId}:${version}:${scheduledAt.toISOString()}`;
}

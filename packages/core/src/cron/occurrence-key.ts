/**
 * The identity of one scheduled run: the schedule and the instant. Stored in
 * a unique column, it makes materialising an occurrence idempotent: two
 * scheduler instances that both pass the CAS race, or a retry after a crash,
 * insert the same key and the second insert is refused. The schedule's
 * version is not part of it: an occurrence runs once whatever versions the
 * schedule goes through. A change that skips a run materialised ahead
 * releases its key (skipPendingRuns), so the new version can materialise
 * that instant again.
 */
export function occurrenceKey(scheduleId: string, scheduledAt: Date): string {
  return `${scheduleId}:${scheduledAt.toISOString()}`;
}

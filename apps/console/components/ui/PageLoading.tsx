/**
 * Shown while a page's data is on its way: each list and form page's
 * loading.tsx. A page that shows one record (a task, queue, schedule,
 * workflow) has none: it resolves its record before anything is sent, so an
 * unknown one answers 404 rather than a 200 stream that turns into "Not found".
 */
export function PageLoading() {
  return (
    <div aria-busy="true" aria-live="polite" className="stack">
      <span className="visually-hidden">Loading…</span>
      <div className="skeleton" style={{ width: "30%", height: "1.75rem" }} />
      <div className="skeleton" style={{ width: "60%" }} />
      <div className="card stack">
        <div className="skeleton" />
        <div className="skeleton" />
        <div className="skeleton" style={{ width: "80%" }} />
      </div>
    </div>
  );
}

/** Shown while a page's data is on its way. */
export default function Loading() {
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

import Link from "next/link";

export default function NotFound() {
  return (
    <section className="state" aria-label="Not found">
      <div className="state-icon" aria-hidden="true">
        ?
      </div>
      <h2>Not found</h2>
      <p>There is nothing here, or it belongs to another tenant.</p>
      <Link className="button" href="/">
        Back to the overview
      </Link>
    </section>
  );
}

import Link from "next/link";

/** The whole page (no PageHeader above it): its heading is the page's h1, as on every other page. */
export default function NotFound() {
  return (
    <section className="state" aria-label="Not found">
      <div className="state-icon" aria-hidden="true">
        ?
      </div>
      <h1>Not found</h1>
      <p>There is nothing here, or it belongs to another tenant.</p>
      <Link className="button" href="/">
        Back to the overview
      </Link>
    </section>
  );
}

"use client";

/** Anything a page did not handle itself: say so, offer a retry, never a blank screen. */
export default function ConsoleError({ error, reset }: { error: Error & { digest?: string }; reset: () => void }) {
  return (
    <section className="state state-error" role="alert">
      <div className="state-icon" aria-hidden="true">
        !
      </div>
      <h1>This page could not be shown</h1>
      <p>Something went wrong while loading it. Your tasks are not affected; try again, and if it keeps failing, check the console&apos;s logs.</p>
      {error.digest ? <p className="code">Reference {error.digest}</p> : null}
      <button type="button" className="button button-primary" onClick={reset}>
        Try again
      </button>
    </section>
  );
}

"use client";

import { useState } from "react";

/** A secret shown exactly once, with a copy button; it is not stored anywhere the console can show again. */
export function SecretReveal({ secret, label }: { secret: string; label: string }) {
  const [copied, setCopied] = useState(false);
  return (
    <div className="notice notice-info" role="status">
      <p style={{ margin: "0 0 0.5rem" }}>
        <strong>{label}</strong> Copy it now: it is shown only once and cannot be retrieved later.
      </p>
      <div className="secret">
        <code data-testid="secret">{secret}</code>
        <button
          type="button"
          className="button button-small"
          onClick={() => {
            void navigator.clipboard?.writeText(secret).then(() => setCopied(true));
          }}
        >
          {copied ? "Copied" : "Copy"}
        </button>
      </div>
    </div>
  );
}

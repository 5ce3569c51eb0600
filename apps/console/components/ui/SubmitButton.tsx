"use client";

import type { ReactNode } from "react";
import { useFormStatus } from "react-dom";

/** A form's submit button that says it is working and cannot be pressed twice. */
export function SubmitButton({ children, pending, variant = "primary", small = false }: { children: ReactNode; pending?: string; variant?: "primary" | "danger" | "plain"; small?: boolean }) {
  const status = useFormStatus();
  const className = ["button", variant === "primary" ? "button-primary" : variant === "danger" ? "button-danger" : "", small ? "button-small" : ""].filter(Boolean).join(" ");
  return (
    <button type="submit" className={className} disabled={status.pending} aria-disabled={status.pending}>
      {status.pending ? (pending ?? "Working…") : children}
    </button>
  );
}

import type { Metadata } from "next";
import { redirect } from "next/navigation";
import { safeCallback } from "@/lib/callback-url";
import { readSession } from "@/lib/session";
import { SignInForm } from "./SignInForm";

export const metadata: Metadata = { title: "Sign in" };

const REASONS: Record<string, string> = {
  expired: "Your session has ended. Sign in again to continue.",
  CredentialsSignin: "That email and password do not match a console user.",
};

export default async function SignInPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const params = await searchParams;
  const reason = typeof params.reason === "string" ? params.reason : typeof params.error === "string" ? params.error : null;
  // A cookie whose key the API refused (revoked, expired early) must not bounce back to "/" forever.
  const callbackUrl = safeCallback(params.callbackUrl);
  if (reason !== "expired" && (await readSession())) redirect(callbackUrl);
  return (
    <main className="signin">
      <div className="card">
        <p className="brand" style={{ color: "var(--text)", padding: "0 0 0.75rem" }}>
          <span className="brand-mark" aria-hidden="true">
            T
          </span>
          Tasklane
        </p>
        <h1>Sign in to the console</h1>
        <p className="muted small">Console users are created by your platform operator for one tenant.</p>
        <SignInForm callbackUrl={callbackUrl} initialError={reason ? (REASONS[reason] ?? null) : null} />
      </div>
    </main>
  );
}

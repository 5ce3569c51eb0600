"use client";

import { signIn } from "next-auth/react";
import { useRouter } from "next/navigation";
import { useState, type FormEvent } from "react";

const MESSAGES: Record<string, string> = {
  CredentialsSignin: "That email and password do not match a console user.",
  RateLimited: "Too many failed attempts for this email. Wait a few minutes and try again.",
  ApiUnavailable: "The Tasklane API could not be reached. Try again in a moment.",
};

/**
 * Posts to next-auth's credentials callback through signIn(), which fetches
 * and sends next-auth's CSRF token (double-submit cookie) with the POST.
 */
export function SignInForm({ callbackUrl, initialError }: { callbackUrl: string; initialError: string | null }) {
  const router = useRouter();
  const [error, setError] = useState<string | null>(initialError);
  const [pending, setPending] = useState(false);

  async function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    setPending(true);
    setError(null);
    const result = await signIn("credentials", { email: form.get("email"), password: form.get("password"), redirect: false });
    if (result?.ok && !result.error) {
      router.replace(callbackUrl);
      router.refresh();
      return;
    }
    setPending(false);
    setError(MESSAGES[result?.error ?? ""] ?? MESSAGES.ApiUnavailable ?? null);
  }

  return (
    <form className="form" onSubmit={onSubmit} noValidate={false}>
      <div className="field">
        <label htmlFor="email">Email</label>
        <input id="email" name="email" type="email" autoComplete="username" required autoFocus />
      </div>
      <div className="field">
        <label htmlFor="password">Password</label>
        <input id="password" name="password" type="password" autoComplete="current-password" required />
      </div>
      {error ? (
        <div className="notice notice-error" role="alert">
          {error}
        </div>
      ) : null}
      <button type="submit" className="button button-primary" disabled={pending}>
        {pending ? "Signing in…" : "Sign in"}
      </button>
    </form>
  );
}

"use client";

import { signOut } from "next-auth/react";
import { useState } from "react";

/** next-auth's sign-out: a POST with its CSRF token; the server revokes the session key. */
export function SignOutButton() {
  const [pending, setPending] = useState(false);
  return (
    <button
      type="button"
      className="button button-small"
      disabled={pending}
      onClick={() => {
        setPending(true);
        void signOut({ callbackUrl: "/signin" });
      }}
    >
      {pending ? "Signing out…" : "Sign out"}
    </button>
  );
}

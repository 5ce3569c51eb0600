import Link from "next/link";
import type { ReactNode } from "react";
import { NavLinks } from "./NavLinks";
import { SignOutButton } from "./SignOutButton";

export function AppShell({ tenantName, email, children }: { tenantName: string | null; email: string; children: ReactNode }) {
  return (
    <div className="shell">
      <a className="skip-link" href="#content">
        Skip to content
      </a>
      <aside className="sidebar">
        <Link className="brand" href="/">
          <span className="brand-mark" aria-hidden="true">
            T
          </span>
          Tasklane
        </Link>
        <nav aria-label="Console sections">
          <NavLinks />
        </nav>
      </aside>
      <div className="main">
        <header className="topbar">
          <div>
            <span className="muted small">Tenant </span>
            <span className="topbar-tenant" data-testid="tenant-name">
              {tenantName ?? "—"}
            </span>
          </div>
          <div className="topbar-user">
            <span className="hide-sm">{email}</span>
            <SignOutButton />
          </div>
        </header>
        <main id="content" className="content" tabIndex={-1}>
          {children}
        </main>
      </div>
    </div>
  );
}

import type { ReactNode } from "react";
import { AppShell } from "@/components/shell/AppShell";
import { getTenantName } from "@/lib/api/tenant";
import { requireSession } from "@/lib/session";

/** Every console page: signed in, or off to /signin. */
export default async function ConsoleLayout({ children }: { children: ReactNode }) {
  const session = await requireSession();
  const tenantName = await getTenantName();
  return (
    <AppShell tenantName={tenantName} email={session.email}>
      {children}
    </AppShell>
  );
}

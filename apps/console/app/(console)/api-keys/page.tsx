import type { Metadata } from "next";
import { ApiKeyForm } from "@/components/api-keys/ApiKeyForm";
import { ApiKeyTable } from "@/components/api-keys/ApiKeyTable";
import { EmptyState } from "@/components/ui/EmptyState";
import { ErrorState } from "@/components/ui/ErrorState";
import { PageHeader } from "@/components/ui/PageHeader";
import { listApiKeys } from "@/lib/api/api-keys";
import { splitApiKeys } from "@/lib/api-key-kinds";
import { requireSession } from "@/lib/session";

export const metadata: Metadata = { title: "API keys" };

export default async function ApiKeysPage() {
  const session = await requireSession();
  const result = await listApiKeys();
  const header = <PageHeader title="API keys" description="Credentials your applications and workers use. A secret is shown once, when the key is created." />;
  if (!result.ok) {
    return (
      <>
        {header}
        <ErrorState error={result.error} what="API keys" />
      </>
    );
  }
  const { keys, sessions } = splitApiKeys(result.data, Date.now());
  return (
    <>
      {header}
      <div className="stack">
        <section className="card" aria-labelledby="create">
          <h2 id="create">Create a key</h2>
          <ApiKeyForm />
        </section>
        <section aria-labelledby="keys">
          <h2 id="keys">Keys</h2>
          {keys.length === 0 ? (
            <EmptyState title="No API keys" icon="⚿">
              Create one above for each application or worker fleet, with the narrowest scope it needs.
            </EmptyState>
          ) : (
            <ApiKeyTable keys={keys} currentKeyId={session.apiKeyId} caption="API keys" />
          )}
        </section>
        <section aria-labelledby="sessions">
          <h2 id="sessions">Active console sessions</h2>
          <p className="muted small">Each console sign-in uses a key of its own that expires after 12 hours and is revoked at sign-out.</p>
          {sessions.length === 0 ? <p className="muted">None.</p> : <ApiKeyTable keys={sessions} currentKeyId={session.apiKeyId} caption="Console session keys" />}
        </section>
      </div>
    </>
  );
}

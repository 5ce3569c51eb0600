/**
 * Liveness and readiness of the console (Kubernetes probes, compose health
 * checks): the Next server answers. The console holds no connections of its
 * own; the GraphQL API it calls has its own /readyz.
 */
export const dynamic = "force-dynamic";

export function GET(): Response {
  return Response.json({ status: "ok" }, { headers: { "cache-control": "no-store" } });
}

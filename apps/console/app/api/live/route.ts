/**
 * GET /api/live: a Server-Sent Events stream of the signed-in tenant's task
 * (or one workflow's) updates. The console's server subscribes to the
 * gateway over graphql-ws with the session key and forwards bare "update"
 * events; the browser re-renders the page from the server. Events:
 * - `live`: the subscription is up;
 * - `update`: something changed (data: the event's ids and status);
 * - `fallback`: streaming is not possible (refused, unsupported, dropped):
 *   the client polls instead.
 */
import { createClient, type Client } from "graphql-ws";
import WebSocket from "ws";
import { config } from "@/lib/config";
import { isSameOrigin } from "@/lib/origin";
import { readSession } from "@/lib/session";

export const dynamic = "force-dynamic";
export const runtime = "nodejs";

const HEARTBEAT_MS = 15_000;
const ID = /^[A-Za-z0-9_-]{1,200}$/;

function subscriptionFor(url: URL): { query: string; variables: Record<string, unknown> } {
  const workflowId = url.searchParams.get("workflowId");
  if (workflowId && ID.test(workflowId)) {
    return { query: `subscription ConsoleWorkflow($id: ID!) { workflowUpdated(workflowId: $id) { id status } }`, variables: { id: workflowId } };
  }
  const taskId = url.searchParams.get("taskId");
  const queue = url.searchParams.get("queue");
  return {
    query: `subscription ConsoleTasks($taskId: ID, $queue: String) { taskUpdated(taskId: $taskId, queue: $queue) { taskId status previousStatus at } }`,
    variables: { taskId: taskId && ID.test(taskId) ? taskId : null, queue: queue && queue.length <= 200 ? queue : null },
  };
}

export async function GET(request: Request): Promise<Response> {
  if (!isSameOrigin(request)) return new Response("cross-origin request refused", { status: 403 });
  const session = await readSession();
  if (session === null) return new Response("sign in first", { status: 401 });
  const { query, variables } = subscriptionFor(new URL(request.url));
  const encoder = new TextEncoder();
  let client: Client | null = null;
  let heartbeat: ReturnType<typeof setInterval> | null = null;
  let finished = false;

  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      const write = (chunk: string) => {
        if (finished) return;
        try {
          controller.enqueue(encoder.encode(chunk));
        } catch {
          stop();
        }
      };
      const send = (event: string, data: unknown) => write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
      const stop = () => {
        if (finished) return;
        finished = true;
        if (heartbeat !== null) clearInterval(heartbeat);
        void client?.dispose();
        try {
          controller.close();
        } catch {
          // Already closed by the browser going away.
        }
      };
      const fallback = (reason: string) => {
        send("fallback", { reason });
        stop();
      };

      client = createClient({
        url: config.wsUrl,
        webSocketImpl: WebSocket,
        connectionParams: { authorization: `Bearer ${session.apiKey}` },
        retryAttempts: 0,
        lazy: false,
        on: { connected: () => send("live", {}) },
      });
      client.subscribe<Record<string, unknown>>(
        { query, variables },
        {
          next: (result) => {
            if (result.errors?.length) return fallback(String(result.errors[0]?.message ?? "subscription error"));
            const payload = result.data?.taskUpdated ?? result.data?.workflowUpdated ?? {};
            send("update", payload);
          },
          error: (error: unknown) => {
            const first = Array.isArray(error) ? (error[0] as { message?: unknown } | undefined) : undefined;
            fallback(typeof first?.message === "string" ? first.message : error instanceof Error ? error.message : "subscription closed");
          },
          complete: () => fallback("subscription completed"),
        },
      );
      heartbeat = setInterval(() => write(": keep-alive\n\n"), HEARTBEAT_MS);
      request.signal.addEventListener("abort", stop);
    },
    cancel() {
      finished = true;
      if (heartbeat !== null) clearInterval(heartbeat);
      void client?.dispose();
    },
  });

  return new Response(stream, {
    headers: {
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-cache, no-transform",
      connection: "keep-alive",
      "x-accel-buffering": "no",
    },
  });
}

"use client";

import { useRouter } from "next/navigation";
import { useEffect, useRef, useState } from "react";
import { ReconnectBackoff } from "@/lib/reconnect-backoff";

/** Refresh at most this often while events stream in: one task or workflow feels instant; a whole tenant's feed is batched. */
const FOCUSED_REFRESH_GAP_MS = 500;
const BROAD_REFRESH_GAP_MS = 2_000;
/** Without a subscription: poll. */
const POLL_MS = 2_000;
/** With one: still refresh now and then, in case an event was missed while reconnecting. */
const SAFETY_REFRESH_MS = 15_000;

type Mode = "connecting" | "live" | "polling";

/**
 * Keeps the page's server-rendered data current. It listens to the console's
 * /api/live stream (the gateway's subscription, proxied server-side so the
 * browser never holds an API key) and re-renders the page when something
 * changes; while the platform cannot stream (the subscription is refused or the
 * stream drops), it polls every 2 s and tries the stream again now and then.
 */
export function LiveRefresh({ taskId, queue, workflowId }: { taskId?: string; queue?: string; workflowId?: string }) {
  const router = useRouter();
  const [mode, setMode] = useState<Mode>("connecting");
  const lastRefresh = useRef(0);
  const pending = useRef<ReturnType<typeof setTimeout> | null>(null);

  useEffect(() => {
    let timer: ReturnType<typeof setInterval> | null = null;
    let reconnect: ReturnType<typeof setTimeout> | null = null;
    let source: EventSource | null = null;
    // While polling, the stream is tried again now and then: a gateway that restarted, or a stream the
    // console's server dropped, comes back live instead of leaving the page polling until it is reloaded.
    const backoff = new ReconnectBackoff<EventSource>();
    let closed = false;
    const refresh = () => {
      lastRefresh.current = Date.now();
      router.refresh();
    };
    const gap = taskId || workflowId ? FOCUSED_REFRESH_GAP_MS : BROAD_REFRESH_GAP_MS;
    const refreshSoon = () => {
      if (pending.current !== null) return;
      const wait = Math.max(0, lastRefresh.current + gap - Date.now());
      pending.current = setTimeout(() => {
        pending.current = null;
        refresh();
      }, wait);
    };
    const every = (ms: number) => {
      if (timer !== null) clearInterval(timer);
      timer = setInterval(() => {
        if (document.visibilityState === "visible") refresh();
      }, ms);
    };
    const poll = () => {
      if (closed) return;
      setMode("polling");
      every(POLL_MS);
    };

    const params = new URLSearchParams();
    if (taskId) params.set("taskId", taskId);
    if (queue) params.set("queue", queue);
    if (workflowId) params.set("workflowId", workflowId);
    const connect = () => {
      reconnect = null;
      if (closed) return;
      let s: EventSource;
      try {
        s = new EventSource(`/api/live?${params.toString()}`);
      } catch {
        // No EventSource here at all: polling is all there is.
        poll();
        return;
      }
      source = s;
      s.addEventListener("live", () => {
        backoff.live();
        setMode("live");
        every(SAFETY_REFRESH_MS);
        // Whatever changed between the render (or the outage) and the subscription starting was not streamed.
        refreshSoon();
      });
      s.addEventListener("update", refreshSoon);
      // The stream ended ("fallback" from the server, or the connection failed; a fallback can be
      // followed by its connection's error): poll, and try again later.
      const lost = () => {
        s.close();
        if (source === s) source = null;
        if (closed) return;
        const wait = backoff.lost(s);
        if (wait === null) return;
        poll();
        reconnect = setTimeout(connect, wait);
      };
      s.addEventListener("fallback", lost);
      s.onerror = lost;
    };
    connect();
    return () => {
      closed = true;
      source?.close();
      if (timer !== null) clearInterval(timer);
      if (reconnect !== null) clearTimeout(reconnect);
      if (pending.current !== null) clearTimeout(pending.current);
      pending.current = null;
    };
  }, [router, taskId, queue, workflowId]);

  const text = mode === "live" ? "Live" : mode === "polling" ? "Auto-refresh every 2 s" : "Connecting…";
  return (
    <span className={`live live-${mode}`} role="status" aria-live="polite" data-live-mode={mode}>
      <span className="live-dot" aria-hidden="true" />
      {text}
    </span>
  );
}

import { EventEmitter } from "node:events";
import { createKeySpace, encodeTaskEvents, type TaskEventMessage } from "@tasklane/queue";
import { pino } from "pino";
import { describe, expect, it, vi } from "vitest";
import { TaskEventHub, type HubEvent, type PubSubConnection } from "./event-hub.js";

class FakeSubscriber extends EventEmitter implements PubSubConnection {
  readonly channels = new Set<string>();
  readonly commands: string[] = [];
  override on(event: "message", listener: (channel: string, message: string) => void): this {
    return super.on(event, listener);
  }
  async subscribe(channel: string) {
    this.commands.push(`SUBSCRIBE ${channel}`);
    this.channels.add(channel);
    return 1;
  }
  async unsubscribe(channel: string) {
    this.commands.push(`UNSUBSCRIBE ${channel}`);
    this.channels.delete(channel);
    return 0;
  }
  deliver(channel: string, message: string) {
    if (this.channels.has(channel)) this.emit("message", channel, message);
  }
}

const keys = createKeySpace("tl");
const msg = (eventId: string, tenantId = "ten_a", taskId = "task_1"): TaskEventMessage => ({
  eventId,
  taskId,
  tenantId,
  queueId: "que_1",
  workflowId: null,
  from: null,
  to: "QUEUED",
  at: "2026-01-01T00:00:00.000Z",
});

function setup(refreshMs?: number) {
  const sub = new FakeSubscriber();
  const loads: string[] = [];
  // Marks land in the subscriber's command log, so their order against SUBSCRIBE shows.
  const marks = {
    async register(tenantIds: readonly string[]) {
      sub.commands.push(`MARK ${tenantIds.join(",")}`);
      return tenantIds.length;
    },
  };
  const hub = new TaskEventHub(
    sub,
    keys,
    async (_tenant, taskId) => {
      loads.push(taskId);
      return null;
    },
    pino({ level: "silent" }),
    marks,
    refreshMs,
  );
  return { sub, hub, loads };
}

describe("TaskEventHub", () => {
  it("subscribes a tenant's channel while it has listeners, once however many", async () => {
    const { sub, hub } = setup();
    const stopA = await hub.listen("ten_a", () => undefined);
    const stopB = await hub.listen("ten_a", () => undefined);
    expect(sub.commands).toEqual(["MARK ten_a", "SUBSCRIBE tl:events:ten_a"]);
    stopA();
    expect(sub.channels.has("tl:events:ten_a")).toBe(true);
    stopB();
    stopB();
    expect(sub.commands).toEqual(["MARK ten_a", "SUBSCRIBE tl:events:ten_a", "UNSUBSCRIBE tl:events:ten_a"]);
    hub.close();
    expect(hub.listenerCount).toBe(0);
  });

  it("hands each tenant only its own events, and drops a message whose tenant is not the channel's", async () => {
    const { sub, hub } = setup();
    const a: HubEvent[] = [];
    const b: HubEvent[] = [];
    await hub.listen("ten_a", (e) => a.push(e));
    await hub.listen("ten_b", (e) => b.push(e));
    sub.deliver("tl:events:ten_a", encodeTaskEvents([msg("1", "ten_a")]));
    sub.deliver("tl:events:ten_b", encodeTaskEvents([msg("2", "ten_b")]));
    sub.deliver("tl:events:ten_b", encodeTaskEvents([msg("3", "ten_a")]));
    // One misaddressed event spoils its whole message.
    sub.deliver("tl:events:ten_b", encodeTaskEvents([msg("4", "ten_b"), msg("5", "ten_a")]));
    sub.deliver("tl:events:ten_a", "garbage");
    expect(a.map((e) => e.message.eventId)).toEqual(["1"]);
    expect(b.map((e) => e.message.eventId)).toEqual(["2"]);
  });

  it("drops repeats of ids already handed out (a relay re-publishing after a crash)", async () => {
    const { sub, hub } = setup();
    const got: string[] = [];
    await hub.listen("ten_a", (e) => got.push(e.message.eventId));
    for (const id of ["5", "6", "5", "6", "7"]) sub.deliver("tl:events:ten_a", encodeTaskEvents([msg(id)]));
    // A re-published batch overlapping what was handed out: only the new ids go on.
    sub.deliver("tl:events:ten_a", encodeTaskEvents([msg("6"), msg("7"), msg("8"), msg("9")]));
    expect(got).toEqual(["5", "6", "7", "8", "9"]);
  });

  it("loads the task once per event, however many subscriptions ask", async () => {
    const { sub, hub, loads } = setup();
    const events: HubEvent[] = [];
    await hub.listen("ten_a", (e) => events.push(e));
    await hub.listen("ten_a", (e) => events.push(e));
    sub.deliver("tl:events:ten_a", encodeTaskEvents([msg("1")]));
    await Promise.all(events.map((e) => e.task()));
    expect(events).toHaveLength(2);
    expect(loads).toEqual(["task_1"]);
  });

  it("keeps a loaded task for the subscriptions still to ask for a second, then lets it go (a stalled subscription's events hold none)", async () => {
    vi.useFakeTimers();
    try {
      const { sub, hub, loads } = setup();
      const events: HubEvent[] = [];
      await hub.listen("ten_a", (e) => events.push(e));
      sub.deliver("tl:events:ten_a", encodeTaskEvents([msg("1")]));
      const [event] = events as [HubEvent];
      await event.task();
      await vi.advanceTimersByTimeAsync(500);
      await event.task();
      expect(loads).toEqual(["task_1"]);
      // A subscription asking two seconds on (a slow one) reads the task again: the event kept nothing.
      await vi.advanceTimersByTimeAsync(1_500);
      await event.task();
      expect(loads).toEqual(["task_1", "task_1"]);
      hub.close();
    } finally {
      vi.useRealTimers();
    }
  });

  it("refreshes the marks of the tenants it still serves, and stops when closed", async () => {
    const { sub, hub } = setup(20);
    const stopA = await hub.listen("ten_a", () => undefined);
    await hub.listen("ten_b", () => undefined);
    const marks = () => sub.commands.filter((c) => c.startsWith("MARK"));
    await vi.waitFor(() => expect(marks()).toContain("MARK ten_a,ten_b"), { timeout: 5_000 });
    stopA();
    const before = marks().length;
    await vi.waitFor(() => expect(marks().slice(before)).toContain("MARK ten_b"), { timeout: 5_000 });
    expect(marks().slice(before)).not.toContain("MARK ten_a,ten_b");
    hub.close();
    const atClose = marks().length;
    await new Promise((res) => setTimeout(res, 100));
    expect(marks().length).toBe(atClose);
  });
});

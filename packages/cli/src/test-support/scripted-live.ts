/**
 * A graphql-ws endpoint for unit tests of `tasks watch` and `tasks tail`:
 * every subscription gets the scripted `taskUpdated` values, once `ready()`
 * resolves, then stays open as the gateway's do. A GraphQLError among them is
 * sent as the operation's error (the gateway's refusals: BAD_USER_INPUT,
 * OVERLOADED); a function is awaited before what follows it (a pause the test
 * ends). It records the connectionParams and the variables each subscription
 * sent, and how many sockets are open.
 */
import type { AddressInfo } from "node:net";
import { GraphQLError, buildSchema, parse } from "graphql";
import { useServer } from "graphql-ws/use/ws";
import { WebSocketServer } from "ws";

export interface ScriptedLive {
  /** http://127.0.0.1:port/graphql: the CLI's --url (the socket is its ws:// form). */
  readonly url: string;
  readonly connectionParams: unknown[];
  readonly variables: unknown[];
  openSockets(): number;
  close(): Promise<void>;
}

const SCHEMA = buildSchema("type Query { ok: Boolean } type Subscription { taskUpdated: Boolean }");

export async function startScriptedLive(events: unknown[], ready: () => Promise<void> = async () => undefined): Promise<ScriptedLive> {
  const server = new WebSocketServer({ host: "127.0.0.1", port: 0, path: "/graphql" });
  await new Promise<void>((resolve) => server.once("listening", () => resolve()));
  const connectionParams: unknown[] = [];
  const variables: unknown[] = [];
  useServer(
    {
      schema: SCHEMA,
      onConnect: (ctx) => void connectionParams.push(ctx.connectionParams),
      onSubscribe: (_ctx, _id, payload) => {
        variables.push(payload.variables);
        return { schema: SCHEMA, document: parse("subscription { taskUpdated }") };
      },
      subscribe: async function* () {
        await ready();
        for (const item of events) {
          if (typeof item === "function") await (item as () => Promise<void>)();
          else if (item instanceof GraphQLError) yield { errors: [item] };
          else yield { data: { taskUpdated: item } };
        }
        await new Promise<never>(() => undefined);
      },
    },
    server,
  );
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/graphql`,
    connectionParams,
    variables,
    openSockets: () => server.clients.size,
    async close() {
      for (const socket of server.clients) socket.terminate();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

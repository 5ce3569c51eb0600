import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { refOf } from "./probe-protocol.js";
import type { Recorder } from "./recorder.js";

/**
 * The tenant's PUSH endpoint: a node:http server on 127.0.0.1 that answers
 * 200 `{}` at once. The handler start is the moment the request body is in.
 */
export async function runPushReceiver(recorder: Recorder): Promise<() => Promise<void>> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      try {
        const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { taskId?: unknown; payload?: unknown };
        recorder.start(String(body.taskId), refOf(body.payload));
      } catch {
        recorder.start("?", undefined);
      }
      res.writeHead(200, { "content-type": "application/json", "content-length": "2" }).end("{}");
      recorder.completed();
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  recorder.ready(`http://127.0.0.1:${port}/tasks`);
  return async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
}

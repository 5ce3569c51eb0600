import { describe, expect, it } from "vitest";
import { TasklaneClient } from "./client.js";
import { webSocketUrlOf } from "./live.js";

describe("the live updates' socket URL", () => {
  it("is the GraphQL URL with http turned into ws and https into wss, path and query kept", () => {
    expect(webSocketUrlOf("http://127.0.0.1:4000/graphql")).toBe("ws://127.0.0.1:4000/graphql");
    expect(webSocketUrlOf("HTTPS://api.example.com/graphql?x=1")).toBe("wss://api.example.com/graphql?x=1");
  });

  it("follows the client's url unless webSocketUrl is given", () => {
    expect(new TasklaneClient({ url: "https://gw.example.com/graphql", apiKey: "k" }).live.url).toBe("wss://gw.example.com/graphql");
    expect(new TasklaneClient({ url: "https://gw.example.com/graphql", apiKey: "k", webSocketUrl: "wss://live.example.com/ws" }).live.url).toBe("wss://live.example.com/ws");
  });
});

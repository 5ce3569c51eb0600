import { afterEach, describe, expect, it, vi } from "vitest";
import { graphqlEndpoint } from "./context.js";
import { ExitCode } from "./errors.js";
import { runCli } from "./run.js";
import { recordingIo, scriptedFetch } from "./test-support/recording-io.js";

afterEach(() => {
  vi.unstubAllEnvs();
});

/** The URL `queues list` posted to, with `argv` before it. */
async function urlUsed(argv: string[]): Promise<string | undefined> {
  const gateway = scriptedFetch(() => ({ body: { data: { queues: [] } } }));
  const urls: string[] = [];
  const code = await runCli([...argv, "queues", "list"], recordingIo(), { fetch: (url, init) => (urls.push(url), gateway.fetch(url, init)) });
  expect(code).toBe(ExitCode.OK);
  return urls[0];
}

describe("--url", () => {
  it("beats TASKLANE_URL; a URL without a path means the gateway's /graphql; http and https both go", async () => {
    vi.stubEnv("TASKLANE_API_KEY", "tlk_k");
    vi.stubEnv("TASKLANE_URL", "http://from-env:4000/graphql");
    expect(await urlUsed([])).toBe("http://from-env:4000/graphql");
    expect(await urlUsed(["--url", "https://from-flag.example/graphql"])).toBe("https://from-flag.example/graphql");
    expect(await urlUsed(["--url", "https://tasklane.example.com"])).toBe("https://tasklane.example.com/graphql");
    vi.stubEnv("TASKLANE_URL", "http://127.0.0.1:4000/");
    expect(await urlUsed([])).toBe("http://127.0.0.1:4000/graphql");
  });

  it("graphqlEndpoint leaves a URL with a path or query as given", () => {
    expect(graphqlEndpoint("http://gw:4000")).toBe("http://gw:4000/graphql");
    expect(graphqlEndpoint("HTTPS://gw/")).toBe("HTTPS://gw/graphql");
    expect(graphqlEndpoint("https://proxy.example/tasklane/graphql")).toBe("https://proxy.example/tasklane/graphql");
    expect(graphqlEndpoint("http://gw:4000/?x=1")).toBe("http://gw:4000/?x=1");
  });
});

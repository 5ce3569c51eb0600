import { describe, expect, it } from "vitest";
import { shownUrl } from "./shown-url.js";

describe("shownUrl", () => {
  it("hides credentials written into a URL", () => {
    expect(shownUrl("https://user:s3cret@gw.example:4000/graphql")).toBe("https://***@gw.example:4000/graphql");
    expect(shownUrl("ws://token@127.0.0.1:4000/graphql")).toBe("ws://***@127.0.0.1:4000/graphql");
  });

  it("leaves a URL without credentials as it is, an @ in its path or query included", () => {
    for (const url of ["http://127.0.0.1:4000/graphql", "https://gw.example/a@b?x=@y", "not a url"]) expect(shownUrl(url)).toBe(url);
  });
});

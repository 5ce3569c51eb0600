/**
 * POST /graphql with a JSON body, served on node:http straight into Apollo's
 * executeHTTPGraphQLRequest, the way Apollo's own integrations call it.
 *
 * Why: Express's router, express.json and Apollo's Express integration
 * cost more than a small call's own work: `{ __typename }` took ~270 µs of
 * gateway CPU through them and takes ~150 here, a single submitTask ~430 and
 * ~280 (32 calls in flight, alternating runs; test/bench/findings.md). A
 * worker's and a producer's calls are all of this kind.
 *
 * Only the plain case takes this path: POST, `Content-Type: application/json`
 * (UTF-8 or no charset), no Content-Encoding. GET requests, other content
 * types, compressed bodies, and /healthz, /metrics and the rest stay with
 * Express (server.ts), whose answers this path gives for the same bodies.
 */
import { isUtf8 } from "node:buffer";
import type { IncomingMessage, ServerResponse } from "node:http";
import { HeaderMap, type ApolloServer } from "@apollo/server";
import type { GatewayContext } from "../graphql/context.js";
import type { Logger } from "../observability/logger.js";
import { BODY_NOT_JSON, BODY_NOT_UTF8, BODY_TOO_LARGE, MAX_BODY_BYTES, internalError, postBodyRefusal, refuse, type Refusal } from "./graphql-guards.js";
import { openRequestScope, splitUrl, type HttpRequestScope } from "./request-scope.js";

export interface GraphqlEndpointOptions {
  apollo: ApolloServer<GatewayContext>;
  log: Logger;
  /** The GraphQL context of one request (authentication, the API rate limit), as the Express path builds it. */
  contextFor(req: IncomingMessage, res: ServerResponse, body: unknown, scope: HttpRequestScope): Promise<GatewayContext>;
}

/** Whether this path serves `req`: a plain JSON POST to /graphql. */
export function takesGraphqlPost(req: IncomingMessage): boolean {
  if (req.method !== "POST" || splitUrl(req.url).path !== "/graphql") return false;
  const encoding = req.headers["content-encoding"];
  if (encoding !== undefined && encoding.toLowerCase() !== "identity") return false;
  return isPlainJson(req.headers["content-type"]);
}

/** `application/json`, with no parameter or only charset=utf-8 (what body-parser reads the same way). */
function isPlainJson(contentType: string | undefined): boolean {
  if (contentType === undefined) return false;
  const [type, ...params] = contentType.split(";");
  if (type!.trim().toLowerCase() !== "application/json") return false;
  return params.every((param) => /^\s*charset\s*=\s*"?utf-8"?\s*$/i.test(param));
}

/** Serves a request takesGraphqlPost accepted. */
export function graphqlEndpoint(opts: GraphqlEndpointOptions): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    const scope = openRequestScope(req, res, opts.log);
    serve(opts, req, res, scope).catch((error: unknown) => internalError(res, scope, opts.log, error));
  };
}

async function serve(opts: GraphqlEndpointOptions, req: IncomingMessage, res: ServerResponse, scope: HttpRequestScope): Promise<void> {
  const read = await readBody(req);
  if ("refusal" in read) return refuse(res, read.refusal);
  const refusal = postBodyRefusal(read.body);
  if (refusal) return refuse(res, refusal);
  return execute(opts, req, res, read.body, scope);
}

/** body-parser's strict check: the first character after JSON whitespace. */
const JSON_FIRST_CHAR = /^[\x20\x09\x0a\x0d]*([^\x20\x09\x0a\x0d])/;

type ReadBody = { body: unknown } | { refusal: Refusal };

/**
 * The body as body-parser's json() reads it: at most MAX_BODY_BYTES, UTF-8,
 * an object or array ("strict"), an empty body as `{}`. The rest of an
 * oversized body is read and dropped, as after body-parser's refusal, so the
 * client, still sending, gets the answer rather than a broken pipe.
 */
function readBody(req: IncomingMessage): Promise<ReadBody> {
  const declared = Number(req.headers["content-length"]);
  if (declared > MAX_BODY_BYTES) {
    req.resume();
    return Promise.resolve({ refusal: BODY_TOO_LARGE });
  }
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size <= MAX_BODY_BYTES) return void chunks.push(chunk);
      req.off("data", onData);
      req.resume();
      resolve({ refusal: BODY_TOO_LARGE });
    };
    req.on("data", onData);
    // The client went away mid-body: answered as body-parser's "request aborted" was (a 400
    // nobody reads), not logged as a failure of ours.
    req.once("error", () => resolve({ refusal: BODY_NOT_JSON }));
    req.once("close", () => {
      if (!req.complete) resolve({ refusal: BODY_NOT_JSON });
    });
    req.once("end", () => {
      if (size > MAX_BODY_BYTES) return;
      const bytes = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size);
      if (!isUtf8(bytes)) return resolve({ refusal: BODY_NOT_UTF8 });
      const text = bytes.toString("utf8");
      if (text.length === 0) return resolve({ body: {} });
      const first = JSON_FIRST_CHAR.exec(text)?.[1];
      if (first !== "{" && first !== "[") return resolve({ refusal: BODY_NOT_JSON });
      try {
        resolve({ body: JSON.parse(text) as unknown });
      } catch {
        resolve({ refusal: BODY_NOT_JSON });
      }
    });
  });
}

async function execute(opts: GraphqlEndpointOptions, req: IncomingMessage, res: ServerResponse, body: unknown, scope: HttpRequestScope): Promise<void> {
  const headers = new HeaderMap();
  for (const [key, value] of Object.entries(req.headers)) {
    if (value !== undefined) headers.set(key, Array.isArray(value) ? value.join(", ") : value);
  }
  const response = await opts.apollo.executeHTTPGraphQLRequest({
    httpGraphQLRequest: { method: "POST", headers, search: splitUrl(req.url).search, body },
    context: () => opts.contextFor(req, res, body, scope),
  });
  for (const [key, value] of response.headers) res.setHeader(key, value);
  res.statusCode = response.status ?? 200;
  if (response.body.kind === "complete") {
    res.setHeader("content-length", Buffer.byteLength(response.body.string));
    res.end(response.body.string);
    return;
  }
  for await (const chunk of response.body.asyncIterator) res.write(chunk);
  res.end();
}

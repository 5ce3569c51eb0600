/**
 * Executes operations with graphql-jit: each operation that recurs is
 * compiled once into a function that coerces its variables and walks its
 * selection, instead of graphql-js interpreting the document on every call.
 *
 * Why: a worker's calls carry many objects. graphql-js resolves and
 * completes each field of each object through generic code (a 100-task lease
 * answer is ~2,400 fields); compiled, with plain fields read as properties
 * (simpleResolvers on every object type), a lease costs the gateway ~12% less
 * per task and a batch of outcomes ~11% less (test/bench/findings.md).
 *
 * How: Apollo Server 4 and 5 take a custom executor only through their
 * `gateway` option (its migration guide names it as the replacement of the
 * removed `executor`). This "gateway" serves our own schema: it hands Apollo
 * the schema once, and Apollo still parses, validates and runs every plugin;
 * only execution is ours. An operation graphql-jit cannot compile runs on
 * graphql-js as before.
 */
import type { GatewayExecutionResult, GatewayGraphQLRequestContext, GatewayInterface, GatewaySchemaLoadOrUpdateCallback } from "@apollo/server-gateway-interface";
import { GraphQLError, execute, printSchema, type DocumentNode, type GraphQLSchema } from "graphql";
import { compileQuery, isCompiledQuery, type CompiledQuery } from "graphql-jit";
import type { GatewayContext } from "./context.js";

/** null: graphql-jit refused the operation; graphql-js runs it. */
type Compiled = CompiledQuery | null;
type Compile = typeof compileQuery;

/**
 * An operation is compiled on its second run, not its first: compiling costs
 * ~0.7 ms for a lease-sized document (0.1-0.2 for a small one), several runs'
 * worth, so a document sent once (a one-off query, or a flood of distinct
 * ones) is interpreted as before and only what recurs is compiled.
 */
const COMPILE_ON_RUN = 2;

interface Operation {
  runs: number;
  compiled?: Compiled;
}

/**
 * Operations by document, then by operation name. Apollo keeps parsed
 * documents in its document store (an LRU by query hash) and hands the same
 * DocumentNode to every request of that query, so an operation compiles once;
 * when Apollo drops a document, its compilations go with it.
 */
class CompiledOperations {
  readonly #byDocument = new WeakMap<DocumentNode, Map<string | null, Operation>>();

  constructor(
    private readonly schema: GraphQLSchema,
    private readonly compile: Compile,
  ) {}

  /** The compiled operation, or null while graphql-js is to run it. */
  get(document: DocumentNode, operationName: string | null): Compiled {
    let byName = this.#byDocument.get(document);
    if (!byName) this.#byDocument.set(document, (byName = new Map()));
    let operation = byName.get(operationName);
    if (!operation) byName.set(operationName, (operation = { runs: 0 }));
    if (operation.compiled !== undefined) return operation.compiled;
    if (++operation.runs < COMPILE_ON_RUN) return null;
    const result = this.compile(this.schema, document, operationName ?? undefined, {
      // Stack traces of errors a resolver did not throw (a null in a non-null field):
      // the original error's stack is kept either way, and formatError logs it.
      disablingCapturingStackErrors: true,
    });
    operation.compiled = isCompiledQuery(result) ? result : null;
    return operation.compiled;
  }
}

/**
 * graphql-jit's errors inherit from graphql-js's but leave `extensions`
 * undefined when the resolver's error has none; Apollo reads
 * `extensions.code` of every error, and such an error would be answered as
 * a bare "Internal server error" (no path, no request id). Rebuilt as
 * graphql-js would have built it.
 */
function asGraphQLError(error: GraphQLError): GraphQLError {
  const rebuilt = new GraphQLError(error.message, { path: error.path, originalError: error.originalError ?? undefined, extensions: error.extensions ?? undefined });
  // graphql-jit reports locations itself (it keeps no AST nodes on its errors).
  return error.locations ? Object.assign(rebuilt, { locations: error.locations }) : rebuilt;
}

/** graphql-js's own refusal of an operation name, typed as the contract's bad input. */
function unknownOperation(name: string | null | undefined): GatewayExecutionResult {
  const message = name ? `Unknown operation named "${name}".` : "Must provide operation name if query contains multiple operations.";
  return { errors: [new GraphQLError(message, { extensions: { code: "BAD_USER_INPUT", http: { status: 400 } } })] };
}

/** Apollo's `gateway` option, executing our schema's operations compiled; `compile` is a seam for tests. */
export function compiledExecutionGateway(schema: GraphQLSchema, compile: Compile = compileQuery): GatewayInterface {
  const operations = new CompiledOperations(schema, compile);
  const listeners = new Set<GatewaySchemaLoadOrUpdateCallback>();
  const executor = async (request: GatewayGraphQLRequestContext): Promise<GatewayExecutionResult> => {
    // Apollo passes the name it resolved, null when the client's named none of the document's
    // operations: graphql-js then ran the document's only one (a mutation committed, the cost
    // guard, which looks at the resolved operation, skipped) and Apollo answered 500.
    if (request.operation === undefined) return unknownOperation(request.request.operationName);
    // Each operation (each of a batch's too) runs within its tenant's share of the gateway
    // (limits/tenant-operations.ts); refused, it answers RATE_LIMITED with nothing run.
    const { operations: tenantOperations, principal } = request.context as Partial<GatewayContext>;
    if (tenantOperations === undefined || principal === undefined) return execution(request);
    return tenantOperations.run(principal, () => execution(request), (error) => ({ errors: [error] }));
  };
  const execution = async (request: GatewayGraphQLRequestContext): Promise<GatewayExecutionResult> => {
    const { document, operationName, context } = request;
    const variableValues = request.request.variables ?? {};
    const interpreted = (): Promise<GatewayExecutionResult> | GatewayExecutionResult =>
      execute({ schema, document, operationName, contextValue: context, variableValues });
    const compiled = operations.get(document, operationName);
    if (!compiled) return interpreted();
    const result = await compiled.query(undefined, context, variableValues);
    // No data: the variables were refused before anything ran. graphql-js words and
    // locates those errors the way Apollo recognises as BAD_USER_INPUT, so it answers them.
    if (result.data === undefined) return interpreted();
    if (result.errors) return { ...result, errors: result.errors.map(asGraphQLError) };
    return result;
  };
  return {
    onSchemaLoadOrUpdate(callback) {
      listeners.add(callback);
      return () => listeners.delete(callback);
    },
    async load() {
      const coreSupergraphSdl = printSchema(schema);
      for (const listener of listeners) listener({ apiSchema: schema, coreSupergraphSdl });
      return { executor };
    },
    async stop() {
      listeners.clear();
    },
  };
}

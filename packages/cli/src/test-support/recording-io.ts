/** A CliIo for unit tests: records what was written, answers prompts from a list, reads files from a map. */
import { Interrupted } from "../errors.js";
import { FileTooLarge, type CliIo } from "../io.js";

export interface RecordingIo extends CliIo {
  readonly stdout: string;
  readonly stderr: string;
  /** The questions asked, in order. */
  readonly asked: string[];
  /** Ctrl-C: calls the listeners onInterrupt and onStop registered (as a SIGINT would). */
  interrupt(): void;
  /** SIGTERM: calls the listeners onStop registered. */
  terminate(): void;
}

export interface RecordingIoOptions {
  stdinIsTTY?: boolean;
  stderrIsTTY?: boolean;
  /** Files by path ("-" for standard input). */
  files?: Record<string, string>;
  /** Answers to prompts, in order; null: Ctrl-C at that prompt. */
  answers?: (string | null)[];
}

export function recordingIo(options: RecordingIoOptions = {}): RecordingIo {
  let stdout = "";
  let stderr = "";
  const asked: string[] = [];
  const answers = [...(options.answers ?? [])];
  const interruptListeners = new Set<() => void>();
  const stopListeners = new Set<() => void>();
  return {
    out: (text) => void (stdout += text),
    err: (text) => void (stderr += text),
    stdoutIsTTY: false,
    stderrIsTTY: options.stderrIsTTY ?? false,
    stdinIsTTY: options.stdinIsTTY ?? false,
    async readText(path, maxBytes) {
      const text = options.files?.[path];
      if (text === undefined) throw new Error(`ENOENT: no such file or directory, open '${path}'`);
      const bytes = Buffer.byteLength(text);
      if (bytes > maxBytes) throw new FileTooLarge(bytes, maxBytes);
      return text;
    },
    async ask(question) {
      asked.push(question);
      const answer = answers.shift();
      if (answer === null) throw new Interrupted();
      return answer ?? "";
    },
    onInterrupt(listener) {
      const own = () => listener();
      interruptListeners.add(own);
      return () => void interruptListeners.delete(own);
    },
    onStop(listener) {
      const own = () => listener();
      stopListeners.add(own);
      return () => void stopListeners.delete(own);
    },
    interrupt: () => [...interruptListeners, ...stopListeners].forEach((listener) => listener()),
    terminate: () => [...stopListeners].forEach((listener) => listener()),
    get stdout() {
      return stdout;
    },
    get stderr() {
      return stderr;
    },
    asked,
  };
}

/** A fetch answering each GraphQL request with `answer(operationName, variables)`: { data } or { errors } with an HTTP status. */
export function scriptedFetch(answer: (operation: string, variables: Record<string, unknown>) => { status?: number; body: unknown }) {
  const calls: { operation: string; variables: Record<string, unknown>; authorization: string | null }[] = [];
  const fetchLike = async (_input: string, init: RequestInit): Promise<Response> => {
    const { query, variables } = JSON.parse(String(init.body)) as { query: string; variables: Record<string, unknown> };
    const operation = /^\s*(?:query|mutation)\s+([A-Za-z_]\w*)/.exec(query)?.[1] ?? "anonymous";
    calls.push({ operation, variables, authorization: new Headers(init.headers).get("authorization") });
    const { status = 200, body } = answer(operation, variables);
    return new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });
  };
  return { fetch: fetchLike, calls };
}

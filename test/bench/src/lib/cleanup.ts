/**
 * Everything the harness starts (processes, databases) registers how to undo
 * it here, so an error or Ctrl-C mid-run leaves nothing behind.
 */
type Undo = () => Promise<void> | void;

const stack: { what: string; undo: Undo }[] = [];

/** Registers `undo`; call the returned function to run it early (and only once). */
export function onCleanup(what: string, undo: Undo): () => Promise<void> {
  const entry = { what, undo };
  stack.push(entry);
  return async () => {
    const i = stack.indexOf(entry);
    if (i < 0) return;
    stack.splice(i, 1);
    await undo();
  };
}

/** Undoes everything still registered, newest first; failures are reported, not thrown. */
export async function cleanupAll(): Promise<void> {
  while (stack.length) {
    const entry = stack.pop() as { what: string; undo: Undo };
    try {
      await entry.undo();
    } catch (error: unknown) {
      process.stderr.write(`cleanup of ${entry.what} failed: ${error instanceof Error ? error.message : String(error)}\n`);
    }
  }
}

import { ErrorCode, isTasklaneError } from "../errors.js";
import type { CallOptions, GraphQLTransport, RetryLog } from "../transport.js";

/**
 * Runs a delete mutation (answering Boolean) that the transport may send again
 * after an answer was lost. The repeat then finds the object gone, NOT_FOUND,
 * when the lost attempt had deleted it: that is the outcome the caller asked
 * for, answered as the first attempt would have (true). A NOT_FOUND without a
 * lost answer before it stands. (After a lost answer the SDK cannot tell an
 * object it deleted from one that was never there; either way it is gone.)
 */
export async function deleteCall(
  transport: GraphQLTransport,
  operation: "deleteQueue" | "deleteSchedule" | "deleteWebhook",
  document: string,
  variables: Record<string, unknown>,
  opts?: CallOptions,
): Promise<boolean> {
  const log: RetryLog = { ambiguous: false };
  try {
    const data = await transport.execute<Record<string, boolean>>({ operation, document, idempotent: true }, variables, opts, log);
    return data[operation] as boolean;
  } catch (error: unknown) {
    if (log.ambiguous && isTasklaneError(error, ErrorCode.NOT_FOUND)) return true;
    throw error;
  }
}

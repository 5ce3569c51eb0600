/**
 * Recognises "a backing store cannot be reached right now" (PostgreSQL
 * restarting, a connection cut, the pool unable to connect) so clients get
 * OVERLOADED with retry advice instead of an INTERNAL error they cannot act
 * on. Nothing was changed by such a request: its transaction never committed.
 * The recognition itself is @tasklane/db's (the PUSH worker uses it too); it
 * sees through a GraphQLError's originalError.
 */
import { OverloadedError } from "@tasklane/core";
import { isStoreUnavailable } from "@tasklane/db";

/** How long clients are told to wait: a Postgres restart or failover takes seconds. */
export const STORE_UNAVAILABLE_RETRY_AFTER_SECONDS = 2;

export { isStoreUnavailable };

export const storeUnavailableError = () => new OverloadedError(STORE_UNAVAILABLE_RETRY_AFTER_SECONDS);

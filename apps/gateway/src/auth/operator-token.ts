/**
 * The platform admin token. Both sides are hashed before the constant-time
 * comparison so neither the content nor the length of the token leaks through
 * timing.
 */
import { createHash, timingSafeEqual } from "node:crypto";

function digest(s: string): Buffer {
  return createHash("sha256").update(s, "utf8").digest();
}

export class OperatorToken {
  readonly #digest: Buffer;

  constructor(token: string) {
    this.#digest = digest(token);
  }

  matches(presented: string): boolean {
    return timingSafeEqual(this.#digest, digest(presented));
  }
}

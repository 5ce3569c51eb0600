/**
 * A sleep that wake() cuts short: stop() so shutdown never waits out a standby
 * interval, and a newly marked listener so its first events are not held
 * back by the relay's slow poll. A wake while nobody sleeps is kept for the
 * next sleep, which then returns at once: a listener marked while the relay
 * was reading is not left waiting a whole slow poll.
 */
export class Sleeper {
  #wake: (() => void) | undefined;
  #timer: NodeJS.Timeout | undefined;
  #pending = false;

  sleep(ms: number): Promise<void> {
    if (this.#pending) {
      this.#pending = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const wake = () => {
        clearTimeout(this.#timer);
        this.#wake = undefined;
        resolve();
      };
      this.#wake = wake;
      this.#timer = setTimeout(wake, ms);
    });
  }

  wake(): void {
    if (this.#wake) this.#wake();
    else this.#pending = true;
  }
}

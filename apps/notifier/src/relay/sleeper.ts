/** A sleep that stop() can cut short, so shutdown never waits out a standby interval. */
export class Sleeper {
  #wake: (() => void) | undefined;
  #timer: NodeJS.Timeout | undefined;

  sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      this.#wake = resolve;
      this.#timer = setTimeout(resolve, ms);
    });
  }

  wake(): void {
    clearTimeout(this.#timer);
    this.#wake?.();
  }
}

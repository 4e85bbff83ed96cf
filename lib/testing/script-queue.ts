/**
 * The ordered, run-length-encoded script behind `Sequence` and `ScriptedFetch`: each entry answers
 * `times` calls; once all are used the last entry answers every later call.
 * @internal
 */
export class ScriptQueue<S> {
  private readonly entries: { readonly step: S; readonly times: number }[] = [];
  private index = 0;
  private used = 0;

  /** Appends `step` for `times` (>= 1, already validated) consecutive calls. */
  add(step: S, times: number): void {
    this.entries.push({ step, times });
  }

  /** True when nothing was ever added. */
  get isEmpty(): boolean {
    return this.entries.length === 0;
  }

  /** Calls left before the last entry starts repeating. */
  get remaining(): number {
    let left = -this.used;
    for (let i = this.index; i < this.entries.length; i++) left += this.entries[i]!.times;
    return Math.max(0, left);
  }

  /** The step for the next call (the last one again once the script is used up); `undefined` when empty. */
  take(): S | undefined {
    const entries = this.entries;
    if (entries.length === 0) return undefined;
    while (this.index < entries.length && this.used >= entries[this.index]!.times) {
      this.index++;
      this.used = 0;
    }
    if (this.index >= entries.length) return entries[entries.length - 1]!.step;
    this.used++;
    return entries[this.index]!.step;
  }
}

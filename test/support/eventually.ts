/**
 * Waits for an asynchronous effect that has no completion to await (e.g. a signal's activity),
 * re-checking every few milliseconds for at most `timeoutMs`. Timers are never waited for this way:
 * tests skip time with the Temporal test server instead.
 */
export async function eventually<T>(
  probe: () => Promise<T>,
  accept: (value: T) => boolean,
  timeoutMs = 30_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (accept(value) || Date.now() > deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

// The one polling helper of the scripts (npm run dev, chaos, bench): every wait is bounded.

/** Resolves after `ms` milliseconds. */
export function pause(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * Waits for `probe` to return true, checking every `everyMs`, for at most `limitMs`; false when it never did.
 * A probe that throws counts as false (a service not up yet refuses connections).
 */
export async function waitUntil(
  probe: () => Promise<boolean> | boolean,
  limitMs: number,
  everyMs = 200,
): Promise<boolean> {
  const deadline = Date.now() + limitMs;
  for (;;) {
    if (
      await Promise.resolve()
        .then(probe)
        .catch(() => false)
    )
      return true;
    if (Date.now() > deadline) return false;
    await pause(everyMs);
  }
}

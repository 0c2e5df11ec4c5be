// A call to an outside system whose attempts ran out says nothing about whether the operation happened: a
// timeout may follow the execution. Before the workflow decides anything (fail, refund, release a hold) it asks
// the provider under the same idempotency key, and while the provider cannot tell it waits, polling with
// backoff for a bounded time. Money moves only on "executed" or "not executed", never on "unknown".
// (Deterministic module: workflows import it.)
import type { Duration } from '@temporalio/common';
import { ActivityFailure, ApplicationFailure, patched, sleep } from '@temporalio/workflow';
import type { OperationLookup } from '../src/providers/unavailable';
import { chainCoinRefusals, providerOutcomeFailures } from '../src/temporal/failure-types';

/** Waits between asks while the provider cannot tell: about two hours in all, then an operator decides. */
export const UNKNOWN_OUTCOME_POLLS: Duration[] = [
  '1 minute',
  '2 minutes',
  '4 minutes',
  '8 minutes',
  '15 minutes',
  '30 minutes',
  '1 hour',
];

/**
 * Failures that already say what became of the operation, so nothing is looked up: the chain refused the leg's coin
 * for good, with nothing reserved under its key (a lookup would find the same refusal, or nothing sent).
 */
const KNOWN_OUTCOME_FAILURES: readonly string[] = Object.values(chainCoinRefusals);

/** `error` says what became of the operation (KNOWN_OUTCOME_FAILURES); false for histories from before the rule. */
function outcomeKnownFrom(error: unknown): boolean {
  return failureOfType(error, KNOWN_OUTCOME_FAILURES) !== null && patched('chain-refusal-not-looked-up');
}

/**
 * Asks until the provider knows, within UNKNOWN_OUTCOME_POLLS; `onUnknown` runs once, when the first answer is
 * unknown (to show it). An ask that itself fails (its own bounded retries ran out) counts as unknown, unless its failure
 * says the outcome (KNOWN_OUTCOME_FAILURES): then it is thrown.
 */
export async function askUntilKnown<T>(
  lookUp: () => Promise<OperationLookup<T>>,
  onUnknown: () => void = () => undefined,
): Promise<OperationLookup<T>> {
  const ask = async (): Promise<OperationLookup<T>> => {
    try {
      return await lookUp();
    } catch (error) {
      if (error instanceof ActivityFailure && !outcomeKnownFrom(error)) return { state: 'unknown' };
      throw error;
    }
  };
  for (const [index, wait] of UNKNOWN_OUTCOME_POLLS.entries()) {
    const found = await ask();
    if (found.state !== 'unknown') return found;
    if (index === 0) onUnknown();
    await sleep(wait);
  }
  return ask();
}

/**
 * `call`, and when its attempts run out, what the provider knows of it: executed -> its outcome, as if the answer
 * had come; not executed -> the call's failure, as before; still unknown -> a ProviderOutcomeUnknown failure. A
 * failure that says the outcome (KNOWN_OUTCOME_FAILURES), of the call or of a lookup, is thrown as it is.
 */
export async function withOutcomeLookup<T>(
  call: () => Promise<T>,
  lookUp: () => Promise<OperationLookup<T>>,
  onUnknown?: () => void,
): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (!(error instanceof ActivityFailure) || !patched('provider-outcome-lookup')) throw error;
    if (outcomeKnownFrom(error)) throw error;
    const found = await askUntilKnown(lookUp, onUnknown);
    if (found.state === 'executed') return found.outcome;
    if (found.state === 'not_executed') throw error;
    throw ApplicationFailure.nonRetryable(
      'the provider cannot say whether the operation was made; it may have been',
      providerOutcomeFailures.unknown,
    );
  }
}

/**
 * `record` (the database step after an operation the provider made); when its attempts run out, a failure that
 * says the money moved outside, so nothing may undo it before a retry records it.
 */
export async function recordExecuted<T>(what: string, record: () => Promise<T>): Promise<T> {
  try {
    return await record();
  } catch (error) {
    if (!(error instanceof ActivityFailure) || !patched('provider-executed-not-recorded')) throw error;
    throw ApplicationFailure.nonRetryable(
      `${what} was made but could not be recorded; a retry records it`,
      providerOutcomeFailures.executedNotRecorded,
    );
  }
}

/** The message of the first failure in `error`'s chain of causes whose type is one of `types`. */
export function failureOfType(error: unknown, types: readonly string[]): string | null {
  for (let cause = error; cause instanceof Error; cause = (cause as Error & { cause?: unknown }).cause) {
    if (cause instanceof ApplicationFailure && cause.type && types.includes(cause.type)) return cause.message;
  }
  return null;
}

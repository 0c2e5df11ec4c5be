// Outside systems that cannot answer (or are not connected in this deployment) fail closed: the request is
// refused with 503 service_unavailable (the API maps this error) instead of inventing an answer.
export class ProviderUnavailableError extends Error {
  override name = 'ProviderUnavailableError';
}

/** Implemented by the stand-ins of providers with no real integration: production refuses the flows that need one. */
export interface Unconnected {
  /** What is missing, for the start-up error, e.g. "no screening vendor is connected". */
  readonly unconnected: string;
}

export function isUnconnected(provider: unknown): provider is Unconnected {
  return typeof (provider as Partial<Unconnected>)?.unconnected === 'string';
}

/**
 * What a provider knows of an operation asked for by its idempotency key: made (with the outcome its first answer
 * carried), never made, or unknown (it cannot tell yet). Money moves on `executed` and `not_executed` only.
 */
export type OperationLookup<Outcome> =
  { state: 'executed'; outcome: Outcome } | { state: 'not_executed' } | { state: 'unknown' };

/** Asks a provider what became of an operation; a provider that cannot be reached cannot tell either: unknown. */
export async function lookUpOperation<Outcome>(
  lookUp: () => Promise<OperationLookup<Outcome>>,
): Promise<OperationLookup<Outcome>> {
  try {
    return await lookUp();
  } catch (error) {
    if (error instanceof ProviderUnavailableError) return { state: 'unknown' };
    throw error;
  }
}

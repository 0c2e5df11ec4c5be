// What one API request carries implicitly down to the code that writes and calls Temporal: its deadline
// (every wait inside the request is bounded by it) and, when the request has an Idempotency-Key, the hook
// that stores the response in the same database transaction as the resource it describes.
import { AsyncLocalStorage } from 'node:async_hooks';
import { createHash } from 'node:crypto';
import type { DatabaseTransaction } from './persistence/database';
import { newId } from './domain/ids';

export interface RequestContext {
  /** Epoch milliseconds by which the request must have answered. */
  deadline: number;
  /** Set by the idempotency layer: stores `body` as the key's response inside `tx` (owner-checked). */
  storeIdempotentResponse?: (tx: DatabaseTransaction, body: unknown) => Promise<void>;
  /** True once the response was stored inside a write transaction. */
  idempotentResponseStored?: boolean;
  /** Set by the idempotency layer: the partner, its Idempotency-Key and the request's fingerprint. */
  idempotentRequest?: string;
}

const storage = new AsyncLocalStorage<RequestContext>();

export function runInRequestContext<T>(context: RequestContext, run: () => Promise<T>): Promise<T> {
  return storage.run(context, run);
}

export function currentRequestContext(): RequestContext | undefined {
  return storage.getStore();
}

/** Milliseconds left before the current request's deadline (`fallbackMs` outside a request). */
export function remainingMs(fallbackMs: number): number {
  const context = storage.getStore();
  return context ? Math.max(0, context.deadline - Date.now()) : fallbackMs;
}

/**
 * The id of what this request makes (`purpose` names it), the same on every retry with its Idempotency-Key: a retry of
 * a request cut off after it reached a workflow (e.g. a 503 while the worker was down, the update still delivered
 * later) then names the same quote consumer or workflow update, which Temporal and the quote answer as done, instead
 * of a second one. A new id without a key.
 */
export function idOfThisRequest(purpose: string): string {
  const request = storage.getStore()?.idempotentRequest;
  if (!request) return newId();
  const hex = createHash('sha256').update(`${request}:${purpose}`).digest('hex');
  // A UUID of version 8 (custom), variant 10.
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(13, 16)}-${((parseInt(hex[16] as string, 16) & 3) | 8).toString(16)}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

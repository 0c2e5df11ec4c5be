// What one API request carries implicitly down to the code that writes and calls Temporal: its deadline
// (every wait inside the request is bounded by it) and, when the request has an Idempotency-Key, the hook
// that stores the response in the same database transaction as the resource it describes.
import { AsyncLocalStorage } from 'node:async_hooks';
import type { Prisma } from './db';

export interface RequestContext {
  /** Epoch milliseconds by which the request must have answered. */
  deadline: number;
  /** Set by the idempotency layer: stores `body` as the key's response inside `tx` (owner-checked). */
  storeIdempotentResponse?: (tx: Prisma.TransactionClient, body: unknown) => Promise<void>;
  /** True once the response was stored inside a write transaction. */
  idempotentResponseStored?: boolean;
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

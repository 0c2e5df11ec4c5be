import { randomUUID } from 'node:crypto';
import { v5 as uuidv5 } from 'uuid';

export { isUuid } from './uuid';

export function newId(): string {
  return randomUUID();
}

/** The namespace of the ids this service derives from outside references (a fixed random UUID, RFC 9562 v5). */
const DERIVED_IDS = '0f6a52a4-3f37-4c47-9a63-2f1f3a8c6d21';

/**
 * The id of what an outside report makes, derived from who reported it and their own reference for it: the same
 * report, however often and however concurrently it arrives, always names the same row (a name-based UUID).
 */
export function idFromReference(kind: string, provider: string, reference: string): string {
  return uuidv5(JSON.stringify([kind, provider, reference]), DERIVED_IDS);
}

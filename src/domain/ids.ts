import { randomUUID } from 'node:crypto';

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Identifiers are UUIDs; anything else can never name a resource (and answers 404). */
export function isUuid(value: string): boolean {
  return uuidPattern.test(value);
}

export function newId(): string {
  return randomUUID();
}

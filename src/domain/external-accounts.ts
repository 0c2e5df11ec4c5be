// Rules of external accounts that need no I/O: the rails, the statuses, and what makes two
// registrations the same bank account. The per-rail parts live in the rail definitions (./rails).
import { externalAccountDefinitionOf, type ExternalAccountRail, type RailObject } from './rails';

export { externalAccountRails, type ExternalAccountRail } from './rails';

/**
 * Decided by screening within the create request (SPEC 3.3); a potential match against the sanctions lists is
 * `under_review` until an operator clears it (approved) or confirms it (rejected), docs/screening.md. A
 * re-screening after a list changed can put an approved account under review again.
 */
export const externalAccountStatuses = ['approved', 'under_review', 'rejected'] as const;
export type ExternalAccountStatus = (typeof externalAccountStatuses)[number];

/**
 * The identity of a bank account, e.g. `sepa:DE89370400440532013000`, from its normalised rail object.
 * A customer registers each account once (a unique index on customer and identity enforces it).
 */
export function accountIdentityOf(rail: ExternalAccountRail, account: RailObject): string {
  return externalAccountDefinitionOf(rail).identity(account);
}

/** ISO alpha-3 country where the account is held: the rail's, or the rail object's own (SEPA). */
export function countryOfAccount(rail: ExternalAccountRail, account: RailObject): string {
  return externalAccountDefinitionOf(rail).country ?? String(account.country);
}

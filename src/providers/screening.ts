// Screening of a new external account's beneficiary (sanctions and watch lists) before the account
// can be used. It runs inside the create request: the response already carries approved or rejected.
import type { ExternalAccountRail } from '../domain/external-accounts';
import { ProviderUnavailableError, Unconnected } from './unavailable';

export interface ScreeningSubject {
  paymentRail: ExternalAccountRail;
  beneficiaryName: string;
  /** ISO alpha-3 country of the account. */
  country: string;
}

export type ScreeningResult = { outcome: 'approved' } | { outcome: 'rejected'; reason: string };

export interface AccountScreening {
  screen(subject: ScreeningSubject): Promise<ScreeningResult>;
}

/** Lower case, no accents, single spaces: "  SANCTIONED   Pérson" matches "Sanctioned Person". */
export function normaliseName(name: string): string {
  return name.normalize('NFD').replace(/\p{M}/gu, '').toLowerCase().replace(/\s+/g, ' ').trim();
}

/** Beneficiary names the sandbox rejects (compared without case, accents or extra spaces). */
export const sandboxDeniedBeneficiaries = ['Sanctioned Person', 'Blocked Beneficiary', 'Denied Company Ltd'] as const;

/** Rejects the beneficiaries on a fixed list and approves everyone else. */
export class DenyListScreening implements AccountScreening {
  private readonly denied: Set<string>;

  constructor(names: readonly string[]) {
    this.denied = new Set(names.map(normaliseName));
  }

  async screen(subject: ScreeningSubject): Promise<ScreeningResult> {
    return this.denied.has(normaliseName(subject.beneficiaryName))
      ? { outcome: 'rejected', reason: 'beneficiary name is on the deny list' }
      : { outcome: 'approved' };
  }
}

/** Production until a sanctions-screening vendor is integrated: refuses to screen rather than approve everyone. */
export class UnconnectedScreening implements AccountScreening, Unconnected {
  readonly unconnected = 'no screening vendor is connected (src/providers/screening.ts AccountScreening)';

  async screen(): Promise<ScreeningResult> {
    throw new ProviderUnavailableError(this.unconnected);
  }
}

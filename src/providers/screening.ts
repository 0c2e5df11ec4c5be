// Sanctions screening of a name: a new external account's holder (inside the create request: the response already
// carries the status), customers and their beneficial owners during verification, payout receivers, and everyone
// again when a list changes (docs/screening.md). ListScreening (screening-lists.ts) screens against the published
// lists; the sandbox without lists keeps a fixed deny list.
import type { ExternalAccountRail } from '../domain/external-accounts';
import type { MatchReport } from '../screening/matcher';
import { ProviderUnavailableError, Unconnected } from './unavailable';

export interface ScreeningSubject {
  name: string;
  kind?: 'individual' | 'entity';
  /** ISO alpha-3 country (of the account, or of the person's address). */
  country?: string | null;
  /** `YYYY-MM-DD`. */
  dateOfBirth?: string | null;
  nationality?: string | null;
  paymentRail?: ExternalAccountRail;
}

/** What a screening used and found: the list versions (source:sha256) and every entry matched. */
export interface ScreeningReport {
  versions: string[];
  matches: MatchReport[];
}

/**
 * approved: no potential match; review: a potential match an operator decides (docs/screening.md "Review");
 * rejected: the sandbox's deny list only (an exact name on it).
 */
export type ScreeningResult =
  | { outcome: 'approved'; report?: ScreeningReport }
  | { outcome: 'review'; reason: string; report: ScreeningReport }
  | { outcome: 'rejected'; reason: string; report?: ScreeningReport };

export interface Screening {
  screen(subject: ScreeningSubject): Promise<ScreeningResult>;
}

/** The name the external-account flow has always used. */
export type AccountScreening = Screening;

/** Lower case, no accents, single spaces: "  SANCTIONED   Pérson" matches "Sanctioned Person". */
export function normaliseName(name: string): string {
  return name.normalize('NFD').replace(/\p{M}/gu, '').toLowerCase().replace(/\s+/g, ' ').trim();
}

/** Beneficiary names the sandbox rejects (compared without case, accents or extra spaces). */
export const sandboxDeniedBeneficiaries = ['Sanctioned Person', 'Blocked Beneficiary', 'Denied Company Ltd'] as const;

/** Rejects the beneficiaries on a fixed list and approves everyone else. */
export class DenyListScreening implements Screening {
  private readonly denied: Set<string>;

  constructor(names: readonly string[]) {
    this.denied = new Set(names.map(normaliseName));
  }

  async screen(subject: ScreeningSubject): Promise<ScreeningResult> {
    return this.denied.has(normaliseName(subject.name))
      ? { outcome: 'rejected', reason: 'beneficiary name is on the deny list' }
      : { outcome: 'approved' };
  }
}

/** Production until a sanctions-screening vendor is integrated: refuses to screen rather than approve everyone. */
export class UnconnectedScreening implements Screening, Unconnected {
  readonly unconnected = 'no sanctions list is configured (SCREENING_LISTS, docs/screening.md)';

  async screen(): Promise<ScreeningResult> {
    throw new ProviderUnavailableError(this.unconnected);
  }
}

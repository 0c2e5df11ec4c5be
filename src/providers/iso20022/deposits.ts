// Deposits in EUR (SEPA) and USD (wire) are paid to the service's own accounts at the ISO 20022 bank, with the
// transaction's deposit reference as the remittance information; the bank's camt.054 notifies each credit and the
// bank-reports workflow records it (reports.ts). The other rails' instructions stay with `others`.
import type { FiatRail } from '../../domain/rails';
import type {
  DepositInstructionsRequest,
  DepositProvider,
  FiatRailInstructions,
  SenderDepositInstructions,
  StablecoinDepositInstructionsRequest,
} from '../transaction-deposits';
import type { Party } from './messages';
import type { Money } from '../../domain/money';
import { Iso20022BankClient } from './client';
import { accountParties, type Iso20022AccountsSetting } from './accounts';

/**
 * Sandbox: a credit to the service's account at the bank simulator, as a sender's bank would make it (its camt.054
 * notified `times` times); the bank's entry reference.
 */
export async function creditAtSandboxBank(
  bankUrl: string,
  credit: { amount: Money; remittance: string; payerName: string | null; times: number },
): Promise<{ reference: string }> {
  const answer = (await new Iso20022BankClient({ baseUrl: bankUrl, timeoutMs: 10_000 }).scenario({
    kind: 'credit',
    currency: credit.amount.currency,
    amount: credit.amount.toString(),
    remittance: credit.remittance,
    times: credit.times,
    ...(credit.payerName ? { payerName: credit.payerName } : {}),
  })) as { reference?: unknown };
  if (typeof answer.reference !== 'string') throw new Error('the bank simulator named no entry reference');
  return { reference: answer.reference };
}

/** The rails whose deposits this bank collects. */
export const iso20022DepositRails: readonly FiatRail[] = ['sepa', 'wire'];

export interface Iso20022CollectionAccounts {
  EUR: Party;
  USD: Party;
  bankName: string;
  bankAddress: FiatRailInstructions['wire']['bank_address'];
}

export class Iso20022DepositProvider implements DepositProvider {
  constructor(
    private readonly accounts: Iso20022CollectionAccounts,
    private readonly others: DepositProvider,
  ) {}

  stablecoinInstructionsFor(request: StablecoinDepositInstructionsRequest): SenderDepositInstructions {
    return this.others.stablecoinInstructionsFor(request);
  }

  async instructionsFor(request: DepositInstructionsRequest): Promise<SenderDepositInstructions> {
    if (!iso20022DepositRails.includes(request.rail)) return this.others.instructionsFor(request);
    const base = {
      payment_rail: request.rail,
      currency: request.amount.currency,
      amount: request.amount.toString(),
      reference: request.reference,
      deadline: request.deadline.toISOString(),
    };
    if (request.rail === 'sepa') {
      const eur = this.accounts.EUR;
      if (!('iban' in eur.account) || !('bic' in eur.agent)) throw new Error('ISO 20022: the EUR account has no IBAN');
      return {
        ...base,
        sepa: {
          iban: eur.account.iban,
          bic: eur.agent.bic,
          bank_name: this.accounts.bankName,
          beneficiary_name: eur.name,
        },
      };
    }
    const usd = this.accounts.USD;
    if (!('number' in usd.account) || !('abaRoutingNumber' in usd.agent)) {
      throw new Error('ISO 20022: the USD account has no account and routing number');
    }
    return {
      ...base,
      wire: {
        bank_account_number: usd.account.number,
        routing_number: usd.agent.abaRoutingNumber,
        bank_name: this.accounts.bankName,
        bank_address: this.accounts.bankAddress,
        beneficiary_name: usd.name,
      },
    };
  }
}

/** The service's accounts at the bank (ISO20022_ACCOUNTS), as deposit instructions name them. */
export function collectionAccountsOf(setting: Iso20022AccountsSetting): Iso20022CollectionAccounts {
  return { ...accountParties(setting), bankName: setting.bank_name, bankAddress: setting.bank_address };
}

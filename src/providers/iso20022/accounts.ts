// The service's own accounts at its ISO 20022 bank (ISO20022_ACCOUNTS, docs/configuration.md): the debtor of every
// pain.001 it sends and the account partners' senders pay deposits into. Configuration, not constants: a bank opens
// the accounts, and dev, tests and chaos name the bank simulator's (simulators/bank/iso20022/accounts.ts).
import { z } from 'zod';
import type { Party } from './messages';

const holder = z.string().min(1).max(70);

export const iso20022AccountsSchema = z.object({
  /** The bank's name and address, as deposit instructions show them. */
  bank_name: z.string().min(1),
  bank_address: z.object({
    street_line_1: z.string().min(1),
    city: z.string().min(1),
    postal_code: z.string().min(1),
    country: z.string().length(3),
  }),
  /** The EUR account (SEPA): IBAN and BIC. */
  EUR: z.object({
    holder,
    iban: z.string().regex(/^[A-Z]{2}\d{2}[A-Z0-9]{11,30}$/),
    bic: z.string().regex(/^[A-Z0-9]{8}([A-Z0-9]{3})?$/),
  }),
  /** The USD account (wire): account number and ABA routing number. */
  USD: z.object({
    holder,
    account_number: z.string().regex(/^\d{4,17}$/),
    routing_number: z.string().regex(/^\d{9}$/),
  }),
});

export type Iso20022AccountsSetting = z.infer<typeof iso20022AccountsSchema>;

/** The accounts as ISO parties, per currency. */
export function accountParties(setting: Iso20022AccountsSetting): Record<'EUR' | 'USD', Party> {
  return {
    EUR: { name: setting.EUR.holder, account: { iban: setting.EUR.iban }, agent: { bic: setting.EUR.bic } },
    USD: {
      name: setting.USD.holder,
      account: { number: setting.USD.account_number },
      agent: { abaRoutingNumber: setting.USD.routing_number },
    },
  };
}

// Request and response schemas of virtual accounts (SPEC 2.7, 4.5).
import { z } from 'zod';
import { chains } from '../domain/chains';
import { stablecoins } from '../domain/money';
import { paginationQuerySchema } from './pagination';
import { senderCurrencies } from '../providers/deposit-accounts';
import { addressSchema, always, text, timestampSchema } from './common';

import { virtualAccountStatuses, type VirtualAccountStatus } from '../domain/virtual-accounts';

export { virtualAccountStatuses, type VirtualAccountStatus };
const receiverCurrencies = stablecoins;

export const createVirtualAccountRequestSchema = z
  .object({
    customer_id: z.string().meta({ description: 'An approved customer of yours (404 if not yours).' }),
    name: text(100).meta({ example: 'EUR collections' }),
    sender: z
      .object({ currency: z.enum(senderCurrencies).meta({ description: 'Fiat the account receives.' }) })
      .strict(),
    receiver: z
      .object({
        currency: z.enum(receiverCurrencies).meta({ description: 'Stablecoin delivered to the wallet.' }),
        wallet_id: z.string().meta({ description: "One of the customer's wallets (404 if not yours)." }),
      })
      .strict(),
    accepts_third_party_payments: z
      .boolean()
      .optional()
      .meta({
        description:
          'EUR only (sending it for USD, even false, is invalid). True: deposits from senders other than the customer are ' +
          'accepted; default false: only the account holder’s. At most one EUR account per customer may have it true.',
      }),
    simulate: z
      .enum(['rejected'])
      .optional()
      .meta({
        description:
          'Sandbox only (400 in production): `rejected` opens the account under review and has the review reject it ' +
          'at once (reason `sandbox_simulated_rejection`), so that `virtual_account.rejected` can be tested. Without ' +
          'it the sandbox approves at creation.',
      }),
  })
  .strict()
  .superRefine((body, ctx) => {
    const currency = (body.sender as { currency?: unknown } | undefined)?.currency;
    if (currency === 'USD' && body.accepts_third_party_payments !== undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['accepts_third_party_payments'],
        message: 'only applies to EUR accounts; omit it for USD',
      });
    }
  }, always)
  .meta({
    id: 'CreateVirtualAccountRequest',
    oneOf: [
      { properties: { sender: { properties: { currency: { const: 'EUR' } } } } },
      {
        properties: { sender: { properties: { currency: { not: { const: 'EUR' } } } } },
        not: { required: ['accepts_third_party_payments'] },
      },
    ],
  });

export type CreateVirtualAccountRequest = z.output<typeof createVirtualAccountRequestSchema>;

const bankFields = {
  bank_name: z.string(),
  bank_address: addressSchema.meta({ description: 'Postal address of the receiving bank.' }),
  beneficiary_name: z.string().meta({ description: 'The customer: full name, or legal name of a business.' }),
};
const usDomesticSchema = (id: string) =>
  z
    .object({
      bank_account_number: z.string().meta({ example: '840123456789' }),
      routing_number: z.string().meta({ description: 'ABA routing number (9 digits).', example: '123456780' }),
      ...bankFields,
    })
    .meta({ id });

export const depositAddressesSchema = z
  .object({
    sepa: z
      .object({
        iban: z.string().meta({ description: 'Electronic format, no spaces.', example: 'DE89876543210000012345' }),
        bic: z.string().meta({ example: 'SBOXDEBBXXX' }),
        ...bankFields,
      })
      .meta({ id: 'SepaDepositAddress' })
      .optional(),
    ach: usDomesticSchema('AchDepositAddress').optional(),
    wire: usDomesticSchema('WireDepositAddress').optional(),
    swift: z
      .object({ bank_account_number: z.string(), bic: z.string().meta({ example: 'SBOXUS33XXX' }), ...bankFields })
      .meta({ id: 'SwiftDepositAddress' })
      .optional(),
  })
  .meta({
    id: 'DepositAddresses',
    description:
      'Empty (`{}`) until the account is approved. Then keyed by rail: EUR accounts have `sepa`; USD accounts have ' +
      '`ach`, `wire` and `swift` (one account number on all three).',
  });

export const virtualAccountSchema = z
  .object({
    id: z.uuid(),
    customer_id: z.uuid(),
    name: z.string(),
    status: z.enum(virtualAccountStatuses).meta({
      description:
        '`under_review` (production, until the review decides), `approved` (deposit details issued), `rejected`, or ' +
        '`cancelled` (by you, PUT; `deposit_addresses` is then `{}` and deposits to the old details are returned).',
    }),
    sender: z.object({ currency: z.enum(senderCurrencies) }),
    receiver: z.object({
      currency: z.enum(receiverCurrencies),
      wallet_id: z.uuid(),
      payment_rail: z.enum(chains).meta({ description: 'Chain of the wallet.' }),
      address: z.string().meta({ description: 'Address of the wallet the stablecoin is delivered to.' }),
    }),
    deposit_addresses: depositAddressesSchema,
    accepts_third_party_payments: z.boolean().optional().meta({ description: 'Present for EUR accounts only.' }),
    created_at: timestampSchema,
    updated_at: timestampSchema,
  })
  .meta({ id: 'VirtualAccount' });

export type VirtualAccountResource = z.input<typeof virtualAccountSchema>;

export const listVirtualAccountsQuerySchema = paginationQuerySchema
  .extend({
    customer_id: z
      .string()
      .optional()
      .meta({ description: "Only this customer's virtual accounts; a customer that is not yours answers 404." }),
  })
  .strict();

export const updateVirtualAccountRequestSchema = z
  .object({
    status: z.literal('cancelled').meta({ description: 'The only change a partner can make: cancel.' }),
  })
  .strict()
  .meta({ id: 'UpdateVirtualAccountRequest' });

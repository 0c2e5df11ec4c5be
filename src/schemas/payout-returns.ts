// Request and response schemas of a payout the receiving bank returned after completion (the sandbox's simulated
// return; production receives them from the rail). The amount's decimals are checked against the transaction's
// receiver currency by the service (known once the transaction is read).
import { z } from 'zod';
import { allCurrencies } from '../domain/money';
import { payoutReturnReasonCodes, payoutReturnReasons } from '../domain/transactions';
import { positiveAmountSchema, timestampSchema } from './common';

const reasonList = Object.entries(payoutReturnReasons)
  .map(([code, meaning]) => `\`${code}\` ${meaning.replace(/\.$/, '')}`)
  .join('; ');

export const sandboxPayoutReturnRequestSchema = z
  .object({
    amount: positiveAmountSchema.meta({
      description:
        'What came back, in the receiver currency: at most what was paid out (`receiver.amount`); less when the banks ' +
        'kept charges (422 `return_amount_exceeds_payout` above it).',
      example: '850.00',
    }),
    reason_code: z.enum(payoutReturnReasonCodes).meta({
      description: `The ISO 20022 return reason the bank gave: ${reasonList}.`,
      example: 'AC04',
    }),
    return_reference: z
      .string()
      .trim()
      .regex(/^[A-Za-z0-9][A-Za-z0-9./:_-]{0,63}$/, 'must be 1-64 letters, digits, dots, slashes, colons, _ or -')
      .optional()
      .meta({
        description:
          'The bank’s own reference of the return (defaults to `SANDBOX-RETURN-<transaction id>`). A return is recorded ' +
          'once per reference: the same reference again answers the return recorded first.',
        example: 'RTN20261126-0001',
      }),
  })
  .strict()
  .meta({ id: 'SandboxPayoutReturnRequest' });

export type SandboxPayoutReturnRequest = z.output<typeof sandboxPayoutReturnRequestSchema>;

export const payoutReturnSchema = z
  .object({
    id: z.uuid(),
    transaction_id: z.uuid(),
    amount: z.string().meta({ description: 'What came back, in the receiver currency.' }),
    currency: z.enum(allCurrencies),
    reason_code: z.enum(payoutReturnReasonCodes),
    return_reference: z.string().meta({ description: 'The bank’s reference of the return.' }),
    returned_at: timestampSchema,
    resolution: z
      .enum(['repaid', 'refunded'])
      .nullable()
      .meta({
        description:
          'null while the service decides what becomes of the money (the transaction is `returned`); `repaid` (paid ' +
          'out again: `completed`) or `refunded` (back to the sender: `refunded`).',
      }),
  })
  .meta({ id: 'PayoutReturn' });

export type PayoutReturnResource = z.input<typeof payoutReturnSchema>;

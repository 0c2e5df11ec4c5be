// Query and row schemas of the settlement report (GET /v1/reports/settlements).
import { z } from 'zod';

export const settlementReportQuerySchema = z
  .object({
    date: z
      .string()
      .regex(/^\d{4}-\d{2}-\d{2}$/, 'must be a date, YYYY-MM-DD')
      .refine((value) => {
        const date = new Date(`${value}T00:00:00.000Z`);
        return !Number.isNaN(date.getTime()) && date.toISOString().slice(0, 10) === value && value >= '1970-01-01';
      }, 'must be a date, YYYY-MM-DD')
      .meta({ description: 'The UTC day (00:00 to 24:00 UTC) the transactions reached their final status.' }),
    format: z
      .enum(['csv', 'json'])
      .optional()
      .meta({ description: '`csv` (the default) or `json`; without it, `Accept: application/json` asks for JSON.' }),
  })
  .strict();

const cell = z.string().nullable();

/** A row of the report: the CSV's columns, the JSON's keys (docs/reconciliation.md). */
export const settlementReportRowSchema = z
  .object({
    transaction_id: z.uuid(),
    type: z.enum(['fiat_to_fiat', 'payin', 'payout']),
    customer_id: z.uuid(),
    status: z.enum(['completed', 'refunded', 'cancelled', 'failed']),
    failure_reason: cell,
    sender_currency: z.string(),
    sender_amount: z.string(),
    sender_payment_rail: z.string(),
    stablecoin_currency: cell,
    stablecoin_amount: cell,
    stablecoin_payment_rail: cell,
    receiver_currency: z.string(),
    receiver_amount: z.string(),
    receiver_payment_rail: z.string(),
    sender_quotation: cell.meta({ description: 'Locked rate sender currency -> stablecoin (fiat to fiat, pay-in).' }),
    receiver_quotation: cell.meta({
      description: 'Locked rate stablecoin -> receiver currency (fiat to fiat, payout).',
    }),
    fee_currency: z.string().meta({ description: 'The currency of the fees: the sender currency.' }),
    service_fee: z
      .string()
      .meta({ description: 'Kept: the quote’s fee when completed, 0 otherwise (refunds give it back).' }),
    partner_fee: z.string().meta({ description: 'Kept and owed to you, as `service_fee`.' }),
    network_fee: z.string().meta({ description: 'Kept, as `service_fee`.' }),
    created_at: z.string().meta({ description: 'UTC. CSV: `YYYY-MM-DD HH:MM:SS`; JSON: ISO 8601.' }),
    finalized_at: z
      .string()
      .meta({ description: 'When it reached its final status (its final event); UTC as created_at.' }),
  })
  .meta({ id: 'SettlementReportRow' });

export const settlementReportJsonSchema = z
  .object({
    date: z.string(),
    time_zone: z.literal('UTC'),
    items: z.array(settlementReportRowSchema),
  })
  .meta({ id: 'SettlementReport' });

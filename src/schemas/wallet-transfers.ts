// Request and response schemas of wallet transfers (SPEC 1: stablecoin between wallets, no quote;
// fields not shown by the SPEC, so these are the service's own).
import { z } from 'zod';
import { chains } from '../domain/chains';
import { stablecoins } from '../domain/money';
import {
  walletTransferFailureReasons,
  walletTransferSimulations,
  walletTransferStatuses,
} from '../domain/wallet-transfers';
import { paginationQuerySchema } from './pagination';
import { always, positiveAmountOf, timestampSchema } from './common';

const stablecoinSchema = z.enum(stablecoins);

export const createWalletTransferRequestSchema = z
  .object({
    from_wallet_id: z
      .string()
      .meta({ description: 'The source: a service-managed wallet of yours (404 if not yours).' }),
    to_wallet_id: z.string().optional().meta({
      description:
        'Destination: another wallet of yours on the same chain (404 if not yours). Give this or `to_address`.',
    }),
    to_address: z
      .string()
      .max(100)
      .optional()
      .meta({
        format: 'blockchain-address',
        pattern: '^(0x[0-9a-fA-F]{40}|[1-9A-HJ-NP-Za-km-z]{32,44})$',
        description:
          'Destination: an address on the source wallet’s chain (ethereum: EIP-55 checksum case; solana: base58 of 32 ' +
          'bytes). Give this or `to_wallet_id`. The address of a service-managed wallet is credited to that wallet.',
        example: '0x52908400098527886E0F7030069857D2E4169EE7',
      }),
    currency: stablecoinSchema.meta({ description: 'The stablecoin moved; the same at both ends.' }),
    // Both stablecoins have 6 decimal places.
    amount: positiveAmountOf(6).meta({
      description: 'Decimal string, at most 6 decimal places, greater than 0; what the destination receives.',
      example: '25.50',
    }),
    simulate: z
      .enum(walletTransferSimulations)
      .optional()
      .meta({
        description:
          'Sandbox only (400 in production): make this transfer meet a failure. `network_rejected`: the network refuses ' +
          'it; `network_unavailable`: the network never answers, the retries run out and nothing was sent. Both end ' +
          '`failed` with the held amount returned to the source wallet. `send_timeout_after_broadcast`: the transfer is ' +
          'broadcast but every answer is lost; asked by its idempotency key the chain reports it sent: `completed`, sent ' +
          'once. `send_outcome_unknown`: broadcast, and the chain cannot say until an operator rechecks: the transfer stays ' +
          '`processing` with its amount held (never returned while it may have been sent), then `completed`.',
      }),
  })
  .strict()
  .superRefine((body, ctx) => {
    const given = [body.to_wallet_id, body.to_address].filter((value) => value !== undefined).length;
    if (given === 0) {
      ctx.addIssue({ code: 'custom', path: ['to_wallet_id'], message: 'give to_wallet_id or to_address' });
    } else if (given === 2) {
      ctx.addIssue({ code: 'custom', path: ['to_address'], message: 'give to_wallet_id or to_address, not both' });
    }
  }, always)
  .meta({ id: 'CreateWalletTransferRequest', oneOf: [{ required: ['to_wallet_id'] }, { required: ['to_address'] }] });

export type CreateWalletTransferRequest = z.output<typeof createWalletTransferRequestSchema>;

const endSchema = (side: 'from' | 'to') =>
  z
    .object({
      wallet_id: (side === 'from' ? z.uuid() : z.uuid().nullable()).meta({
        description:
          side === 'from'
            ? 'The source wallet.'
            : 'The destination wallet when it is one of yours; null for an outside address.',
      }),
      address: z.string().meta({ description: 'Address on `chain`.' }),
    })
    .meta({ id: side === 'from' ? 'WalletTransferSource' : 'WalletTransferDestination' });

export const walletTransferSchema = z
  .object({
    id: z.uuid(),
    customer_id: z.uuid().meta({ description: 'Owner of the source wallet.' }),
    status: z.enum(walletTransferStatuses).meta({
      description:
        '`pending` (created; amount and fee already taken from the source balance), `processing` (being sent on chain), ' +
        '`completed` (sent; `tx_hash` set), `failed` (see `failure_reason`; amount and fee returned to the source wallet).',
    }),
    from: endSchema('from'),
    to: endSchema('to'),
    chain: z.enum(chains),
    currency: stablecoinSchema,
    amount: z.string().meta({ description: 'What the destination receives, 6 decimal places.', example: '25.500000' }),
    network_fee: z.string().meta({
      description:
        'Charged to the source wallet on top of `amount`: 0 between two of your wallets, else the chain’s fee for one transfer (sandbox: ethereum 1, solana 0.01).',
      example: '0.010000',
    }),
    tx_hash: z.string().nullable().meta({ description: 'The on-chain transaction, once sent; null before.' }),
    failure_reason: z.enum(walletTransferFailureReasons).nullable().meta({
      description:
        '`network_rejected` (the network refused the transfer) or `network_unavailable` (it could not be sent); null unless failed.',
    }),
    created_at: timestampSchema,
    updated_at: timestampSchema,
  })
  .meta({ id: 'WalletTransfer' });

export type WalletTransferResource = z.input<typeof walletTransferSchema>;

export const listWalletTransfersQuerySchema = paginationQuerySchema
  .extend({
    wallet_id: z
      .string()
      .optional()
      .meta({ description: 'Only transfers from or to this wallet; a wallet that is not yours answers 404.' }),
    status: z.enum(walletTransferStatuses).optional(),
  })
  .strict();

export const sandboxFundWalletRequestSchema = z
  .object({
    currency: stablecoinSchema,
    amount: positiveAmountOf(6).meta({ description: 'Decimal string, at most 6 decimal places.', example: '100.00' }),
  })
  .strict()
  .meta({ id: 'SandboxFundWalletRequest' });

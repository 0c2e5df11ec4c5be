// Request and response schemas of wallets. The SPEC leaves wallet operations open (4, 2.10); these
// are the service's own: a wallet is service-managed, on one chain, owned by one approved customer.
import { z } from 'zod';
import { chains } from '../domain/chains';
import { stablecoins } from '../domain/money';
import { paginationQuerySchema } from './pagination';
import { text, timestampSchema } from './common';

export const createWalletRequestSchema = z
  .object({
    customer_id: z.string().meta({ description: 'An approved customer of yours (404 if not yours).' }),
    name: text(100).meta({ description: 'Your label for the wallet.', example: 'Main USDC wallet' }),
    chain: z.enum(chains).meta({ description: 'Blockchain of the wallet and its address.' }),
  })
  .strict()
  .meta({ id: 'CreateWalletRequest' });

export type CreateWalletRequest = z.output<typeof createWalletRequestSchema>;

export const walletBalanceSchema = z
  .object({
    currency: z.enum(stablecoins),
    amount: z
      .string()
      .meta({ description: 'Decimal string with the currency’s 6 decimal places.', example: '0.000000' }),
  })
  .meta({ id: 'WalletBalance' });

export const walletSchema = z
  .object({
    id: z.uuid(),
    customer_id: z.uuid(),
    name: z.string(),
    chain: z.enum(chains),
    address: z.string().meta({
      description:
        'Ethereum: 0x and 40 hex digits in EIP-55 checksum case. Solana: base58 of the 32-byte public key. Unique.',
      example: '0x52908400098527886E0F7030069857D2E4169EE7',
    }),
    balances: z.array(walletBalanceSchema).meta({
      description: 'One entry per stablecoin the service keeps (USDC, USDT), always present, zero included.',
    }),
    created_at: timestampSchema,
    updated_at: timestampSchema,
  })
  .meta({ id: 'Wallet' });

export type WalletResource = z.input<typeof walletSchema>;

export const listWalletsQuerySchema = paginationQuerySchema
  .extend({
    customer_id: z
      .string()
      .optional()
      .meta({ description: "Only this customer's wallets; a customer that is not yours answers 404." }),
  })
  .strict();

// Which payment rails carry which currency: local fiat rails, and blockchains for stablecoins.
import type { Currency } from './money';

export const fiatRails = ['pix', 'pix_account', 'spei', 'wire', 'ach', 'sepa', 'cvu'] as const;
export const blockchains = ['ethereum', 'solana'] as const;
export type FiatRail = (typeof fiatRails)[number];
export type Blockchain = (typeof blockchains)[number];
export type PaymentRail = FiatRail | Blockchain;
export const allPaymentRails: readonly PaymentRail[] = [...fiatRails, ...blockchains];

export const railsByCurrency: Record<Currency, readonly PaymentRail[]> = {
  BRL: ['pix', 'pix_account'],
  MXN: ['spei'],
  USD: ['wire', 'ach'],
  EUR: ['sepa'],
  ARS: ['cvu'],
  USDC: blockchains,
  USDT: blockchains,
};

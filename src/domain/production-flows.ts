// The flows a quote or a transaction needs from the outside world, one per provider it will use: the deposit on the
// sender's fiat rail, the exchange (every quote converts), the stablecoin's chain, the payout on the receiver's fiat
// rail, and screening. Production refuses a quote or a transaction whose flows include one without an adapter
// (src/providers/readiness.ts), instead of refusing to start.
import { blockchains, type Blockchain, type FiatRail, type PaymentRail } from './rails';

export type ProductionFlow =
  `deposit:${FiatRail}` | `payout:${FiatRail}` | `chain:${Blockchain}` | 'exchange' | 'screening';

const isChain = (rail: PaymentRail): rail is Blockchain => (blockchains as readonly string[]).includes(rail);

/** The flows of a quote's legs (pay-in: fiat -> chain; payout: chain -> fiat; fiat to fiat: fiat -> chain -> fiat). */
export function flowsOf(legs: {
  sender: PaymentRail;
  stablecoin: PaymentRail | null;
  receiver: PaymentRail;
}): ProductionFlow[] {
  const flows: ProductionFlow[] = [];
  flows.push(isChain(legs.sender) ? `chain:${legs.sender}` : `deposit:${legs.sender}`);
  if (legs.stablecoin && isChain(legs.stablecoin)) flows.push(`chain:${legs.stablecoin}`);
  flows.push('exchange');
  flows.push(isChain(legs.receiver) ? `chain:${legs.receiver}` : `payout:${legs.receiver}`);
  flows.push('screening');
  return [...new Set(flows)];
}

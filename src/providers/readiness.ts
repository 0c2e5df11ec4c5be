// Production readiness per flow (docs/production.md "What production serves"): one row per fiat rail's deposits and
// payouts, per chain, the exchange and screening, each naming the adapter that serves it or what is missing. The
// table is read at each quote and transaction creation (a flow without an adapter is refused with
// `flow_not_available`), so production starts with whatever is connected. Screening is read from the provider's
// `unconnected` flag at that moment: a screening provider that loads its lists drops the flag and its flows open.
import type { AppConfig } from '../config';
import type { ProductionFlow } from '../domain/production-flows';
import { blockchains, fiatRails, type FiatRail } from '../domain/rails';
import { chainsRefusedInProduction } from './chain-transfers';
import { iso20022DepositRails } from './iso20022/deposits';
import { iso20022PayoutRails } from './iso20022/fiat-rails';
import { isUnconnected } from './unavailable';

export interface FlowReadiness {
  flow: ProductionFlow;
  /** The adapter that serves it, or null. */
  adapter: string | null;
  /** Why it is refused (no adapter), or null. */
  missing: string | null;
}

const row = (flow: ProductionFlow, adapter: string | null, missing: string): FlowReadiness =>
  adapter ? { flow, adapter, missing: null } : { flow, adapter: null, missing };

type ReadinessConfig = Pick<AppConfig, 'appEnv' | 'iso20022' | 'pixApi' | 'liquidity' | 'evmChains' | 'networkFees'>;

function depositAdapter(config: ReadinessConfig, rail: FiatRail): string | null {
  if (config.iso20022 && iso20022DepositRails.includes(rail)) return 'ISO 20022 bank (camt.054)';
  if (config.pixApi && rail === 'pix') return 'API Pix (cob, pix webhook)';
  return null;
}

function payoutAdapter(config: ReadinessConfig, rail: FiatRail): string | null {
  if (config.iso20022 && iso20022PayoutRails[rail]) return 'ISO 20022 bank (pain.001)';
  if (config.pixApi && rail === 'pix') return 'API Pix payouts';
  return null;
}

/** Every flow of production and what serves it; the sandbox serves every flow with its simulations. */
export function productionFlowTable(config: ReadinessConfig, accountScreening: unknown): FlowReadiness[] {
  if (config.appEnv === 'sandbox') return [];
  const refusedChains = chainsRefusedInProduction(config);
  return [
    ...fiatRails.map((rail) =>
      row(`deposit:${rail}`, depositAdapter(config, rail), `no bank or rail collects ${rail} deposits`),
    ),
    ...fiatRails.map((rail) =>
      row(`payout:${rail}`, payoutAdapter(config, rail), `no bank or rail pays out on ${rail}`),
    ),
    ...blockchains.map((chain) =>
      row(
        `chain:${chain}`,
        refusedChains.includes(chain) ? null : `${chain} node`,
        chain === 'solana' ? 'solana is a simulation only' : `no ${chain} node, contracts and off-ramp address are configured`,
      ),
    ),
    row(
      'exchange',
      config.liquidity && config.networkFees ? 'liquidity provider (firm quotes), scheduled network fees' : null,
      config.liquidity ? 'no network fees are scheduled (NETWORK_FEES)' : 'no liquidity provider is configured',
    ),
    row(
      'screening',
      isUnconnected(accountScreening) ? null : 'screening provider',
      isUnconnected(accountScreening) ? accountScreening.unconnected : '',
    ),
  ];
}

/** The rows of `flows` production cannot serve now; none in the sandbox. */
export function refusedFlows(
  config: ReadinessConfig,
  accountScreening: unknown,
  flows: readonly ProductionFlow[],
): FlowReadiness[] {
  const table = productionFlowTable(config, accountScreening);
  return table.filter((entry) => entry.missing !== null && flows.includes(entry.flow));
}

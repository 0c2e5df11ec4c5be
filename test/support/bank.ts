// A test file's own bank simulator process: its ISO 20022 scenario controls, and the reader of its
// reports (workflows/bank-reports.ts) started on a harness's task queue from the simulator's newest report, so that a
// file reads only what it makes happen after that.
import { type LocalBankSimulator, startLocalBankSimulator } from '../../scripts/lib/bank-simulator';
import { bankReportsWorkflow } from '../../workflows/bank-reports';
import { workflowIds } from '../../src/temporal/workflow-ids';
import type { Harness } from './harness';
import {
  sandboxCollectionAddress,
  sandboxOffRampAddress,
  sandboxTokenAddresses,
} from '../../src/providers/evm/sandbox-chain';

/** The simulator settles in 300 ms instead of a second: the tests wait on it, a bank would take hours. */
export function startTestBank(): Promise<LocalBankSimulator> {
  return startLocalBankSimulator({ ISO20022_SETTLE_MS: '300' });
}

export function bankUrl(harness: Harness): string {
  const url = harness.config.iso20022?.bankUrl;
  if (!url) throw new Error('this harness has no ISO 20022 bank (startHarness(..., { bank: true }))');
  return url;
}

export async function bankScenario(harness: Harness, body: Record<string, unknown>): Promise<any> {
  const response = await fetch(`${bankUrl(harness)}/_scenarios`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (!response.ok) throw new Error(`scenario ${JSON.stringify(body)}: ${response.status} ${await response.text()}`);
  return response.json();
}

export async function bankTransfer(harness: Harness, endToEndId: string): Promise<Record<string, string> | null> {
  const response = await fetch(`${bankUrl(harness)}/_scenarios/transfers/${endToEndId}`);
  return response.status === 404 ? null : ((await response.json()) as Record<string, string>);
}

/** Starts the harness's reader of the bank's reports after the newest one so far; returns its handle. */
export async function startBankReportReader(harness: Harness) {
  const head = ((await (await fetch(`${bankUrl(harness)}/reports?after=0&limit=1`)).json()) as { head: number }).head;
  return harness.env.client.workflow.start(bankReportsWorkflow, {
    workflowId: workflowIds.bankReports('iso20022'),
    taskQueue: harness.config.temporal.taskQueue,
    args: [{ bank: 'iso20022', after: head, pollSeconds: 1 }],
  });
}

/**
 * Production mode's outside world for a test file: the exchange at this file's simulator and the coin on the run's
 * Anvil (`chainUrl`), with the sandbox seed's collection and off-ramp addresses.
 */
export function productionOutsideWorldEnv(bank: LocalBankSimulator, chainUrl: string): Record<string, string> {
  const tokens = sandboxTokenAddresses();
  return {
    APP_ENV: 'production',
    LIQUIDITY_PROVIDER_URL: `${bank.url}/liquidity`,
    NETWORK_FEES: JSON.stringify({ ethereum: '1.00' }),
    ETHEREUM_RPC_URL: chainUrl,
    ETHEREUM_CHAIN_ID: '31337',
    ETHEREUM_USDC_CONTRACT: tokens.USDC,
    ETHEREUM_USDT_CONTRACT: tokens.USDT,
    ETHEREUM_COLLECTION_ADDRESS: sandboxCollectionAddress(),
    ETHEREUM_OFF_RAMP_ADDRESS: sandboxOffRampAddress(),
    ETHEREUM_CONFIRMATIONS: '1',
  };
}

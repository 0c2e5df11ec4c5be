// A local EVM node (Anvil, from the @foundry-rs/anvil package's platform binary) for the sandbox chain: started on a
// free loopback port with the sandbox seed, the tokens deployed at their fixed addresses (src/providers/evm/
// sandbox-chain.ts). Blocks are mined on each transaction (tests) or every `blockTimeSeconds` (dev).
import path from 'node:path';
import { deploySandboxTokens, SANDBOX_CHAIN_MNEMONIC, type SandboxToken } from '../../src/providers/evm/sandbox-chain';
import { startOnFreePort } from './ports';
import { startChild } from './child-process';

export interface LocalAnvil {
  rpcUrl: string;
  chainId: number;
  tokens: Record<SandboxToken, `0x${string}`>;
  stop(): Promise<void>;
}

/** The platform binary npm installed beside @foundry-rs/anvil (its install script, which would download one, is denied). */
export function anvilBinary(): string {
  const arch = process.arch === 'x64' ? 'amd64' : process.arch;
  const packageJson = require.resolve(`@foundry-rs/anvil-${process.platform}-${arch}/package.json`);
  return path.join(path.dirname(packageJson), 'bin', process.platform === 'win32' ? 'anvil.exe' : 'anvil');
}

export const SANDBOX_CHAIN_ID = 31337;
const CHAIN_ID = SANDBOX_CHAIN_ID;

export interface AnvilOptions {
  /** Seconds between blocks (dev: about one a second); unset: a block per transaction (tests, chaos). */
  blockTimeSeconds?: number;
  /** Where the node keeps its state across restarts (written on exit and every few seconds), or none. */
  stateFile?: string;
}

/** The node's command line: the sandbox seed (its funded accounts are the sandbox treasury and collection). */
export function anvilArgs(port: number, options: AnvilOptions = {}): string[] {
  const args = ['--host', '127.0.0.1', '--port', String(port), '--chain-id', String(CHAIN_ID)];
  args.push('--mnemonic', SANDBOX_CHAIN_MNEMONIC, '--accounts', '4', '--silent');
  if (options.blockTimeSeconds) args.push('--block-time', String(options.blockTimeSeconds));
  // A restart (chaos, dev) loads what the node had: a restart must not look like a chain that forgot its blocks.
  if (options.stateFile) args.push('--state', options.stateFile, '--state-interval', '2');
  return args;
}

/** True once the node at `rpcUrl` answers with the sandbox chain id. */
export async function anvilAnswers(rpcUrl: string): Promise<boolean> {
  try {
    return Number(await anvilRpc(rpcUrl, 'eth_chainId')) === CHAIN_ID;
  } catch {
    return false;
  }
}

/** One JSON-RPC call to the node (Anvil's own methods too: `anvil_mine`, `anvil_reorg`); its error thrown. */
export async function anvilRpc(
  url: string,
  method: string,
  params: unknown[] = [],
  timeoutMs = 2_000,
): Promise<unknown> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
    signal: AbortSignal.timeout(timeoutMs),
  });
  const body = (await response.json()) as { result?: unknown; error?: { message: string } };
  if (body.error) throw new Error(`${method}: ${body.error.message}`);
  return body.result;
}

export async function startAnvil(options: AnvilOptions = {}): Promise<LocalAnvil> {
  return startOnFreePort(async (port) => {
    const rpcUrl = `http://127.0.0.1:${port}`;
    const { stop } = await startChild({
      name: `anvil on ${rpcUrl}`,
      command: anvilBinary(),
      args: anvilArgs(port, options),
      answers: () => anvilAnswers(rpcUrl),
      readyWithinMs: 15_000,
    });
    try {
      const tokens = await deploySandboxTokens(rpcUrl);
      return { rpcUrl, chainId: CHAIN_ID, tokens, stop };
    } catch (error) {
      await stop();
      throw error;
    }
  });
}

/** Anvil's snapshot of the whole chain state, and the revert to it (test files share one node). */
export const snapshotChain = async (rpcUrl: string) => (await anvilRpc(rpcUrl, 'evm_snapshot')) as string;
export const revertChain = async (rpcUrl: string, id: string) =>
  (await anvilRpc(rpcUrl, 'evm_revert', [id])) as boolean;

// Activities of wallet transfers (workflows/wallet-transfer.ts). Exactly once in effect: every status
// change is made under the transfer's row lock, only along domain/wallet-transfers.ts, with its event
// and its ledger posting (reference wallet-transfer:<id>:<step>) in ONE database transaction; the
// chain is asked with the idempotency key <id>:send. Running a step again finds it done.
import { ApplicationFailure } from '@temporalio/activity';
import { withDatabaseTransaction, type DatabaseTransaction } from '../src/persistence/database';
import { Money, Stablecoin } from '../src/domain/money';
import {
  canMoveWalletTransfer,
  WalletTransferFailureReason,
  walletTransferReference,
  WalletTransferSimulation,
  WalletTransferStatus,
} from '../src/domain/wallet-transfers';
import { recordEvent } from '../src/persistence/events';
import { LedgerEntryInput, walletTransferEntries, WalletTransferAmounts } from '../src/domain/ledger';
import { postLedgerEntries } from '../src/persistence/ledger';
import {
  findWalletTransfer,
  lockWalletTransfer,
  updateWalletTransferStatus,
  WalletTransferRow,
} from '../src/persistence/wallet-transfers';
import { toWalletTransfer } from '../src/presenters/wallet-transfers';
import type { ChainTransferOutcome, ChainTransferRequest } from '../src/providers/chain-transfers';
import { lookUpOperation, type OperationLookup } from '../src/providers/unavailable';
import { RESOURCE_NOT_FOUND } from '../src/temporal/failure-types';
import type { ActivityServices } from './services';

async function lockTransfer(tx: DatabaseTransaction, id: string): Promise<WalletTransferRow> {
  const row = await lockWalletTransfer(tx, id);
  if (!row) throw ApplicationFailure.nonRetryable(`wallet transfer ${id} does not exist`, RESOURCE_NOT_FOUND);
  return row;
}

function amountsOf(row: WalletTransferRow): WalletTransferAmounts {
  const currency = row.currency as Stablecoin;
  return {
    fromWalletId: row.fromWalletId,
    toWalletId: row.toWalletId,
    amount: Money.of(currency, row.amount.toString()),
    networkFee: Money.of(currency, row.networkFee.toString()),
  };
}

export function createWalletTransferActivities({ prisma, config, chainTransfers }: ActivityServices) {
  /** The send as the chain is asked for it, every time under the same idempotency key. */
  async function sendRequest(id: string): Promise<ChainTransferRequest> {
    const row = await findWalletTransfer(prisma, id);
    if (!row) throw ApplicationFailure.nonRetryable(`wallet transfer ${id} does not exist`, RESOURCE_NOT_FOUND);
    return {
      idempotencyKey: `${id}:send`,
      chain: row.chain as 'ethereum' | 'solana',
      fromAddress: row.fromWallet.address,
      fromKeyReference: row.fromWallet.keyReference,
      toAddress: row.toAddress,
      amount: amountsOf(row).amount,
      simulate: row.sandboxSimulation as WalletTransferSimulation | null,
    };
  }
  /**
   * Moves the transfer to `to` with `changes`, posting `posting` and recording `event` (when given), all in one
   * transaction; a transfer already past that move is left as it is (a re-run) and its status answered.
   */
  async function move(
    id: string,
    to: WalletTransferStatus,
    changes: { txHash?: string; failureReason?: string },
    effects: { step?: 'delivered' | 'returned'; entries?: (row: WalletTransferRow) => LedgerEntryInput[] } = {},
  ): Promise<WalletTransferStatus> {
    // Within the project's bounds on a database transaction, not Prisma's defaults.
    return withDatabaseTransaction(prisma, async (tx) => {
      const row = await lockTransfer(tx, id);
      const from = row.status;
      if (!canMoveWalletTransfer(from, to)) return from;
      const updated = await updateWalletTransferStatus(tx, id, to, changes);
      if (effects.step && effects.entries) {
        await postLedgerEntries(tx, {
          reference: walletTransferReference(id, effects.step),
          description: `wallet transfer ${id}: ${effects.step}`,
          entries: effects.entries(row),
        });
      }
      if (to === 'completed' || to === 'failed') {
        await recordEvent(tx, {
          partnerId: row.partnerId,
          type: to === 'completed' ? 'walletTransfer.completed' : 'walletTransfer.failed',
          resourceId: id,
          resourceStatus: to,
          resource: toWalletTransfer(updated),
        });
      }
      return to;
    });
  }

  return {
    /**
     * pending -> processing before the chain is asked (no event: SPEC 6 has none for it). Answers the
     * status: anything but `processing` means the transfer already ended.
     */
    async startWalletTransfer(id: string): Promise<WalletTransferStatus> {
      const status = await move(id, 'processing', {});
      return status === 'pending' ? 'processing' : status;
    },

    /** Sends on chain; asking again (a retry, a re-run after a crash) finds the first send. */
    async sendWalletTransfer(id: string): Promise<ChainTransferOutcome> {
      return chainTransfers.send(await sendRequest(id));
    },

    /**
     * The send's attempts ran out: what the chain knows of it under the same idempotency key (`round`: the
     * operator's rechecks so far). The chain being unreachable is `unknown` too. Reads only: the workflow decides.
     */
    async lookUpWalletTransferSend(id: string, round: number): Promise<OperationLookup<ChainTransferOutcome>> {
      const request = await sendRequest(id);
      return lookUpOperation(() => chainTransfers.lookUp(request, round));
    },

    /** processing -> completed: the amount reaches its destination, the fee the network-fee account. */
    async completeWalletTransfer(id: string, txHash: string): Promise<WalletTransferStatus> {
      return move(
        id,
        'completed',
        { txHash },
        { step: 'delivered', entries: (row) => walletTransferEntries.delivered(amountsOf(row)) },
      );
    },

    /** -> failed: the held amount and fee go back to the source wallet. */
    async failWalletTransfer(id: string, reason: WalletTransferFailureReason): Promise<WalletTransferStatus> {
      return move(
        id,
        'failed',
        { failureReason: reason },
        { step: 'returned', entries: (row) => walletTransferEntries.returned(amountsOf(row)) },
      );
    },
  };
}

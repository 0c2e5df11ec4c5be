// POST /v1/payout/confirm: the stablecoin of a payout awaiting it was sent; it counts as the payout's deposit.
import { WorkflowNotFoundError } from '@temporalio/client';
import { idFromReference } from '../../domain/ids';
import { findTransactionDeposit } from '../../persistence/transactions';
import { claimPayoutTxHash, closePayoutChainClaim, findPayoutChainClaim } from '../../persistence/chain-watcher';
import type { TransferVerdict } from '../../providers/evm/token-transfers';
import { ProviderUnavailableError } from '../../providers/unavailable';
import { blockchainOf, type Blockchain } from '../../domain/rails';
import { amountsOf, SandboxSimulation } from '../../domain/transactions';
import { DomainError, type DomainErrorCode } from '../../domain/errors';
import { toTransaction } from '../../presenters/transactions';
import type { TransactionRow } from '../../persistence/transactions';
import type { TransactionResource } from '../../schemas/transactions';
import type { ApiServices } from '../../app-services';
import { updateRefusal } from '../../temporal/errors';
import { workflowIds } from '../../temporal/workflow-ids';
import { callWorkflow } from '../../temporal/write-then-start';
import { receiveDepositUpdate, settlementRefusals } from '../../../workflows/settlement';
import { findTransactionOrThrow } from './find';
import { payoutDepositInput } from './deposit-bookkeeping';

// ---- payouts: the partner says the stablecoin was sent ----

/** What each verdict of the chain other than `confirmed` and `pending` (accepted, waits) answers (422, its own code). */
const refusedVerdicts: Record<Exclude<TransferVerdict['state'], 'confirmed' | 'pending'>, [DomainErrorCode, string]> = {
  not_found: ['tx_hash_not_found', 'the chain has no transaction with this hash'],
  failed: ['tx_hash_failed', 'the transaction reverted: it moved nothing'],
  wrong_token: ['tx_hash_wrong_token', 'the transaction moved none of the payout’s stablecoin'],
  wrong_recipient: ['tx_hash_wrong_recipient', 'the stablecoin did not go to the payout’s deposit address'],
  amount_too_low: ['tx_hash_amount_too_low', 'less than the payout’s amount arrived'],
};

/**
 * The transfer behind `hash`, checked on the chain's node: its deposit id (from the chain and the hash, so the
 * hash names one deposit across all payouts); `waiting` when the node knows it but it is not deep enough yet (the hash
 * is claimed for this payout and the chain watcher settles it once it is, or refuses it after its bound); or a refusal.
 */
async function checkedOnChain(
  services: ApiServices,
  row: TransactionRow,
  chain: Blockchain,
  hash: string,
): Promise<{ depositId: string } | 'waiting'> {
  const depositId = idFromReference('deposit', chain, hash);
  const used = await findTransactionDeposit(services.prisma, depositId);
  if (used && used.transactionId !== row.id) {
    throw new DomainError('tx_hash_already_used', `tx_hash already funded another payout (${used.transactionId}).`);
  }
  const claim = await findPayoutChainClaim(services.prisma, chain, hash);
  if (claim && claim.transactionId !== row.id) {
    throw new DomainError(
      'tx_hash_already_used',
      `tx_hash was already sent for another payout (${claim.transactionId}).`,
    );
  }
  if (claim?.status === 'refused' && claim.refusal?.startsWith('tx_hash_')) {
    throw new DomainError(claim.refusal as DomainErrorCode, `tx_hash was refused: ${claim.refusal}.`);
  }
  let verdict: TransferVerdict;
  try {
    verdict = await services.chainTransferVerifier.verify({ chain, hash, minimum: amountsOf(row).sender });
  } catch (error) {
    if (error instanceof ProviderUnavailableError) {
      throw DomainError.unavailable(`The ${chain} node could not be asked about tx_hash; retry shortly.`);
    }
    throw error;
  }
  if (verdict.state === 'confirmed') return { depositId };
  if (verdict.state === 'pending') {
    const expiresAt = new Date(Date.now() + services.config.payoutTxHashWaitMinutes * 60_000);
    const holder = await claimPayoutTxHash(services.prisma, { transactionId: row.id, chain, txHash: hash, expiresAt });
    if (holder.transactionId !== row.id) {
      throw new DomainError(
        'tx_hash_already_used',
        `tx_hash was already sent for another payout (${holder.transactionId}).`,
      );
    }
    if (holder.txHash !== hash) {
      throw new DomainError(
        'payout_cannot_be_confirmed',
        `Payout ${row.id} already awaits the confirmation of tx_hash ${holder.txHash}.`,
      );
    }
    return 'waiting';
  }
  const [code, why] = refusedVerdicts[verdict.state];
  throw new DomainError(code, `tx_hash: ${why}.`);
}

function cannotBeConfirmed(row: TransactionRow, status: string): DomainError {
  return new DomainError(
    'payout_cannot_be_confirmed',
    `Payout ${row.id} is ${status}; only a payout awaiting its stablecoin can be confirmed.`,
  );
}

const txHashPatterns: Record<Blockchain, RegExp> = {
  ethereum: /^0x[0-9a-fA-F]{64}$/,
  solana: /^[1-9A-HJ-NP-Za-km-z]{64,88}$/,
};

/**
 * POST /v1/payout/confirm: the stablecoin of a payout awaiting it was sent (tx_hash). It counts as the
 * payout's deposit of exactly the amount sent for (the workflow's receiveDeposit update, so a confirm
 * racing a cancel or the deadline has one outcome): the payout moves to processing. Only payouts are
 * confirmed: a pay-in, and fiat to fiat (a pay-in to partners), answer payin_cannot_be_confirmed.
 * On a chain whose node is configured (ChainTransferVerifier: ethereum) the hash is checked there first: a
 * confirmed transfer of the payout's token to its deposit address for at least the amount, never counted for two
 * payouts (the deposit's provider reference is the hash); each other verdict is refused with its own code. A chain
 * without a configured node is taken on the hash's form in the sandbox and refused (503) in production, rather than
 * pay out on the partner's word.
 */
export async function confirmPayout(
  services: ApiServices,
  partnerId: string,
  body: { transaction_id: string; tx_hash: string; simulate?: SandboxSimulation },
): Promise<TransactionResource> {
  const row = await findTransactionOrThrow(services.prisma, partnerId, body.transaction_id);
  if (row.type !== 'payout') {
    throw new DomainError(
      'payin_cannot_be_confirmed',
      `Transaction ${row.id} is a ${row.type === 'payin' ? 'pay-in' : 'fiat-to-fiat transaction (a pay-in)'}; only payouts are confirmed.`,
    );
  }
  if (row.status !== 'awaiting_deposit') throw cannotBeConfirmed(row, row.status);
  const chain = blockchainOf(row.senderPaymentRail);
  if (!txHashPatterns[chain].test(body.tx_hash)) {
    throw new DomainError(
      'tx_hash_chain_mismatch',
      `tx_hash is not a ${chain} transaction hash; the payout's stablecoin is on ${chain}.`,
    );
  }
  const checked = services.chainTransferVerifier.collectionAddress(chain) !== null;
  if (!checked && services.config.appEnv !== 'sandbox') {
    throw DomainError.unavailable(
      'No chain watcher is connected to verify the transfer yet; the payout still awaits its stablecoin.',
    );
  }
  const hash = body.tx_hash.toLowerCase();
  const checkedCredit = checked ? await checkedOnChain(services, row, chain, hash) : null;
  // Accepted, not deep enough yet: the payout keeps awaiting its stablecoin until the chain watcher settles the hash.
  if (checkedCredit === 'waiting') return toTransaction(row);
  const credit = checkedCredit;
  const input = payoutDepositInput(row, credit ? { chain, hash } : null, body.tx_hash, body.simulate ?? null);
  try {
    await callWorkflow(services, workflowIds.transaction(row.id), (handle) =>
      handle.executeUpdate(receiveDepositUpdate, { args: [input], updateId: `confirm-${row.id}` }),
    );
  } catch (error) {
    const refused =
      error instanceof WorkflowNotFoundError || updateRefusal(error)?.type === settlementRefusals.notAwaitingDeposit;
    if (!refused) throw error;
    const current = await findTransactionOrThrow(services.prisma, partnerId, row.id);
    throw cannotBeConfirmed(row, current.status === 'awaiting_deposit' ? 'past its deposit deadline' : current.status);
  }
  if (credit) await closePayoutChainClaim(services.prisma, row.id, { status: 'settled' });
  return toTransaction(await findTransactionOrThrow(services.prisma, partnerId, row.id));
}

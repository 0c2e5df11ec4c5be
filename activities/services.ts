// What activities may touch. Built once per worker process (src/worker.ts) or per test file.
import type { AppConfig } from '../src/config';
import type { DatabaseClient } from '../src/persistence/database';
import type { Logger } from '../src/logger';
import type { VerificationProvider } from '../src/providers/verification';
import type { WebhookSender } from '../src/providers/webhook-sender';
import type { DepositAccountIssuer } from '../src/providers/deposit-accounts';
import type { FiatRails } from '../src/providers/fiat-rails';
import type { ChainTransfers } from '../src/providers/chain-transfers';
import type { RateProvider } from '../src/providers/rates';
import type { ProviderStatements } from '../src/providers/provider-statements';
import type { ChainTransferVerifier } from '../src/providers/chain-verification';
import type { WatchedChain } from '../src/providers/evm/watcher';
import type { Iso20022BankClient } from '../src/providers/iso20022/client';
import type { BankReportIntake } from '../src/providers/iso20022/reports';
import type { Screening } from '../src/providers/screening';

export interface ActivityServices {
  config: AppConfig;
  prisma: DatabaseClient;
  logger: Logger;
  verificationProvider: VerificationProvider;
  webhookSender: WebhookSender;
  depositAccountIssuer: DepositAccountIssuer;
  /** Exchange, payout rails, returns and sell-backs. */
  fiatRails: FiatRails;
  /** Sends wallet transfers on chain. */
  chainTransfers: ChainTransfers;
  /** The rate of the moment (a returned payout's refund converts at it). */
  rateProvider: RateProvider;
  /** What the providers report they did (the reconciliation's statement checks). */
  providerStatements: ProviderStatements;
  /** Checks a payout's `tx_hash` on the chain's node (a hash accepted before it was deep enough). */
  chainTransferVerifier: ChainTransferVerifier;
  /** The chains the chain watcher reads. */
  watchedChains: WatchedChain[];
  /** The ISO 20022 bank whose camt.054 notifications the bank-reports workflow reads; null when none is configured. */
  bankReports?: Iso20022BankClient | null;
  /** The service's deposit and return paths for those notifications (src/services/transactions/bank-reports.ts). */
  bankIntake?: BankReportIntake;
  /** Sanctions screening (customers at verification, re-screenings). */
  accountScreening: Screening;
}

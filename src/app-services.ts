// What the HTTP layer needs from the outside world, built once per process (src/server.ts) or per
// test file, and handed to every route handler.
import type { Client } from '@temporalio/client';
import type { AppConfig } from './config';
import type { DatabaseClient } from './persistence/database';
import type { Logger } from './logger';
import type { AccountScreening } from './providers/screening';
import type { PixDirectory } from './providers/pix-directory';
import type { WebhookSender } from './providers/webhook-sender';
import type { RateProvider } from './providers/rates';
import type { DepositAccountIssuer } from './providers/deposit-accounts';
import type { DepositProvider } from './providers/transaction-deposits';
import type { ChainTransferVerifier } from './providers/chain-verification';
import type { WalletAddressProvider } from './providers/wallet-addresses';
import type { DocumentStore } from './storage/document-store';

export interface ApiServices {
  config: AppConfig;
  prisma: DatabaseClient;
  temporal: Client;
  logger: Logger;
  documentStore: DocumentStore;
  /** Outside systems asked within a request (src/providers, chosen by createProviders). */
  pixDirectory: PixDirectory;
  accountScreening: AccountScreening;
  /** Sends POST /webhooks/mock; durable deliveries go through the worker. */
  webhookSender: WebhookSender;
  rateProvider: RateProvider;
  walletAddressProvider: WalletAddressProvider;
  depositAccountIssuer: DepositAccountIssuer;
  /** Where senders pay transactions (collection accounts and deposit instructions). */
  depositProvider: DepositProvider;
  /** Checks a payout's stablecoin transfer on the chain's node (POST /v1/payout/confirm). */
  chainTransferVerifier: ChainTransferVerifier;
}

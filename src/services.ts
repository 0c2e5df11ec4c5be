// What the HTTP layer needs from the outside world, built once per process (src/server.ts) or per
// test file, and handed to every route handler.
import type { Client } from '@temporalio/client';
import type { AppConfig } from './config';
import type { PrismaClient } from './db';
import type { Logger } from './logger';
import type { DepositAccountIssuer } from './providers/deposit-accounts';
import type { WalletAddressProvider } from './providers/wallet-addresses';
import type { DocumentStore } from './storage/document-store';

export interface ApiServices {
  config: AppConfig;
  prisma: PrismaClient;
  temporal: Client;
  logger: Logger;
  documentStore: DocumentStore;
  /** Outside systems asked within a request (src/providers, chosen by createProviders). */
  walletAddressProvider: WalletAddressProvider;
  depositAccountIssuer: DepositAccountIssuer;
}

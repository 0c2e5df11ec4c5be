// What the HTTP layer needs from the outside world, built once per process (src/server.ts) or per
// test file, and handed to every route handler.
import type { Client } from '@temporalio/client';
import type { AppConfig } from './config';
import type { PrismaClient } from './db';
import type { Logger } from './logger';
import type { RateProvider } from './providers/rates';
import type { DocumentStore } from './storage/document-store';

export interface ApiServices {
  config: AppConfig;
  prisma: PrismaClient;
  temporal: Client;
  logger: Logger;
  documentStore: DocumentStore;
  rateProvider: RateProvider;
}

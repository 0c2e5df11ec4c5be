// Chooses the implementation of each outside system by environment.
import type { AppConfig } from '../config';
import { PixDirectory, SimulatedPixDirectory, UnconnectedPixDirectory } from './pix-directory';
import { AccountScreening, DenyListScreening, sandboxDeniedBeneficiaries } from './screening';
import { ManualReviewProvider, SimulatedVerificationProvider, VerificationProvider } from './verification';

export interface Providers {
  verificationProvider: VerificationProvider;
  pixDirectory: PixDirectory;
  accountScreening: AccountScreening;
}

export function createProviders(config: AppConfig): Providers {
  return {
    verificationProvider:
      config.appEnv === 'sandbox'
        ? new SimulatedVerificationProvider(config.sandboxVerificationDelaySeconds)
        : new ManualReviewProvider(),
    pixDirectory: config.appEnv === 'sandbox' ? new SimulatedPixDirectory() : new UnconnectedPixDirectory(),
    // No screening vendor is connected yet: production screens against an empty list (approves all).
    accountScreening: new DenyListScreening(config.appEnv === 'sandbox' ? sandboxDeniedBeneficiaries : []),
  };
}

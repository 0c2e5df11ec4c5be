// Chooses the implementation of each outside system by environment.
import type { AppConfig } from '../config';
import { RateProvider, SandboxRateProvider, UnconfiguredRateProvider } from './rates';
import { ManualReviewProvider, SimulatedVerificationProvider, VerificationProvider } from './verification';

export interface Providers {
  verificationProvider: VerificationProvider;
  rateProvider: RateProvider;
}

export function createProviders(config: AppConfig): Providers {
  return {
    verificationProvider:
      config.appEnv === 'sandbox'
        ? new SimulatedVerificationProvider(config.sandboxVerificationDelaySeconds)
        : new ManualReviewProvider(),
    rateProvider: config.appEnv === 'sandbox' ? new SandboxRateProvider() : new UnconfiguredRateProvider(),
  };
}

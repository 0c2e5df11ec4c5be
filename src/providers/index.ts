// Chooses the implementation of each outside system by environment.
import type { AppConfig } from '../config';
import { DepositAccountIssuer, sandboxBankProfiles, SubAccountIssuer } from './deposit-accounts';
import { DerivedWalletAddressProvider, SANDBOX_WALLET_SEED, WalletAddressProvider } from './wallet-addresses';
import { ManualReviewProvider, SimulatedVerificationProvider, VerificationProvider } from './verification';

export interface Providers {
  verificationProvider: VerificationProvider;
  walletAddressProvider: WalletAddressProvider;
  depositAccountIssuer: DepositAccountIssuer;
}

export function createProviders(config: AppConfig): Providers {
  return {
    verificationProvider:
      config.appEnv === 'sandbox'
        ? new SimulatedVerificationProvider(config.sandboxVerificationDelaySeconds)
        : new ManualReviewProvider(),
    // Production always has its own seed and banks (loadConfig refuses to start without them).
    walletAddressProvider: new DerivedWalletAddressProvider(config.walletKeySeed ?? SANDBOX_WALLET_SEED),
    depositAccountIssuer: new SubAccountIssuer(config.virtualAccountBanks ?? sandboxBankProfiles),
  };
}

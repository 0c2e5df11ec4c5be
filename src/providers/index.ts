// Chooses the implementation of each outside system by environment.
import type { AppConfig } from '../config';
import { PixDirectory, SimulatedPixDirectory, UnconnectedPixDirectory } from './pix-directory';
import { AccountScreening, DenyListScreening, sandboxDeniedBeneficiaries, UnconnectedScreening } from './screening';
import { ConfigError } from '../config';
import { isUnconnected } from './unavailable';
import { RateProvider, SandboxRateProvider, UnconfiguredRateProvider } from './rates';
import { DepositAccountIssuer, sandboxBankProfiles, SubAccountIssuer } from './deposit-accounts';
import { DerivedWalletAddressProvider, SANDBOX_WALLET_SEED, WalletAddressProvider } from './wallet-addresses';
import { ManualReviewProvider, SimulatedVerificationProvider, VerificationProvider } from './verification';
import { allowsPrivateDestinations } from '../webhooks/destinations';
import { HttpWebhookSender, WebhookSender } from './webhook-sender';
import type { DatabaseClient } from '../persistence/database';
import { FiatRails, SandboxFiatRails, UnconnectedFiatRails } from './fiat-rails';
import { DepositProvider, SandboxDepositProvider, UnconnectedDepositProvider } from './transaction-deposits';
import { ChainTransfers, SandboxChainTransfers, UnconnectedChainTransfers } from './chain-transfers';
import { ChainTransferVerifier, EvmTransferVerifier, UncheckedChains } from './chain-verification';
import { sandboxCollectionAddress, sandboxTokenAddresses } from './evm/sandbox-chain';
import { ProviderStatements, SandboxProviderStatements, UnconnectedProviderStatements } from './provider-statements';

export interface Providers {
  verificationProvider: VerificationProvider;
  pixDirectory: PixDirectory;
  accountScreening: AccountScreening;
  webhookSender: WebhookSender;
  rateProvider: RateProvider;
  walletAddressProvider: WalletAddressProvider;
  depositAccountIssuer: DepositAccountIssuer;
  depositProvider: DepositProvider;
  /** Sends wallet transfers on chain (the worker's wallet-transfer activities). */
  chainTransfers: ChainTransfers;
  /** Exchange, payout rails and returns (the worker's settlement activities). */
  fiatRails: FiatRails;
  /** What the providers report they did (the worker's reconciliation). */
  providerStatements: ProviderStatements;
  /** Checks on the chain's node that a payout's stablecoin arrived (POST /v1/payout/confirm). */
  chainTransferVerifier: ChainTransferVerifier;
}

/** The sandbox's simulated rails and chain keep what they did in the database (`prisma`), as real ones would. */
export function createProviders(config: AppConfig, prisma: DatabaseClient): Providers {
  const chainTransferVerifier = createChainTransferVerifier(config);
  return {
    verificationProvider:
      config.appEnv === 'sandbox'
        ? new SimulatedVerificationProvider(config.sandboxVerificationDelaySeconds)
        : new ManualReviewProvider(),
    pixDirectory: config.appEnv === 'sandbox' ? new SimulatedPixDirectory() : new UnconnectedPixDirectory(),
    // No screening vendor is integrated yet: production refuses to start (assertProductionReady) rather than
    // approve everyone.
    accountScreening:
      config.appEnv === 'sandbox' ? new DenyListScreening(sandboxDeniedBeneficiaries) : new UnconnectedScreening(),
    webhookSender: createWebhookSender(config),
    rateProvider: config.appEnv === 'sandbox' ? new SandboxRateProvider() : new UnconfiguredRateProvider(),
    // Production always has its own seed and banks (loadConfig refuses to start without them).
    walletAddressProvider: new DerivedWalletAddressProvider(config.walletKeySeed ?? SANDBOX_WALLET_SEED),
    depositAccountIssuer: new SubAccountIssuer(config.virtualAccountBanks ?? sandboxBankProfiles),
    // No collection accounts are connected yet: production refuses to start (assertProductionReady).
    depositProvider:
      config.appEnv === 'sandbox'
        ? new SandboxDepositProvider((chain) => chainTransferVerifier.collectionAddress(chain))
        : new UnconnectedDepositProvider(),
    // No on-chain signer is connected yet: production refuses to start (assertProductionReady).
    chainTransfers: config.appEnv === 'sandbox' ? new SandboxChainTransfers(prisma) : new UnconnectedChainTransfers(),
    // No exchange or payout rail is connected yet: production refuses to start (assertProductionReady).
    fiatRails: config.appEnv === 'sandbox' ? new SandboxFiatRails(prisma) : new UnconnectedFiatRails(),
    chainTransferVerifier,
    // No provider statement is read yet. Production starts anyway: the reconciliation reports its provider checks
    // as skipped (the run is `incomplete`, an alert), which is true, instead of refusing to settle at all.
    providerStatements:
      config.appEnv === 'sandbox' ? new SandboxProviderStatements(prisma) : new UnconnectedProviderStatements(),
  };
}

/**
 * The configured ethereum node checks payout hashes; the sandbox fills in its own chain's token contracts and
 * collection address (loadConfig makes production name them).
 */
function createChainTransferVerifier(config: AppConfig): ChainTransferVerifier {
  const ethereum = config.ethereum;
  if (!ethereum) return new UncheckedChains();
  return new EvmTransferVerifier({
    rpcUrl: ethereum.rpcUrl,
    tokens: ethereum.tokens ?? sandboxTokenAddresses(),
    collectionAddress: ethereum.collectionAddress ?? sandboxCollectionAddress(),
    confirmations: ethereum.confirmations,
  });
}

/** Real HTTP in both environments (sandbox partners test their receivers), to public addresses only unless a
 * sandbox allows private ones (WEBHOOK_ALLOW_PRIVATE_URLS). */
export function createWebhookSender(config: AppConfig): WebhookSender {
  return new HttpWebhookSender({
    timeoutMs: config.webhooks.timeoutSeconds * 1000,
    publicAddressesOnly: !allowsPrivateDestinations({ appEnv: config.appEnv, ...config.webhooks }),
  });
}

/**
 * Production fails closed: the API and the worker refuse to start while a provider they need is only a stand-in
 * (no real integration), instead of approving everyone or answering 500 later. Wallet seed and deposit banks are
 * checked by loadConfig. The sandbox always starts.
 */
export function assertProductionReady(config: AppConfig, providers: Providers): void {
  if (config.appEnv !== 'production') return;
  const needed: unknown[] = [
    providers.accountScreening,
    providers.rateProvider,
    providers.depositProvider,
    providers.chainTransfers,
    // The API too: it must not take deposits that no rail can convert, pay out or send back.
    providers.fiatRails,
  ];
  const missing = needed.filter(isUnconnected).map((provider) => provider.unconnected);
  if (missing.length > 0) throw new ConfigError(`Production cannot start: ${missing.join('; ')}.`);
}

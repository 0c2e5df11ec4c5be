// Chooses the implementation of each outside system by environment.
import type { AppConfig } from '../config';
import { PixDirectory, SimulatedPixDirectory, UnconnectedPixDirectory } from './pix-directory';
import {
  AccountScreening,
  DenyListScreening,
  sandboxDeniedBeneficiaries,
  type Screening,
  UnconnectedScreening,
} from './screening';
import { ListScreening } from './screening-lists';
import type { Logger } from '../logger';
import { RateProvider, SandboxRateProvider, ScheduledNetworkFees, UnconfiguredRateProvider } from './rates';
import { DepositAccountIssuer, sandboxBankProfiles, SubAccountIssuer } from './deposit-accounts';
import { HdWalletAddressProvider, SANDBOX_WALLET_SEED, WalletAddressProvider } from './wallet-addresses';
import { SeedSigner, type Signer } from './evm/signer';
import { EvmChainTransfers } from './evm/evm-chain-transfers';
import { evmClient } from './evm/sender';
import {
  FEE_KEY_REFERENCE,
  SANDBOX_OFF_RAMP_KEY_REFERENCE,
  TREASURY_KEY_REFERENCE,
  treasuryPoolKeyReferences,
} from './wallet-addresses';
import type { Address } from 'viem';
import { ManualReviewProvider, SimulatedVerificationProvider, VerificationProvider } from './verification';
import { allowsPrivateDestinations } from '../webhooks/destinations';
import { HttpWebhookSender, WebhookSender } from './webhook-sender';
import type { DatabaseClient } from '../persistence/database';
import { FiatRails, SandboxFiatRails, UnconnectedFiatRails } from './fiat-rails';
import { DepositProvider, SandboxDepositProvider, UnconnectedDepositProvider } from './transaction-deposits';
import { ChainTransfers, SandboxChainTransfers, UnconnectedChainTransfers } from './chain-transfers';
import { ChainTransferVerifier, EvmTransferVerifier, UncheckedChains } from './chain-verification';
import {
  sandboxChain,
  sandboxChainSeed,
  sandboxCollectionAddress,
  sandboxOffRampAddress,
  sandboxTokenAddresses,
} from './evm/sandbox-chain';
import { EvmChainWatch, type WatchedChain } from './evm/watcher';
import { ProviderStatements, SandboxProviderStatements, UnconnectedProviderStatements } from './provider-statements';
import { Iso20022BankClient } from './iso20022/client';
import { Iso20022FiatRails } from './iso20022/fiat-rails';
import { accountParties } from './iso20022/accounts';
import { Iso20022ProviderStatements } from './iso20022/statements';
import { ISO20022_PROVIDER, unmatchedEntryOf } from './iso20022/reports';
import { findBankCreditDebtor, recordUnmatchedBankEntry } from '../persistence/bank-credits';
import { collectionAccountsOf, Iso20022DepositProvider } from './iso20022/deposits';
import { ExchangeExecutionRails } from './exchange-delivery';
import { productionFlowTable, type FlowReadiness } from './readiness';
import { LiquidityClient } from './liquidity/client';
import { FirmQuoteRails, LiquidityRateProvider } from './liquidity/firm-quotes';
import { ApiPixClient } from './pix/api-pix';
import { ApiPixDepositProvider } from './pix/collections';
import { ApiPixPayoutRails } from './pix/payouts';

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
  /** Signs EVM transactions for key references (the seed signer; a KMS or HSM implements the same interface). */
  signer: Signer;
  /** The chains whose incoming transfers the chain watcher reads (workflows/chain-watcher.ts): one per configured node. */
  watchedChains: WatchedChain[];
  /** The ISO 20022 bank whose camt.054 notifications (deposits, returns) the bank-reports workflow reads, or null. */
  bankReports: Iso20022BankClient | null;
}

/**
 * The seeds keys derive from: production's WALLET_KEY_SEED for both schemes; the sandbox's public ones otherwise, its
 * HD seed being the sandbox chain's mnemonic, so that its treasury (m/44'/60'/0'/0/0) is the node's funded account.
 */
export function keySeeds(config: AppConfig): { hdSeed: Uint8Array; walletSeed: Buffer } {
  return {
    hdSeed: config.walletKeySeed ?? sandboxChainSeed(),
    walletSeed: config.walletKeySeed ?? SANDBOX_WALLET_SEED,
  };
}

/** The sandbox's simulated rails and chain keep what they did in the database (`prisma`), as real ones would. */
export function createProviders(config: AppConfig, prisma: DatabaseClient): Providers {
  const chainTransferVerifier = createChainTransferVerifier(config);
  const seeds = keySeeds(config);
  return withLiquidityAndPix(config, prisma, {
    signer: new SeedSigner(seeds),
    verificationProvider:
      config.appEnv === 'sandbox'
        ? new SimulatedVerificationProvider(config.sandboxVerificationDelaySeconds)
        : new ManualReviewProvider(),
    pixDirectory: config.appEnv === 'sandbox' ? new SimulatedPixDirectory() : new UnconnectedPixDirectory(),
    // The published lists when configured; without them production refuses the flows that need screening
    // (readiness.ts) rather than approve everyone.
    accountScreening: createScreening(config, prisma),
    webhookSender: createWebhookSender(config),
    rateProvider:
      config.appEnv === 'sandbox'
        ? new SandboxRateProvider()
        : config.networkFees
          ? new ScheduledNetworkFees(config.networkFees)
          : new UnconfiguredRateProvider(),
    // Production always has its own seed and banks (loadConfig refuses to start without them).
    walletAddressProvider: new HdWalletAddressProvider(seeds.hdSeed, seeds.walletSeed),
    depositAccountIssuer: new SubAccountIssuer(config.virtualAccountBanks ?? sandboxBankProfiles),
    // Deposits on the ISO 20022 bank's rails (sepa, wire) when one is configured; production refuses the others' flows.
    depositProvider: createDepositProvider(
      config,
      config.appEnv === 'sandbox'
        ? new SandboxDepositProvider((chain) => chainTransferVerifier.collectionAddress(chain))
        : new UnconnectedDepositProvider(),
    ),
    // Ethereum on its configured node (real ERC-20 sends); Solana, and sandbox requests asking for a simulated
    // failure, on the simulation. Production refuses the flows of a chain it has no node for (readiness.ts).
    chainTransfers: createChainTransfers(config, prisma, new SeedSigner(seeds)),
    // Payouts on the configured banks' rails, the conversion at the liquidity provider; production refuses the rest.
    fiatRails: createFiatRails(
      config,
      prisma,
      config.appEnv === 'sandbox' ? new SandboxFiatRails(prisma) : productionRails(config),
    ),
    chainTransferVerifier,
    watchedChains: createWatchedChains(config, new SeedSigner(seeds)),
    bankReports: config.iso20022 ? iso20022Client(config.iso20022.bankUrl) : null,
    // No provider statement is read yet. Production starts anyway: the reconciliation reports its provider checks
    // as skipped (the run is `incomplete`, an alert), which is true, instead of refusing to settle at all.
    providerStatements: createProviderStatements(
      config,
      prisma,
      config.appEnv === 'sandbox' ? new SandboxProviderStatements(prisma) : new UnconnectedProviderStatements(),
    ),
  });
}

/**
 * The published sanctions lists when SCREENING_LISTS names them (docs/screening.md); otherwise the sandbox's fixed
 * deny list, and in production a stand-in whose flows are refused (readiness.ts) rather than approve everyone.
 */
function createScreening(config: AppConfig, prisma: DatabaseClient): Screening {
  if (config.screening) {
    return new ListScreening(prisma, { thresholds: config.screening.thresholds, checkEveryMs: SCREENING_CHECK_MS });
  }
  return config.appEnv === 'sandbox' ? new DenyListScreening(sandboxDeniedBeneficiaries) : new UnconnectedScreening();
}

/** How soon a process screens against a version the refresh just loaded. */
const SCREENING_CHECK_MS = 10_000;

/**
 * A configured liquidity provider prices quotes and executes each leg at its firm quote (around the rails that
 * deliver and pay out); a configured API Pix makes pix deposits charges at that bank (docs/pix.md).
 */
function withLiquidityAndPix(config: AppConfig, prisma: DatabaseClient, providers: Providers): Providers {
  let result = providers;
  if (config.pixApi) {
    const client = new ApiPixClient({
      baseUrl: config.pixApi.url,
      clientId: config.pixApi.clientId,
      clientSecret: config.pixApi.clientSecret,
      ...(config.pixApi.tls ? { tls: config.pixApi.tls } : {}),
    });
    result = {
      ...result,
      depositProvider: new ApiPixDepositProvider(
        client,
        {
          key: config.pixApi.collectionKey,
          keyType: 'cnpj',
          bankName: 'API Pix',
          beneficiaryName: 'Payments Sandbox Ltda',
        },
        result.depositProvider,
      ),
      // Inside the liquidity provider's wrapper: a leg's firm quote is executed before its payout is sent.
      fiatRails: new ApiPixPayoutRails(result.fiatRails, client, config.pixApi.collectionKey, {
        simulate: config.appEnv === 'sandbox',
      }),
    };
  }
  if (config.liquidity) {
    const client = new LiquidityClient({ baseUrl: config.liquidity.url });
    const policy = config.liquidity;
    result = {
      ...result,
      // Network fees are not the liquidity provider's: they stay with the rate provider of the environment.
      rateProvider: new LiquidityRateProvider(client, policy, result.rateProvider),
      fiatRails: new FirmQuoteRails(result.fiatRails, client, policy, prisma, {
        simulate: config.appEnv === 'sandbox',
      }),
    };
  }
  return result;
}

function createChainTransfers(config: AppConfig, prisma: DatabaseClient, signer: Signer): ChainTransfers {
  const simulation = config.appEnv === 'sandbox' ? new SandboxChainTransfers(prisma) : new UnconnectedChainTransfers();
  const ethereum = config.evmChains.ethereum;
  if (!ethereum) return simulation;
  const tokens = (ethereum.tokens ?? sandboxTokenAddresses()) as Record<string, Address>;
  return new EvmChainTransfers({
    prisma,
    signer,
    chain: {
      name: 'ethereum',
      chainId: ethereum.chainId ?? sandboxChain.id,
      client: evmClient(ethereum.chainId ?? sandboxChain.id, ethereum.rpcUrls),
      tokens,
    },
    treasuryKeyReference: TREASURY_KEY_REFERENCE,
    treasuryPool: treasuryPoolKeyReferences(treasuryAddressCount(config)),
    collectionAddress: (ethereum.collectionAddress ??
      (config.appEnv === 'sandbox' ? sandboxCollectionAddress() : null)) as Address | null,
    offRampAddress: (ethereum.offRampAddress ??
      (config.appEnv === 'sandbox' ? sandboxOffRampAddress() : null)) as Address | null,
    offRampKeyReference: config.appEnv === 'sandbox' ? SANDBOX_OFF_RAMP_KEY_REFERENCE : null,
    feeAddress: ethereum.feeAddress as Address | null,
    fallback: simulation,
    sandboxFaucet: config.appEnv === 'sandbox',
  });
}

/**
 * How many hot treasury addresses ethereum's settlements send from: configured, or 4 in the sandbox and 1 in
 * production (where the exchange must deliver each settlement's coin to its address: docs/chain.md).
 */
export function treasuryAddressCount(config: AppConfig): number {
  return config.evmChains.ethereum?.treasuryAddresses ?? (config.appEnv === 'sandbox' ? 4 : 1);
}

/** Production's rails below the bank adapters: leg 1's conversion at the liquidity provider when one is configured. */
function productionRails(config: AppConfig): FiatRails {
  const unconnected = new UnconnectedFiatRails();
  if (!config.liquidity) return unconnected;
  return new ExchangeExecutionRails(new LiquidityClient({ baseUrl: config.liquidity.url }), unconnected);
}

function iso20022Client(bankUrl: string): Iso20022BankClient {
  return new Iso20022BankClient({ baseUrl: bankUrl, timeoutMs: 10_000 });
}

/** EUR (SEPA) and wire (USD) deposits at the ISO 20022 bank's accounts when one is configured; the rest `others`. */
function createDepositProvider(config: AppConfig, others: DepositProvider): DepositProvider {
  if (!config.iso20022) return others;
  return new Iso20022DepositProvider(collectionAccountsOf(config.iso20022.accounts), others);
}

/** EUR (SEPA) and USD (wire) payouts through the ISO 20022 bank when one is configured; everything else `others`. */
function createFiatRails(config: AppConfig, prisma: DatabaseClient, others: FiatRails): FiatRails {
  if (!config.iso20022) return others;
  return new Iso20022FiatRails(
    new Iso20022BankClient({ baseUrl: config.iso20022.bankUrl, timeoutMs: 10_000 }),
    others,
    {
      debtors: accountParties(config.iso20022.accounts),
      settleWaitMs: config.iso20022.settleWaitMs,
      pollIntervalMs: 500,
      simulate: config.appEnv === 'sandbox',
      payerOf: async (entryReference) => {
        const payer = await findBankCreditDebtor(prisma, ISO20022_PROVIDER, entryReference);
        if (!payer?.account || !payer.agent) return null;
        return { name: payer.name ?? 'Payer', account: payer.account, agent: payer.agent };
      },
    },
  );
}

/**
 * The bank's camt.053 joins the statement when an ISO 20022 bank is configured. In production without other
 * statements it stays unconnected (the provider checks skipped), since the exchange's lines are not read yet.
 */
function createProviderStatements(
  config: AppConfig,
  prisma: DatabaseClient,
  others: ProviderStatements,
): ProviderStatements {
  if (!config.iso20022 || config.appEnv !== 'sandbox') return others;
  return new Iso20022ProviderStatements(
    new Iso20022BankClient({ baseUrl: config.iso20022.bankUrl, timeoutMs: 10_000 }),
    others,
    ['EUR', 'USD'],
    async (entry, statement) => {
      // A credit camt.054 notified is a deposit or already kept; anything else on the statement is kept for operators.
      if (entry.direction === 'CRDT' && !entry.returnReason) {
        if (await findBankCreditDebtor(prisma, ISO20022_PROVIDER, entry.reference)) return;
      }
      await recordUnmatchedBankEntry(
        prisma,
        unmatchedEntryOf(
          entry,
          { source: 'camt.053', account: statement.account, messageId: statement.messageId },
          entry.direction === 'CRDT'
            ? 'a credit on the statement that no camt.054 notified'
            : 'a movement on the statement naming no operation of the service',
        ),
      );
    },
  );
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

/** The configured ethereum node, watched for transfers to the collection address (where payouts' coin arrives). */
function createWatchedChains(config: AppConfig, signer: Signer): WatchedChain[] {
  const ethereum = config.ethereum;
  if (!ethereum) return [];
  return [
    new EvmChainWatch({
      chain: 'ethereum',
      rpcUrl: ethereum.rpcUrl,
      tokens: ethereum.tokens ?? sandboxTokenAddresses(),
      addresses: [ethereum.collectionAddress ?? sandboxCollectionAddress()],
      confirmations: ethereum.watch.depth === 'finalized' ? 'finalized' : ethereum.confirmations,
      // The fee address holds the service's coin too (a wallet-funded payout's fees): compared like a hot address.
      sendingAddresses: async () => [
        ...(await Promise.all(
          treasuryPoolKeyReferences(treasuryAddressCount(config)).map((ref) => signer.addressOf(ref)),
        )),
        config.evmChains.ethereum?.feeAddress ?? (await signer.addressOf(FEE_KEY_REFERENCE)),
      ],
      // The off-ramp is the exchange's, whoever signs the sandbox's returns from it: not the service's coin.
      outsideAddresses: [
        config.evmChains.ethereum?.offRampAddress ?? (config.appEnv === 'sandbox' ? sandboxOffRampAddress() : null),
      ].filter((address): address is string => address !== null),
    }),
  ];
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
 * Production starts with whatever is connected and refuses, per flow, what is not (src/providers/readiness.ts: a quote
 * or transaction that needs a rail, chain, exchange or screening without an adapter answers `flow_not_available`).
 * The table is returned for the start-up log; wallet seed, deposit banks and secrets key are still checked by
 * loadConfig. Empty in the sandbox.
 */
export function productionReadiness(config: AppConfig, providers: Providers): FlowReadiness[] {
  return productionFlowTable(config, providers.accountScreening);
}

/** Production's start-up line: each flow with its adapter, and each refused one with what it misses. */
export function logProductionReadiness(config: AppConfig, providers: Providers, logger: Logger): void {
  const table = productionReadiness(config, providers);
  if (table.length === 0) return;
  logger.info(
    {
      served: table.filter((row) => row.adapter).map((row) => `${row.flow}: ${row.adapter}`),
      refused: table.filter((row) => row.missing).map((row) => `${row.flow}: ${row.missing}`),
    },
    'production readiness: flows served and refused (flow_not_available)',
  );
}

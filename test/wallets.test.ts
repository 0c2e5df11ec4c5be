// Wallets: creation for approved customers only, addresses per chain from the address provider,
// balances from the ledger, scoping and pagination; and the ledger's posting rules.
import { withDatabaseTransaction } from '../src/persistence/database';
import { base58 } from '@scure/base';
import Decimal from 'decimal.js';
import { createHmac } from 'node:crypto';
import { isChecksumAddress, isSolanaAddress, toChecksumAddress } from '../src/domain/chains';
import { LedgerError, ledgerAccounts } from '../src/domain/ledger';
import { ledgerBalances, postLedgerEntries } from '../src/persistence/ledger';
import { parseTransaction, recoverTransactionAddress } from 'viem';
import { mnemonicToAccount } from 'viem/accounts';
import {
  bip44PathOf,
  bip44PrivateKey,
  DerivedWalletAddressProvider,
  ethereumAddressOf,
  HdWalletAddressProvider,
  mnemonicToSeed,
  SANDBOX_WALLET_SEED,
  solanaAddressOf,
  TREASURY_KEY_REFERENCE,
} from '../src/providers/wallet-addresses';
import { SeedSigner } from '../src/providers/evm/signer';
import { SANDBOX_CHAIN_MNEMONIC, sandboxTreasury } from '../src/providers/evm/sandbox-chain';
import { keySeeds } from '../src/providers';
import { approvedCustomer, createWallet, WalletBody } from './support/accounts';
import { createCustomer, CustomerBody, individualCustomer } from './support/fixtures';
import { Harness, startHarness, TestPartner } from './support/harness';
import { postedByOthers, whileUnposted } from './support/shared-accounts';

let harness: Harness;
let partner: TestPartner;
let customer: CustomerBody;

beforeAll(async () => {
  harness = await startHarness({}, { realTime: true });
  partner = await harness.createPartner();
  customer = await approvedCustomer(harness, partner.api);
});
afterAll(() => harness?.teardown());

const zeroBalances = [
  { currency: 'USDC', amount: '0.000000' },
  { currency: 'USDT', amount: '0.000000' },
];

describe('addresses', () => {
  it('writes EVM addresses in EIP-55 checksum case', () => {
    // Test vectors of EIP-55.
    for (const address of [
      '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed',
      '0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359',
      '0xdbF03B407c01E7cD3CBea99509d93f8DDDC8C6FB',
      '0xD1220A0cf47c7B9Be7A2E6BA89F429762e7b9aDb',
    ]) {
      expect(toChecksumAddress(address.toLowerCase())).toBe(address);
      expect(isChecksumAddress(address)).toBe(true);
      expect(isChecksumAddress(address.toLowerCase())).toBe(false);
    }
    expect(isChecksumAddress('0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAe')).toBe(false);
  });

  it('recognises Solana addresses as base58 of 32 bytes', () => {
    expect(isSolanaAddress('11111111111111111111111111111111')).toBe(true); // the system program
    expect(isSolanaAddress('EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v')).toBe(true); // USDC mint
    expect(isSolanaAddress('EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGG')).toBe(false); // too short
    expect(isSolanaAddress('0OIl' + '1'.repeat(40))).toBe(false); // not the base58 alphabet
  });

  it('turns keys into addresses as the chains do (known vectors)', () => {
    // Private key 1 is the secp256k1 generator point; its address is well known.
    expect(ethereumAddressOf(Buffer.from('00'.repeat(31) + '01', 'hex'))).toBe(
      '0x7E5F4552091A69125d5DfCb7b8C2659029395Bdf',
    );
    // RFC 8032, Ed25519 test 1: secret key -> public key d75a9801...; Solana shows it in base58.
    const seed = Buffer.from('9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60', 'hex');
    const publicKey = Buffer.from('d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a', 'hex');
    expect(solanaAddressOf(seed)).toBe(base58.encode(publicKey));
  });

  it('derives the same address for the same wallet and seed, and another for another seed', async () => {
    const walletId = '8f14e45f-ceea-4e7a-9e4b-1c6f5d3a2b10';
    const sandbox = new DerivedWalletAddressProvider(SANDBOX_WALLET_SEED);
    const other = new DerivedWalletAddressProvider(Buffer.alloc(32, 7));
    for (const chain of ['ethereum', 'solana'] as const) {
      const first = await sandbox.createAddress({ walletId, chain });
      expect(await sandbox.createAddress({ walletId, chain })).toEqual(first);
      expect((await other.createAddress({ walletId, chain })).address).not.toBe(first.address);
      expect(first.keyReference).toBe(`derived:v1:${chain}/${walletId}`);
    }
    // The provider's key for a wallet is HMAC-SHA256(seed, "<chain>/<walletId>").
    const key = createHmac('sha256', SANDBOX_WALLET_SEED).update(`ethereum/${walletId}`).digest();
    expect((await sandbox.createAddress({ walletId, chain: 'ethereum' })).address).toBe(ethereumAddressOf(key));
    expect(() => new DerivedWalletAddressProvider(Buffer.alloc(16))).toThrow('32 bytes');
  });

  it('derives ethereum wallets by BIP-44, recoverable by a standard wallet tool from the seed and the stored path', async () => {
    // The well-known development mnemonic's first BIP-44 account (what Hardhat and Anvil fund by default).
    const devSeed = mnemonicToSeed('test test test test test test test test test test test junk');
    expect(ethereumAddressOf(Buffer.from(bip44PrivateKey(devSeed, "m/44'/60'/0'/0/0")))).toBe(
      '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266',
    );
    const walletId = '8f14e45f-ceea-4e7a-9e4b-1c6f5d3a2b10';
    const provider = new HdWalletAddressProvider(mnemonicToSeed(SANDBOX_CHAIN_MNEMONIC), SANDBOX_WALLET_SEED);
    const created = await provider.createAddress({ walletId, chain: 'ethereum' });
    expect(created.keyReference).toBe(`bip44:${bip44PathOf(walletId)}`);
    expect(created.keyReference).toMatch(/^bip44:m\/44'\/60'\/[1-9]\d*'\/0\/\d+$/);
    // viem's own HD derivation (a standard tool) finds the same address from the words and the path.
    const path = created.keyReference.slice('bip44:'.length) as `m/44'/60'/${string}`;
    expect(mnemonicToAccount(SANDBOX_CHAIN_MNEMONIC, { path }).address).toBe(created.address);
    // Solana stays on the HMAC scheme.
    expect((await provider.createAddress({ walletId, chain: 'solana' })).keyReference).toBe(
      `derived:v1:solana/${walletId}`,
    );
  });

  it('signs for both key schemes: wallets created before keep their addresses; no key leaves the signer', async () => {
    const seeds = keySeeds(harness.config);
    const signer = new SeedSigner(seeds);
    const walletId = '11111111-2222-4333-8444-555555555555';
    const legacy = await new DerivedWalletAddressProvider(seeds.walletSeed).createAddress({
      walletId,
      chain: 'ethereum',
    });
    const current = await new HdWalletAddressProvider(seeds.hdSeed, seeds.walletSeed).createAddress({
      walletId,
      chain: 'ethereum',
    });
    // The sandbox treasury is the chain node's funded account 0.
    expect(await signer.addressOf(TREASURY_KEY_REFERENCE)).toBe(sandboxTreasury().address);
    for (const wallet of [legacy, current]) {
      expect(await signer.addressOf(wallet.keyReference)).toBe(wallet.address);
      const signed = await signer.signTransaction(wallet.keyReference, {
        chainId: 31337,
        type: 'eip1559',
        nonce: 0,
        to: '0x0000000000000000000000000000000000000001',
        value: 1n,
        gas: 21000n,
        maxFeePerGas: 2n,
        maxPriorityFeePerGas: 1n,
      });
      expect(await recoverTransactionAddress({ serializedTransaction: signed as never })).toBe(wallet.address);
      expect(parseTransaction(signed).nonce).toBe(0);
    }
    await expect(signer.addressOf('derived:v1:solana/x')).rejects.toThrow('no EVM key for the reference');
  });
});

describe('POST /v1/wallets', () => {
  it.each(['ethereum', 'solana'] as const)(
    'creates a %s wallet with a well-formed address and zero balances',
    async (chain) => {
      const response = await partner.api
        .post('/v1/wallets')
        .send({ customer_id: customer.id, name: 'Treasury', chain });
      expect(response.status).toBe(201);
      const wallet = response.body as WalletBody;
      expect(Object.keys(wallet).sort()).toEqual(
        ['address', 'balances', 'chain', 'created_at', 'customer_id', 'id', 'name', 'updated_at'].sort(),
      );
      expect(wallet.id).toMatch(/^[0-9a-f-]{36}$/);
      expect(wallet.customer_id).toBe(customer.id);
      expect(wallet.name).toBe('Treasury');
      expect(wallet.chain).toBe(chain);
      if (chain === 'ethereum') expect(isChecksumAddress(wallet.address)).toBe(true);
      else expect(isSolanaAddress(wallet.address)).toBe(true);
      expect(wallet.balances).toEqual(zeroBalances);
      expect(new Date(wallet.created_at).toISOString()).toBe(wallet.created_at);
      expect(wallet.updated_at).toBe(wallet.created_at);
      // The address is the provider's for this wallet id, and only a key reference is stored.
      const expected = await harness.services.walletAddressProvider.createAddress({ walletId: wallet.id, chain });
      expect(wallet.address).toBe(expected.address);
      const row = await harness.prisma.wallet.findUniqueOrThrow({ where: { id: wallet.id } });
      expect(row.keyReference).toBe(
        chain === 'ethereum' ? `bip44:${bip44PathOf(wallet.id)}` : `derived:v1:${chain}/${wallet.id}`,
      );
      expect((await partner.api.get(`/v1/wallets/${wallet.id}`)).body).toEqual(wallet);
    },
  );

  it('gives every wallet its own address', async () => {
    const wallets = await Promise.all(
      Array.from({ length: 6 }, (_, index) =>
        createWallet(partner.api, customer.id, index % 2 ? 'solana' : 'ethereum'),
      ),
    );
    expect(new Set(wallets.map((wallet) => wallet.address)).size).toBe(6);
  });

  it('refuses a customer that is not approved with 422 customer_not_approved', async () => {
    const pending = await createCustomer(partner.api);
    const response = await partner.api
      .post('/v1/wallets')
      .send({ customer_id: pending.id, name: 'W', chain: 'solana' });
    expect(response.status).toBe(422);
    expect(response.body.error.code).toBe('customer_not_approved');
    expect(await harness.prisma.wallet.count({ where: { customerId: pending.id } })).toBe(0);
  });

  it("answers 404 for another partner's, an unknown or a malformed customer", async () => {
    const other = await harness.createPartner('Other');
    for (const customerId of [customer.id, '00000000-0000-4000-8000-000000000000', 'nope']) {
      const response = await other.api
        .post('/v1/wallets')
        .send({ customer_id: customerId, name: 'W', chain: 'ethereum' });
      expect(response.status).toBe(404);
      expect(response.body.error.code).toBe('not_found');
    }
  });

  it('reports every invalid field at once', async () => {
    const missing = await partner.api.post('/v1/wallets').send({});
    expect(missing.status).toBe(400);
    expect(missing.body.error.details).toEqual([
      { code: 'missing_param', param: 'customer_id', message: 'is required' },
      { code: 'missing_param', param: 'name', message: 'is required' },
      { code: 'missing_param', param: 'chain', message: 'is required' },
    ]);
    const invalid = await partner.api
      .post('/v1/wallets')
      .send({ customer_id: customer.id, name: '  ', chain: 'bitcoin', private_key: 'x' });
    expect(invalid.status).toBe(400);
    expect(invalid.body.error.details).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ code: 'invalid_param', param: 'name' }),
        { code: 'invalid_param', param: 'chain', message: 'must be one of: "ethereum", "solana"' },
        { code: 'invalid_param', param: 'private_key', message: 'is not a known field' },
      ]),
    );
  });
});

describe('GET /v1/wallets', () => {
  let lister: TestPartner;
  let first: CustomerBody;
  let second: CustomerBody;
  let ids: string[];

  beforeAll(async () => {
    lister = await harness.createPartner('Lister');
    first = await approvedCustomer(harness, lister.api);
    second = await approvedCustomer(harness, lister.api, individualCustomer({ first_name: 'Bia' }));
    ids = [];
    for (const [index, owner] of [first, second, first, second, first].entries()) {
      ids.push((await createWallet(lister.api, owner.id, 'ethereum', `W${index}`)).id);
    }
  });

  it('pages newest first, forward and back', async () => {
    const newestFirst = [...ids].reverse();
    const page1 = await lister.api.get('/v1/wallets?limit=2');
    expect(page1.status).toBe(200);
    expect(page1.body.items.map((w: WalletBody) => w.id)).toEqual(newestFirst.slice(0, 2));
    expect(page1.body.items[0].balances).toEqual(zeroBalances);
    const page2 = await lister.api.get(`/v1/wallets?limit=2&after=${page1.body.cursor.after}`);
    expect(page2.body.items.map((w: WalletBody) => w.id)).toEqual(newestFirst.slice(2, 4));
    const page3 = await lister.api.get(`/v1/wallets?limit=2&after=${page2.body.cursor.after}`);
    expect(page3.body.items.map((w: WalletBody) => w.id)).toEqual(newestFirst.slice(4));
    expect(page3.body.cursor).toMatchObject({ after: null, limit: 2, page_count: 1 });
    const back = await lister.api.get(`/v1/wallets?limit=2&before=${page3.body.cursor.before}`);
    expect(back.body.items.map((w: WalletBody) => w.id)).toEqual(newestFirst.slice(2, 4));
  });

  it("filters by customer_id; another partner's customer answers 404", async () => {
    const mine = await lister.api.get(`/v1/wallets?customer_id=${second.id}`);
    expect(mine.body.items.map((w: WalletBody) => w.id)).toEqual([ids[3], ids[1]]);
    const foreign = await lister.api.get(`/v1/wallets?customer_id=${customer.id}`);
    expect(foreign.status).toBe(404);
    expect(foreign.body.error.code).toBe('not_found');
    const invalid = await lister.api.get('/v1/wallets?limit=0');
    expect(invalid.status).toBe(400);
  });

  it("shows only the partner's own wallets, and 404 for another's", async () => {
    const all = await partner.api.get('/v1/wallets?limit=100');
    expect(all.body.items.some((w: WalletBody) => ids.includes(w.id))).toBe(false);
    for (const id of [ids[0], '00000000-0000-4000-8000-000000000000', 'not-a-uuid']) {
      const response = await partner.api.get(`/v1/wallets/${id}`);
      expect(response.status).toBe(404);
      expect(response.body.error.code).toBe('not_found');
    }
  });
});

describe('ledger', () => {
  let wallet: WalletBody;
  let other: WalletBody;

  beforeAll(async () => {
    wallet = await createWallet(partner.api, customer.id, 'solana', 'Ledger');
    other = await createWallet(partner.api, customer.id, 'ethereum', 'Ledger 2');
  });

  type Entries = Parameters<typeof postLedgerEntries>[1]['entries'];
  const post = async (reference: string, entries: Entries) =>
    (
      await withDatabaseTransaction(harness.prisma, (tx) =>
        postLedgerEntries(tx, { reference, description: 'test', entries }),
      )
    )[0]!;
  /** A system account's balance: the sum of its entries (it keeps no running balance). */
  const systemBalance = async (system: string, currency: 'USDC' | 'BRL' | 'MXN') =>
    (await ledgerBalances(harness.prisma, [{ system, currency }]))[0]!;
  const balances = async (id: string) => (await partner.api.get(`/v1/wallets/${id}`)).body.balances;

  it('credits a wallet from a system account and shows the balance on GET', async () => {
    // Test files share the database, and other files post to `settlement` too: compare before and after, less what
    // they posted in between.
    const settlement = { system: 'settlement', currency: 'USDC' } as const;
    const settlementBalance = () => whileUnposted(harness, [settlement], () => systemBalance('settlement', 'USDC'));
    const before = await settlementBalance();
    const result = await post('fund-1', [
      { account: { system: 'settlement', currency: 'USDC' }, amount: '-125.5' },
      { account: { walletId: wallet.id, currency: 'USDC' }, amount: '125.5' },
    ]);
    expect(result.replayed).toBe(false);
    expect(await balances(wallet.id)).toEqual([
      { currency: 'USDC', amount: '125.500000' },
      { currency: 'USDT', amount: '0.000000' },
    ]);
    const after = await settlementBalance();
    const others = postedByOthers(before, after, /^fund-1$/)(settlement);
    expect(after.value.minus(before.value).minus(others).toFixed()).toBe('-125.5');
    const entries = await harness.prisma.ledgerEntry.findMany({ where: { transactionId: result.transactionId } });
    expect(entries.map((entry) => entry.amount.toString()).sort()).toEqual(['-125.5', '125.5']);
  });

  it('posts a reference once: a replay changes nothing', async () => {
    const entries = [
      { account: { walletId: wallet.id, currency: 'USDC' as const }, amount: '-0.5' },
      { account: { walletId: other.id, currency: 'USDC' as const }, amount: '0.5' },
    ];
    const first = await post('move-1', entries);
    const again = await post('move-1', entries);
    expect(again).toEqual({ transactionId: first.transactionId, replayed: true });
    expect((await balances(wallet.id))[0].amount).toBe('125.000000');
    expect((await balances(other.id))[0].amount).toBe('0.500000');
  });

  it('refuses unbalanced postings, bad amounts and unknown accounts, writing nothing', async () => {
    const cases: Array<[Entries, string]> = [
      [
        [
          { account: { system: 'settlement', currency: 'USDT' }, amount: '-1' },
          { account: { walletId: wallet.id, currency: 'USDT' }, amount: '0.99' },
        ],
        'unbalanced',
      ],
      [
        // Balanced in total but not per currency.
        [
          { account: { system: 'settlement', currency: 'USDT' }, amount: '-1' },
          { account: { walletId: wallet.id, currency: 'USDC' }, amount: '1' },
        ],
        'unbalanced',
      ],
      [
        [
          { account: { system: 'settlement', currency: 'USDC' }, amount: '-0.0000001' },
          { account: { walletId: wallet.id, currency: 'USDC' }, amount: '0.0000001' },
        ],
        'invalid_posting',
      ],
      [
        [
          // JavaScript numbers: refused by the type, and at run time (the casts stand for an untyped caller).
          { account: { system: 'settlement', currency: 'USDC' }, amount: 1 as unknown as string },
          { account: { walletId: wallet.id, currency: 'USDC' }, amount: -1 as unknown as string },
        ],
        'invalid_posting',
      ],
      [[{ account: { walletId: wallet.id, currency: 'USDC' }, amount: '0' }], 'invalid_posting'],
      [
        [
          { account: { system: 'settlement', currency: 'USDC' }, amount: '-1' },
          { account: { walletId: '00000000-0000-4000-8000-000000000000', currency: 'USDC' }, amount: '1' },
        ],
        'unknown_account',
      ],
    ];
    for (const [index, [entries, code]] of cases.entries()) {
      await expect(post(`bad-${index}`, entries)).rejects.toMatchObject({ name: 'LedgerError', code });
    }
    expect(await harness.prisma.ledgerTransaction.count({ where: { reference: { startsWith: 'bad-' } } })).toBe(0);
    expect((await balances(wallet.id))[0].amount).toBe('125.000000');
  });

  it('refuses to overdraw a wallet, and the database refuses a negative balance too', async () => {
    await expect(
      post('overdraw', [
        { account: { walletId: wallet.id, currency: 'USDC' }, amount: '-125.000001' },
        { account: { system: 'settlement', currency: 'USDC' }, amount: '125.000001' },
      ]),
    ).rejects.toBeInstanceOf(LedgerError);
    await expect(
      harness.prisma.ledgerAccount.updateMany({
        where: { walletId: wallet.id, currency: 'USDC' },
        data: { balance: '-1' },
      }),
    ).rejects.toThrow();
    expect((await balances(wallet.id))[0].amount).toBe('125.000000');
  });

  it('lets only one of two concurrent debits of the whole balance through', async () => {
    const debit = (reference: string) =>
      post(reference, [
        { account: { walletId: wallet.id, currency: 'USDC' }, amount: '-100' },
        { account: { walletId: other.id, currency: 'USDC' }, amount: '100' },
      ]);
    const results = await Promise.allSettled([debit('race-a'), debit('race-b')]);
    expect(results.filter((result) => result.status === 'fulfilled')).toHaveLength(1);
    const refused = results.find((result) => result.status === 'rejected') as PromiseRejectedResult;
    expect(refused.reason).toMatchObject({ code: 'insufficient_funds' });
    expect((await balances(wallet.id))[0].amount).toBe('25.000000');
    expect((await balances(other.id))[0].amount).toBe('100.500000');
    // The balance is the sum of the entries.
    const account = await harness.prisma.ledgerAccount.findUniqueOrThrow({
      where: { walletId_currency: { walletId: wallet.id, currency: 'USDC' } },
      include: { entries: true },
    });
    const sum = account.entries.reduce((total, entry) => total.plus(entry.amount.toString()), new Decimal(0));
    expect(sum.toString()).toBe(account.balance?.toString());
  });

  it('takes a concurrent duplicate of a posting as a replay, never a unique-violation error', async () => {
    const code = `replay-${Date.now()}`;
    const entries = [
      { account: { system: code, currency: 'BRL' as const }, amount: '-10.50' },
      { account: { system: `${code}-clearing`, currency: 'BRL' as const }, amount: '10.5' },
    ];
    const results = await Promise.all(Array.from({ length: 6 }, () => post(`${code}-posting`, entries)));
    expect(results.filter((result) => !result.replayed)).toHaveLength(1);
    expect(new Set(results.map((result) => result.transactionId)).size).toBe(1);
    const account = await harness.prisma.ledgerAccount.findUniqueOrThrow({
      where: { systemCode_currency: { systemCode: `${code}-clearing`, currency: 'BRL' } },
      include: { entries: true },
    });
    expect(account.entries).toHaveLength(1);
    expect((await systemBalance(`${code}-clearing`, 'BRL')).toString()).toBe('10.5');
  });

  it('refuses a replay with other entries, writing nothing', async () => {
    const code = `mismatch-${Date.now()}`;
    const entries = (amount: string) => [
      { account: { system: code, currency: 'MXN' as const }, amount: `-${amount}` },
      { account: { system: `${code}-clearing`, currency: 'MXN' as const }, amount },
    ];
    await post(`${code}-posting`, entries('100'));
    await expect(post(`${code}-posting`, entries('100.01'))).rejects.toMatchObject({ code: 'replay_mismatch' });
    // The same entries in another order, with other trailing zeros, are the same posting.
    const again = await post(`${code}-posting`, [...entries('100.00')].reverse());
    expect(again.replayed).toBe(true);
    expect((await systemBalance(`${code}-clearing`, 'MXN')).toString()).toBe('100');
  });

  it('keeps fiat in system accounts at two decimals, never in wallets, and in-transit accounts above zero', async () => {
    await expect(
      post(`fiat-wallet-${Date.now()}`, [
        { account: { system: 'settlement', currency: 'USD' }, amount: '-1' },
        { account: { walletId: wallet.id, currency: 'USD' as never }, amount: '1' },
      ]),
    ).rejects.toMatchObject({ code: 'invalid_posting' });
    await expect(
      post(`fiat-decimals-${Date.now()}`, [
        { account: { system: 'settlement', currency: 'USD' }, amount: '-1.001' },
        { account: { system: 'fiat_clearing', currency: 'USD' }, amount: '1.001' },
      ]),
    ).rejects.toMatchObject({ code: 'invalid_posting' });
    const transit = ledgerAccounts.inTransit(wallet.id, 'USDC');
    await expect(
      post(`transit-${Date.now()}`, [
        { account: transit, amount: '-1' },
        { account: { system: 'settlement', currency: 'USDC' }, amount: '1' },
      ]),
    ).rejects.toMatchObject({ code: 'insufficient_funds' });
    // The in-transit stablecoin is not part of the wallet's spendable balance.
    await post(`transit-in-${Date.now()}`, [
      { account: { system: 'settlement', currency: 'USDC' }, amount: '-2' },
      { account: transit, amount: '2' },
    ]);
    expect((await balances(wallet.id))[0].amount).toBe('25.000000');
  });
});

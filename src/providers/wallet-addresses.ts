// Key and address generation for service-managed wallets. The database only ever holds the public
// address and a key reference; keys are derived again from the seed by whoever needs to sign (the signer,
// src/providers/evm/signer.ts).
//
// Key references carry their scheme: `bip44:m/44'/60'/a'/0/i` (BIP-32/BIP-44 secp256k1 from the HD seed: any
// wallet tool recovers the key from the seed and the path) for ethereum wallets created since issue 36;
// `derived:v1:<chain>/<walletId>` (HMAC of the seed) for the ones before, which keep their addresses, and for Solana
// (a simulation: no standard secp256k1 path applies to its Ed25519 keys).
import { createECDH, createHash, createHmac, createPrivateKey, createPublicKey, pbkdf2Sync } from 'node:crypto';
import { keccak_256 } from '@noble/hashes/sha3';
import { base58 } from '@scure/base';
import { HDKey } from 'viem/accounts';
import { Chain, toChecksumAddress } from '../domain/chains';

export interface NewWalletAddress {
  address: string;
  /** Enough for the key holder to find the key again; never key material. */
  keyReference: string;
}

export interface WalletAddressProvider {
  createAddress(request: { walletId: string; chain: Chain }): Promise<NewWalletAddress>;
}

/**
 * The seed of the sandbox. It is public (it is in this file): anybody can derive sandbox keys, so
 * sandbox addresses must never receive real funds. Production requires WALLET_KEY_SEED.
 */
export const SANDBOX_WALLET_SEED = createHash('sha256').update('payments-api sandbox wallet seed v1').digest();

// DER prefix of a PKCS#8 Ed25519 private key; the 32-byte seed follows (RFC 8410).
const ED25519_PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');

/** The BIP-39 seed of a mnemonic (PBKDF2-HMAC-SHA512, 2048 rounds, salt "mnemonic" + passphrase). */
export function mnemonicToSeed(mnemonic: string, passphrase = ''): Buffer {
  return pbkdf2Sync(mnemonic.normalize('NFKD'), `mnemonic${passphrase}`.normalize('NFKD'), 2048, 64, 'sha512');
}

/**
 * The BIP-44 path of a wallet: m/44'/60'/a'/0/i, account a (1..2^31-1) and index i (0..2^31-1) from sha256 of its
 * id. Account 0 is the service's own addresses (treasury 0, collection 1). 62 bits: a collision between two wallets
 * is as likely as one of 2^31 ids, and the path is stored, so a tool needs no more than the seed and the row.
 */
export function bip44PathOf(walletId: string): string {
  const digest = createHash('sha256').update(`wallet:${walletId}`).digest();
  const account = (digest.readUInt32BE(0) % 0x7fffffff) + 1;
  const index = digest.readUInt32BE(4) & 0x7fffffff;
  return `m/44'/60'/${account}'/0/${index}`;
}

/** The service's own EVM addresses on the HD seed: the treasury pays gas and holds the hidden legs' coin. */
export const TREASURY_KEY_REFERENCE = "bip44:m/44'/60'/0'/0/0";

/** The collection address's key (account 0, index 1): its coin is swept to the treasury (docs/chain.md). */
export const COLLECTION_KEY_REFERENCE = "bip44:m/44'/60'/0'/0/1";

/**
 * The fee address's key (account 0, index 4): where a wallet-funded payout's fees go on chain, unless a fee address is
 * configured (docs/chain.md). Index 2 and 3 are the sandbox's off-ramp and a test's collection.
 */
export const FEE_KEY_REFERENCE = "bip44:m/44'/60'/0'/0/4";

/** Sandbox only: the simulated off-ramp's key (account 0, index 2), with which it sends a rejected payout's coin back. */
export const SANDBOX_OFF_RAMP_KEY_REFERENCE = "bip44:m/44'/60'/0'/0/2";

/**
 * The hot treasury addresses, `count` of them: the treasury itself first (it owns the sandbox tokens and pays every
 * other address's gas), then m/44'/60'/0'/0/10, /11, ... (indices below 10 are the service's other addresses).
 */
export function treasuryPoolKeyReferences(count: number): string[] {
  return Array.from({ length: Math.max(1, count) }, (_, i) =>
    i === 0 ? TREASURY_KEY_REFERENCE : `bip44:m/44'/60'/0'/0/${9 + i}`,
  );
}

/** The private key of a `bip44:` path on an HD seed; throws for any other path form. */
export function bip44PrivateKey(hdSeed: Uint8Array, path: string): Uint8Array {
  if (!/^m(\/\d+'?)+$/.test(path)) throw new Error(`not a BIP-32 path: ${path}`);
  const key = HDKey.fromMasterSeed(hdSeed).derive(path).privateKey;
  if (!key) throw new Error(`no private key at ${path}`);
  return key;
}

/**
 * HD keys for ethereum wallets (BIP-44 on `hdSeed`, key reference `bip44:<path>`); Solana keeps the HMAC scheme
 * of DerivedWalletAddressProvider on `seed`.
 */
export class HdWalletAddressProvider implements WalletAddressProvider {
  private readonly legacy: DerivedWalletAddressProvider;

  constructor(
    private readonly hdSeed: Uint8Array,
    seed: Buffer,
  ) {
    if (hdSeed.length < 16 || hdSeed.length > 64) throw new Error('the HD seed needs 16 to 64 bytes (BIP-32)');
    this.legacy = new DerivedWalletAddressProvider(seed);
  }

  async createAddress(request: { walletId: string; chain: Chain }): Promise<NewWalletAddress> {
    if (request.chain !== 'ethereum') return this.legacy.createAddress(request);
    const path = bip44PathOf(request.walletId);
    const address = ethereumAddressOf(Buffer.from(bip44PrivateKey(this.hdSeed, path)));
    return { address, keyReference: `bip44:${path}` };
  }
}

/**
 * Deterministic keys: HMAC-SHA256(seed, "<chain>/<walletId>") is the wallet's private key (secp256k1
 * for Ethereum, the Ed25519 seed for Solana), so the same wallet id always gives the same address
 * and the key never needs storing. A stand-in for a custody service or HSM behind the same interface.
 */
export class DerivedWalletAddressProvider implements WalletAddressProvider {
  constructor(private readonly seed: Buffer) {
    if (seed.length < 32) throw new Error('the wallet key seed needs at least 32 bytes');
  }

  async createAddress({ walletId, chain }: { walletId: string; chain: Chain }): Promise<NewWalletAddress> {
    const path = `${chain}/${walletId}`;
    const address = chain === 'ethereum' ? this.ethereumAddress(path) : this.solanaAddress(path);
    return { address, keyReference: `derived:v1:${path}` };
  }

  private ethereumAddress(path: string): string {
    return ethereumAddressOf(derivedEthereumKey(this.seed, path));
  }

  private solanaAddress(path: string): string {
    return solanaAddressOf(createHmac('sha256', this.seed).update(path).digest());
  }
}

/**
 * The secp256k1 key of a `derived:v1:<path>` reference: HMAC-SHA256(seed, path). A value at or above the curve
 * order (odds ~2^-128) is derived again with a counter.
 */
export function derivedEthereumKey(seed: Buffer, path: string): Buffer {
  for (let counter = 0; ; counter += 1) {
    const privateKey = createHmac('sha256', seed)
      .update(counter === 0 ? path : `${path}#${counter}`)
      .digest();
    try {
      ethereumAddressOf(privateKey);
      return privateKey;
    } catch (error) {
      if (counter > 3) throw error;
    }
  }
}

/** The Ethereum address of a secp256k1 private key: last 20 bytes of keccak256(X || Y), EIP-55 case. */
export function ethereumAddressOf(privateKey: Buffer): string {
  const ecdh = createECDH('secp256k1');
  ecdh.setPrivateKey(privateKey);
  const publicKey = ecdh.getPublicKey(); // 0x04 || X || Y
  return toChecksumAddress(Buffer.from(keccak_256(publicKey.subarray(1)).subarray(12)).toString('hex'));
}

/** The Solana address of an Ed25519 seed: base58 of its 32-byte public key. */
export function solanaAddressOf(seed: Buffer): string {
  const privateKey = createPrivateKey({
    key: Buffer.concat([ED25519_PKCS8_PREFIX, seed]),
    format: 'der',
    type: 'pkcs8',
  });
  const spki = createPublicKey(privateKey).export({ format: 'der', type: 'spki' });
  return base58.encode(spki.subarray(spki.length - 32));
}

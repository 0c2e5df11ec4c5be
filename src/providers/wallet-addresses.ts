// Key and address generation for service-managed wallets. The database only ever holds the public
// address and a key reference; keys are derived again from the seed by whoever needs to sign.
import { createECDH, createHash, createHmac, createPrivateKey, createPublicKey } from 'node:crypto';
import { keccak_256 } from '@noble/hashes/sha3';
import { base58 } from '@scure/base';
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
    // A secp256k1 key must be below the curve order; a derived value above it (odds ~2^-128) is re-derived.
    for (let counter = 0; ; counter += 1) {
      const privateKey = createHmac('sha256', this.seed)
        .update(counter === 0 ? path : `${path}#${counter}`)
        .digest();
      try {
        return ethereumAddressOf(privateKey);
      } catch (error) {
        if (counter > 3) throw error;
      }
    }
  }

  private solanaAddress(path: string): string {
    return solanaAddressOf(createHmac('sha256', this.seed).update(path).digest());
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

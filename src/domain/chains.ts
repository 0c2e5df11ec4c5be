// Blockchains that hold the service's wallets and the address formats they use. No I/O.
import { keccak_256 } from '@noble/hashes/sha3';
import { base58 } from '@scure/base';
import { Blockchain, blockchains } from './rails';

/** The blockchains of the rails table (src/domain/rails.ts): wallets live on the chains quotes price. */
export const chains = blockchains;
export type Chain = Blockchain;

/** EIP-55: a hex letter is upper case when the matching nibble of keccak256(lower-case hex) is 8 or more. */
export function toChecksumAddress(address: string): string {
  const hex = address.toLowerCase().replace(/^0x/, '');
  if (!/^[0-9a-f]{40}$/.test(hex)) throw new Error('an EVM address is 20 bytes (40 hex digits)');
  const hash = Buffer.from(keccak_256(new TextEncoder().encode(hex))).toString('hex');
  let checksummed = '0x';
  for (let index = 0; index < hex.length; index += 1) {
    const char = hex[index] as string;
    checksummed += parseInt(hash[index] as string, 16) >= 8 ? char.toUpperCase() : char;
  }
  return checksummed;
}

/** 0x + 40 hex digits in exactly the EIP-55 checksum case. */
export function isChecksumAddress(address: string): boolean {
  return /^0x[0-9a-fA-F]{40}$/.test(address) && toChecksumAddress(address) === address;
}

/** Base58 (Bitcoin alphabet) of exactly 32 bytes, the form of a Solana public key. */
export function isSolanaAddress(address: string): boolean {
  try {
    return base58.decode(address).length === 32;
  } catch {
    return false;
  }
}

export function isWellFormedAddress(chain: Chain, address: string): boolean {
  return chain === 'ethereum' ? isChecksumAddress(address) : isSolanaAddress(address);
}

/** A transfer the chain watcher read: `seen` until it is deep enough, then `credited` (workflows/chain-watcher.ts). */
export type ChainDepositStatus = 'seen' | 'credited';

/** A payout's `tx_hash` waiting to be deep enough: `pending`, then `settled` or `refused`. */
export type PayoutChainClaimStatus = 'pending' | 'settled' | 'refused';

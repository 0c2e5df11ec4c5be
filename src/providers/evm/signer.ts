// Signs EVM transactions for a key reference (the wallet row's, or the treasury's), never handing out the key. The
// configured implementation derives keys from the seed in configuration; a KMS or HSM implements the same interface
// (it holds the keys, the service keeps only references). Keys live in memory for one signature and are never
// logged, returned or stored.
import { type Address, type Hex, type TransactionSerializable } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { bip44PrivateKey, derivedEthereumKey } from '../wallet-addresses';

export interface Signer {
  /** The address a key reference signs for. */
  addressOf(keyReference: string): Promise<Address>;
  /** The signed, serialized transaction (ready for eth_sendRawTransaction). */
  signTransaction(keyReference: string, transaction: TransactionSerializable): Promise<Hex>;
}

/**
 * Keys from seeds in configuration: `bip44:<path>` on the HD seed (BIP-32), `derived:v1:ethereum/<walletId>` on the
 * wallet seed (the HMAC scheme of the wallets created before issue 36).
 */
export class SeedSigner implements Signer {
  constructor(private readonly seeds: { hdSeed: Uint8Array; walletSeed: Buffer }) {}

  private account(keyReference: string) {
    let privateKey: Uint8Array;
    if (keyReference.startsWith('bip44:')) {
      privateKey = bip44PrivateKey(this.seeds.hdSeed, keyReference.slice('bip44:'.length));
    } else if (keyReference.startsWith('derived:v1:ethereum/')) {
      privateKey = derivedEthereumKey(this.seeds.walletSeed, keyReference.slice('derived:v1:'.length));
    } else {
      // The reference only, which is no secret: never the key.
      throw new Error(`the signer has no EVM key for the reference ${keyReference}`);
    }
    return privateKeyToAccount(`0x${Buffer.from(privateKey).toString('hex')}`);
  }

  /** Addresses are public: kept, so a send does not derive its key twice (derivation is most of a send's CPU). */
  private readonly addresses = new Map<string, Address>();

  async addressOf(keyReference: string): Promise<Address> {
    let address = this.addresses.get(keyReference);
    if (!address) {
      address = this.account(keyReference).address;
      if (this.addresses.size > 10_000) this.addresses.clear();
      this.addresses.set(keyReference, address);
    }
    return address;
  }

  async signTransaction(keyReference: string, transaction: TransactionSerializable): Promise<Hex> {
    return this.account(keyReference).signTransaction(transaction);
  }
}

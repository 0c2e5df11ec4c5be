// Secrets at rest. Values the service must read back (webhook signing secrets, stored idempotent responses that
// carry a secret) are encrypted with AES-256-GCM under SECRETS_ENCRYPTION_KEY; values it only compares (API keys,
// verification-link tokens) are hashed. Each sealed value names the key that sealed it, so a new key can be
// introduced while SECRETS_ENCRYPTION_PREVIOUS_KEYS still opens what older keys sealed, and it is bound to its
// place (`context`, e.g. the row it belongs to), so a ciphertext copied to another row does not open there.
// Keys for other purposes (verification-link tokens) are derived from the same key with HKDF.
import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes } from 'node:crypto';

/** SECRETS_ENCRYPTION_KEY, and the earlier keys that still open what they sealed (src/config.ts). */
export interface SecretKeys {
  encryptionKey: Buffer;
  previousEncryptionKeys: Buffer[];
}

const FORMAT = 'v1';

/** A 32-byte key for one purpose, derived from the configured key (HKDF-SHA256). */
export function deriveKey(master: Buffer, purpose: string): Buffer {
  return Buffer.from(hkdfSync('sha256', master, Buffer.alloc(0), `payments-api/${purpose}`, 32));
}

/** Short public name of a key, stored with what it sealed (never the key itself). */
function keyIdOf(master: Buffer): string {
  return createHash('sha256').update(deriveKey(master, 'key-id')).digest('hex').slice(0, 8);
}

export class SecretBox {
  private readonly keys = new Map<string, Buffer>();
  private readonly currentId: string;

  constructor(secrets: SecretKeys) {
    this.currentId = keyIdOf(secrets.encryptionKey);
    for (const master of [secrets.encryptionKey, ...secrets.previousEncryptionKeys]) {
      if (!this.keys.has(keyIdOf(master))) this.keys.set(keyIdOf(master), deriveKey(master, 'secret-box/v1'));
    }
  }

  /** `v1.<key id>.<iv>.<ciphertext>.<tag>` (base64url parts). */
  seal(plaintext: string, context: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.keys.get(this.currentId) as Buffer, iv);
    cipher.setAAD(Buffer.from(context, 'utf8'));
    const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return [FORMAT, this.currentId, iv, ciphertext, cipher.getAuthTag()]
      .map((part) => (typeof part === 'string' ? part : part.toString('base64url')))
      .join('.');
  }

  /** The plaintext; throws when the value was sealed for another context, altered, or with an unknown key. */
  open(sealed: string, context: string): string {
    const [format, keyId, iv, ciphertext, tag] = sealed.split('.');
    const key = keyId === undefined ? undefined : this.keys.get(keyId);
    if (format !== FORMAT || !key || iv === undefined || ciphertext === undefined || tag === undefined) {
      throw new Error(`cannot open a sealed secret (format ${String(format)}, key ${String(keyId)})`);
    }
    const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
    decipher.setAAD(Buffer.from(context, 'utf8'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()]).toString('utf8');
  }

  /** True when the value was sealed with the current key (false: re-seal it after a key change). */
  isCurrent(sealed: string): boolean {
    return sealed.split('.')[1] === this.currentId;
  }
}

const boxes = new WeakMap<SecretKeys, SecretBox>();

/** The box of a configuration, built once (key derivation is not free). */
export function secretBoxOf(config: { secrets: SecretKeys }): SecretBox {
  let box = boxes.get(config.secrets);
  if (!box) {
    box = new SecretBox(config.secrets);
    boxes.set(config.secrets, box);
  }
  return box;
}

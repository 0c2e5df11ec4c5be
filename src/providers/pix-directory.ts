// The pix directory (DICT) tells who owns a pix key and at which institution. Production needs a
// DICT participant's integration; until one is connected, lookups there fail as unavailable (503)
// instead of inventing an owner.
import { createHash } from 'node:crypto';
import type { PixKey } from '../domain/brazil';

export type PixLookup = { found: true; bankName: string; beneficiaryName: string } | { found: false };

export interface PixDirectory {
  /** Throws PixDirectoryUnavailableError when the directory cannot answer now. */
  lookup(key: PixKey): Promise<PixLookup>;
}

export class PixDirectoryUnavailableError extends Error {
  override name = 'PixDirectoryUnavailableError';
}

/** Keys the sandbox directory does not know (any key of an `@unknown.example` email does not exist either). */
export const sandboxUnknownPixKeys = [
  '00000000191', // CPF
  '00000000000191', // CNPJ
  '+5511900000000', // phone
  '00000000-0000-4000-8000-000000000000', // random key
] as const;
export const SANDBOX_UNKNOWN_EMAIL_DOMAIN = 'unknown.example';

/** Keys with a fixed owner in the sandbox, e.g. to see screening reject an account. */
export const sandboxFixedPixOwners: Record<string, { bankName: string; beneficiaryName: string }> = {
  'sanctioned@pix.example': { bankName: 'Banco Simulado S.A.', beneficiaryName: 'Sanctioned Person' },
};

const sandboxBanks = [
  'Banco do Brasil S.A.',
  'Itaú Unibanco S.A.',
  'Banco Bradesco S.A.',
  'Caixa Econômica Federal',
  'Banco Santander (Brasil) S.A.',
  'Nu Pagamentos S.A.',
  'Banco Inter S.A.',
] as const;
const sandboxFirstNames = ['Ana', 'Bruno', 'Carla', 'Diego', 'Elisa', 'Fábio', 'Gabriela', 'Heitor'] as const;
const sandboxLastNames = ['Silva', 'Santos', 'Oliveira', 'Souza', 'Pereira', 'Costa', 'Almeida', 'Ferreira'] as const;
const sandboxCompanySuffixes = ['Comércio Ltda', 'Serviços Ltda', 'Tecnologia S.A.', 'Indústria Ltda'] as const;

function pick<T>(items: readonly T[], seed: Buffer, position: number): T {
  return items[seed[position]! % items.length]!;
}

/**
 * Sandbox: every well-formed key exists except the ones in `sandboxUnknownPixKeys` and emails at
 * `unknown.example`. The owner is derived from the key (same key, same owner): a person's name,
 * or a company's for CNPJ keys, and one of a few Brazilian banks.
 */
export class SimulatedPixDirectory implements PixDirectory {
  async lookup(key: PixKey): Promise<PixLookup> {
    const unknown =
      (sandboxUnknownPixKeys as readonly string[]).includes(key.value) ||
      (key.type === 'email' && key.value.endsWith(`@${SANDBOX_UNKNOWN_EMAIL_DOMAIN}`));
    if (unknown) return { found: false };
    const fixed = sandboxFixedPixOwners[key.value];
    if (fixed) return { found: true, ...fixed };
    const seed = createHash('sha256').update(`${key.type}:${key.value}`).digest();
    const surname = pick(sandboxLastNames, seed, 1);
    const beneficiaryName =
      key.type === 'cnpj'
        ? `${surname} ${pick(sandboxCompanySuffixes, seed, 2)}`
        : `${pick(sandboxFirstNames, seed, 2)} ${surname}`;
    return { found: true, bankName: pick(sandboxBanks, seed, 0), beneficiaryName };
  }
}

/** Production until a DICT integration is connected: every lookup is unavailable. */
export class UnconnectedPixDirectory implements PixDirectory {
  async lookup(): Promise<PixLookup> {
    throw new PixDirectoryUnavailableError('no pix directory (DICT) integration is configured');
  }
}

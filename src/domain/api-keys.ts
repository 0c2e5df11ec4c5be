// API keys: random secrets shown once; only their SHA-256 hash is stored (src/http/auth.ts looks them up).
import { createHash, randomBytes } from 'node:crypto';

/** The environment a key works in (AppEnvironment in src/config.ts). */
type KeyEnvironment = 'sandbox' | 'production';

export function hashApiKey(apiKey: string): string {
  return createHash('sha256').update(apiKey, 'utf8').digest('hex');
}

/** `sk_sandbox_...` or `sk_live_...` followed by 43 base64url characters (32 random bytes). */
export function generateApiKey(appEnv: KeyEnvironment): string {
  return `${apiKeyPrefixOf(appEnv)}${randomBytes(32).toString('base64url')}`;
}

export function apiKeyPrefixOf(appEnv: KeyEnvironment): string {
  return appEnv === 'production' ? 'sk_live_' : 'sk_sandbox_';
}

/** The first characters of a key, kept to recognise it in listings (its environment and 6 random characters). */
export function displayPrefixOf(apiKey: string): string {
  return apiKey.slice(0, apiKey.startsWith('sk_live_') ? 14 : 17);
}

// Partners and their API keys, for the CLI, the dev server and the tests: the key is shown once, its hash stored.
import type { AppEnvironment } from '../config';
import type { Database, DatabaseClient } from '../persistence/database';
import { insertPartner } from '../persistence/partners';
import { displayPrefixOf, generateApiKey, hashApiKey } from '../domain/api-keys';
import { newId } from '../domain/ids';

export interface CreatedPartner {
  partner_id: string;
  /** Shown once; only its hash is stored. */
  api_key: string;
}

export async function createPartner(db: DatabaseClient, name: string, appEnv: AppEnvironment): Promise<CreatedPartner> {
  const partnerId = newId();
  const apiKey = generateApiKey(appEnv);
  await insertPartner(
    db,
    { id: partnerId, name },
    { id: newId(), keyHash: hashApiKey(apiKey), keyPrefix: displayPrefixOf(apiKey) },
  );
  return { partner_id: partnerId, api_key: apiKey };
}

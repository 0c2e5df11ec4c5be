// Every enum of prisma/schema.prisma is cross-checked with the values of src/domain (or src/schemas) in
// src/persistence/enums.ts, where a value added on one side only fails the typecheck: this test fails when an enum is
// added to the schema without its check there.
import { readFileSync } from 'node:fs';
import { Client } from 'pg';
import path from 'node:path';

const root = path.resolve(__dirname, '..');

describe('schema enums', () => {
  const schema = readFileSync(path.join(root, 'prisma/schema.prisma'), 'utf8');
  const checks = readFileSync(path.join(root, 'src/persistence/enums.ts'), 'utf8');
  const enums = [...schema.matchAll(/^enum (\w+) \{/gm)].map((match) => match[1]);

  it('finds the enums of the schema', () => {
    expect(enums.length).toBeGreaterThanOrEqual(15);
  });

  it('checks every one against the domain in src/persistence/enums.ts', () => {
    expect(enums.filter((name) => !new RegExp(`\\$Enums\\.${name}\\b`).test(checks))).toEqual([]);
  });
});

// The columns that hold a chain, a currency or a rail are typed by their enum in the migrated database (not only in
// prisma/schema.prisma), so a value the code does not know is refused there: a new table with such a column as text
// fails here. The one text column left on purpose is named with its reason.
describe('enum columns in the database', () => {
  /** Text on purpose: what a bank reported that the service could not take may name a currency it does not know. */
  const textOnPurpose = ['bank_unmatched_entries.currency'];
  let client: Client;

  beforeAll(async () => {
    client = new Client({ connectionString: process.env.DATABASE_URL });
    await client.connect();
  });
  afterAll(async () => {
    await client?.end();
  });

  async function columns(namePattern: string): Promise<Array<{ column: string; type: string }>> {
    const result = await client.query<{ column: string; type: string }>(
      `SELECT table_name || '.' || column_name AS column, udt_name AS type
       FROM information_schema.columns
       WHERE table_schema = current_schema() AND column_name ~ $1
       ORDER BY 1`,
      [namePattern],
    );
    return result.rows.filter((row) => !textOnPurpose.includes(row.column));
  }

  it('types every chain column as blockchain', async () => {
    const chains = await columns('^chain$');
    expect(chains.map((row) => row.column)).toEqual(
      expect.arrayContaining([
        'evm_nonces.chain',
        'evm_sends.chain',
        'chain_cursors.chain',
        'payout_chain_claims.chain',
      ]),
    );
    expect(chains.filter((row) => row.type !== 'blockchain')).toEqual([]);
  });

  it('types every currency column as currency, every rail column as a rail enum', async () => {
    const currencies = await columns('(^|_)currency$');
    expect(currencies.length).toBeGreaterThanOrEqual(20);
    expect(currencies.filter((row) => row.type !== 'currency')).toEqual([]);
    const rails = await columns('(^|_)rail$');
    expect(rails.map((row) => row.column)).toContain('virtual_account_deposits.rail');
    expect(rails.filter((row) => !['payment_rail', 'deposit_rail'].includes(row.type))).toEqual([]);
    expect(await columns('^step$')).toEqual([{ column: 'fx_executions.step', type: 'transaction_leg_kind' }]);
  });

  it('refuses a chain the code does not know', async () => {
    await expect(
      client.query(`INSERT INTO chain_cursors (chain, next_block, updated_at) VALUES ('bitcoin', 0, now())`),
    ).rejects.toThrow(/invalid input value for enum blockchain: "bitcoin"/);
  });
});

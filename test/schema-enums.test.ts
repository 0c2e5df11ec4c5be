// Every enum of prisma/schema.prisma is cross-checked with the values of src/domain (or src/schemas) in
// src/persistence/enums.ts, where a value added on one side only fails the typecheck: this test fails when an enum is
// added to the schema without its check there.
import { readFileSync } from 'node:fs';
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

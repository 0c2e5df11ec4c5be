// Sanctions lists: each publisher's official XML format parsed into entries, the store's versions and refusals,
// and the matcher's decisions on the variations real names carry.
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ListStore, type LoadOutcome } from '../src/screening/store';

const fixtures = path.join(__dirname, 'fixtures/sanctions');
const at = (file: string) => path.join(fixtures, file);
/** Lists this file writes (new versions, shrunk ones). */
const directory = mkdtempSync(path.join(tmpdir(), 'lists-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

async function loadedStore(): Promise<ListStore> {
  const store = new ListStore();
  for (const [source, file] of [
    ['ofac_sdn', 'ofac-sdn.xml'],
    ['ofac_consolidated', 'ofac-consolidated.xml'],
    ['un', 'un-consolidated.xml'],
    ['eu', 'eu-consolidated.xml'],
    ['uk', 'uk-sanctions-list.xml'],
  ] as const) {
    expect((await store.load({ source, url: at(file) })).outcome).toBe('loaded');
  }
  return store;
}

describe('list loaders', () => {
  it('read every entry, alias, date of birth and country of each official format', async () => {
    const store = await loadedStore();
    const entries = store.index.entries;
    // By source whatever the order they loaded in (the database lists the current versions so).
    expect(store.versions.map((v) => [v.source, v.entryCount])).toEqual([
      ['eu', 2],
      ['ofac_consolidated', 1],
      ['ofac_sdn', 3],
      ['uk', 3],
      ['un', 2],
    ]);
    const reversed = new ListStore();
    await reversed.load({ source: 'uk', url: at('uk-sanctions-list.xml') });
    await reversed.load({ source: 'eu', url: at('eu-consolidated.xml') });
    await reversed.load({ source: 'ofac_sdn', url: at('ofac-sdn.xml') });
    const query = { name: 'Viktor Karpovsky' };
    expect(reversed.screen(query).versions).toEqual(
      store.screen(query).versions.filter((version) => /^(uk|eu|ofac_sdn):/.test(version)),
    );
    const viktor = entries.find((e) => e.source === 'ofac_sdn' && e.id === '90001')!;
    expect(viktor).toMatchObject({
      kind: 'individual',
      names: ['Viktor Ivanovich KARPOVSKY', 'Viktor KARPOVSKIY', 'Виктор Иванович Карповский'],
      datesOfBirth: ['1961-03-14'],
      nationalities: ['RU'],
      countries: ['RU'],
      programs: ['RUSSIA-EO14024'],
    });
    expect(entries.find((e) => e.id === '90003')!.kind).toBe('vessel');
    const un = entries.find((e) => e.source === 'un' && e.id === '7000001')!;
    expect(un.names[0]).toBe('ABDUL RAHMAN YUSUF AL-QASIMI');
    expect(un.names).toContain('Abu Yusuf al-Shami');
    expect(un.datesOfBirth).toEqual(['1975-07-01', '1976']);
    expect(un.nationalities).toEqual(['SY']);
    expect(entries.find((e) => e.source === 'un' && e.id === '7100001')!.countries).toEqual(['KP']);
    const eu = entries.find((e) => e.source === 'eu' && e.id === '880001')!;
    expect(eu).toMatchObject({ kind: 'individual', datesOfBirth: ['1970-02-11'], nationalities: ['RU'] });
    expect(eu.names).toHaveLength(3);
    const uk = entries.find((e) => e.source === 'uk' && e.id === 'RUS9001')!;
    expect(uk).toMatchObject({
      kind: 'individual',
      names: ['Gennady Petrovich SOKOLOVSKY', 'Gennadiy SOKOLOVSKIY', 'Геннадий Петрович Соколовский'],
      datesOfBirth: ['1958-09-22', '1959'],
      nationalities: ['RU'],
      countries: ['RU'],
      programs: ['Russia'],
    });
    expect(entries.find((e) => e.id === 'IRN9002')).toMatchObject({ kind: 'entity', countries: ['IR'] });
    expect(entries.find((e) => e.id === 'RUS9003')!.kind).toBe('vessel');
    expect(store.screen({ name: 'Sokolovskiy Gennadiy', dateOfBirth: '1958-09-22' }).matches[0]).toMatchObject({
      source: 'uk',
      entryId: 'RUS9001',
    });
    expect(store.screen({ name: 'Caspian Horizon Trading Co' }).potentialMatch).toBe(true);
    expect(store.versions[0]!.version).toMatch(/^[0-9a-f]{64}$/);
  });

  it('keep the previous version when a load does not parse or shrinks suspiciously, and count the refusal', async () => {
    const refusals: LoadOutcome[] = [];
    const store = new ListStore({ minEntryRatio: 0.9, onRefused: (refusal) => refusals.push(refusal) });
    const first = await store.load({ source: 'un', url: at('un-consolidated.xml') });
    expect(first.outcome).toBe('loaded');
    // The same file again is the same version.
    expect((await store.load({ source: 'un', url: at('un-consolidated.xml') })).outcome).toBe('unchanged');

    const broken = await store.load({ source: 'un', url: at('broken-un.xml') });
    expect(broken).toMatchObject({ outcome: 'refused', reason: 'parse_error' });
    const wrongFormat = await store.load({ source: 'un', url: at('eu-consolidated.xml') });
    expect(wrongFormat).toMatchObject({ outcome: 'refused', reason: 'parse_error' });
    const missing = await store.load({ source: 'un', url: at('no-such-file.xml') });
    expect(missing).toMatchObject({ outcome: 'refused', reason: 'fetch_error' });

    // A version with half the entries gone (one of two) is refused (ratio 0.9 here; SCREENING_MIN_ENTRY_RATIO).
    const shrunk = path.join(directory, 'un.xml');
    writeFileSync(
      shrunk,
      '<CONSOLIDATED_LIST dateGenerated="2026-11-22T00:00:00Z"><ENTITIES><ENTITY><DATAID>1</DATAID><FIRST_NAME>ONE LEFT</FIRST_NAME></ENTITY></ENTITIES></CONSOLIDATED_LIST>',
    );
    expect(await store.load({ source: 'un', url: shrunk })).toMatchObject({
      outcome: 'refused',
      reason: 'too_few_entries',
    });
    expect(refusals).toHaveLength(4);
    expect(store.versions).toEqual([first.outcome === 'loaded' && first.version]);
    expect(store.screen({ name: 'Koryo General Trading Corp.' }).potentialMatch).toBe(true);

    // A real new version replaces the old one, and screenings name it.
    copyFileSync(at('un-consolidated.xml'), path.join(directory, 'un2.xml'));
    writeFileSync(path.join(directory, 'un2.xml'), '\n<!-- republished -->\n', { flag: 'a' });
    const second = await store.load({ source: 'un', url: `file://${path.join(directory, 'un2.xml')}` });
    expect(second.outcome).toBe('loaded');
    const result = store.screen({ name: 'Koryo Muyok' });
    expect(result.versions).toEqual([`un:${second.outcome === 'loaded' ? second.version.version : ''}`]);
    expect(result.versions[0]).not.toBe(`un:${first.outcome === 'loaded' ? first.version.version : ''}`);
  });
});

describe('matcher', () => {
  let store: ListStore;
  beforeAll(async () => {
    store = await loadedStore();
  });
  const top = (query: Parameters<ListStore['screen']>[0]) => store.screen(query);

  it.each([
    ['exact, other case', { name: 'viktor ivanovich karpovsky' }, '90001'],
    ['token order and a missing middle name', { name: 'Karpovsky, Viktor' }, '90001'],
    ['a typo', { name: 'Viktor Karpovksy' }, '90001'],
    ['the Cyrillic alias, transliterated', { name: 'Виктор Карповский' }, '90001'],
    ['company form and punctuation', { name: 'Northern Star Shipping L.L.C.' }, '90002'],
    ['a former name', { name: 'Setareh Shomali Shipping Co' }, '90002'],
    ['transliteration variant and honorific', { name: 'Sheikh Abdel Rahman Yousef al Qasimi' }, '7000001'],
    ['an alias', { name: 'Abu Yusuf Al Shami' }, '7000001'],
    ['EU alias in another spelling', { name: 'Yelena Dobrzhanskaya' }, '880001'],
  ])('finds %s', (_label, query, entryId) => {
    const result = top(query);
    expect(result.potentialMatch).toBe(true);
    expect(result.matches[0]!.entryId).toBe(entryId);
  });

  it.each([['John Smith'], ['Maria Garcia Lopez'], ['Viktor Petrov'], ['Northern Lights Bakery'], ['Abdul Karim']])(
    'does not flag %s',
    (name) => {
      expect(top({ name }).potentialMatch).toBe(false);
    },
  );

  it('raises the score when the date of birth and nationality agree and lowers it when they do not', () => {
    const plain = top({ name: 'Viktor Karpovksy' }).matches[0]!;
    const agreeing = top({ name: 'Viktor Karpovksy', dateOfBirth: '1961-03-14', nationality: 'RUS' }).matches[0]!;
    const disagreeing = top({ name: 'Viktor Karpovksy', dateOfBirth: '1990-01-01', nationality: 'FRA' }).matches[0];
    expect(agreeing.score).toBeGreaterThan(plain.score);
    expect(agreeing.agreed).toEqual(['date_of_birth', 'nationality']);
    expect(disagreeing?.score ?? 0).toBeLessThan(plain.score);
    expect(disagreeing?.disagreed).toEqual(['date_of_birth', 'nationality']);
  });
});

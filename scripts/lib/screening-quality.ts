// The screening quality measurement (npm run screening:quality, test/screening-quality.test.ts): a synthetic OFAC
// SDN list of realistic size in the official XML format, loaded through the real loader, queried with variations
// of its own names (recall) and with common names that are on no list (false positives), timed per name.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ListStore, type LoadOutcome } from '../../src/screening/store';

// Deterministic, so a figure can be compared between runs.
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const pools = {
  arabicGiven: [
    'Mohammed',
    'Ahmad',
    'Abdullah',
    'Hassan',
    'Hussein',
    'Khalid',
    'Omar',
    'Yusuf',
    'Ibrahim',
    'Mustafa',
    'Tariq',
    'Walid',
    'Faisal',
    'Jamal',
    'Nasser',
    'Saeed',
    'Rashid',
    'Bilal',
    'Hamza',
    'Ziyad',
    'Anwar',
    'Marwan',
    'Qasim',
    'Salim',
    'Adnan',
  ],
  arabicFamily: [
    'Al-Masri',
    'Al-Baghdadi',
    'Haddad',
    'Al-Rashidi',
    'Qureshi',
    'Al-Zawahiri',
    'Al-Shehri',
    'Nasrallah',
    'Al-Amiri',
    'Al-Tikriti',
    'Mansour',
    'Al-Harbi',
    'Khoury',
    'Al-Qahtani',
    'Barakat',
    'Al-Sudani',
    'Hijazi',
    'Al-Janabi',
    'Darwish',
    'Al-Obeidi',
    'Saleh',
    'Al-Kuwaiti',
    'Jaber',
    'Al-Yemeni',
    'Hamdan',
  ],
  russianGiven: [
    'Sergei',
    'Alexei',
    'Dmitri',
    'Vladimir',
    'Nikolai',
    'Igor',
    'Yuri',
    'Mikhail',
    'Andrei',
    'Oleg',
    'Pavel',
    'Konstantin',
    'Gennady',
    'Arkady',
    'Boris',
    'Vitaly',
    'Anatoly',
    'Yevgeny',
    'Roman',
    'Stanislav',
  ],
  russianPatronymic: [
    'Ivanovich',
    'Petrovich',
    'Sergeyevich',
    'Alexandrovich',
    'Nikolayevich',
    'Vladimirovich',
    'Mikhailovich',
    'Borisovich',
    'Yuryevich',
    'Viktorovich',
  ],
  russianFamily: [
    'Volkov',
    'Sokolov',
    'Lebedev',
    'Kozlov',
    'Novikov',
    'Morozov',
    'Zaitsev',
    'Pavlov',
    'Semenov',
    'Golubev',
    'Vinogradov',
    'Bogdanov',
    'Vorobyov',
    'Fyodorov',
    'Mikhailov',
    'Belyaev',
    'Tarasov',
    'Belov',
    'Komarov',
    'Orlov',
    'Kiselyov',
    'Makarov',
    'Andreyev',
    'Kovalyov',
    'Ilyin',
    'Gusev',
    'Titov',
    'Kuzmin',
    'Kudryavtsev',
    'Baranov',
  ],
  persianGiven: [
    'Reza',
    'Mehdi',
    'Hossein',
    'Ali',
    'Majid',
    'Hamid',
    'Farhad',
    'Saeed',
    'Mahmoud',
    'Javad',
    'Abbas',
    'Kazem',
    'Morteza',
    'Behrouz',
    'Dariush',
  ],
  persianFamily: [
    'Hosseini',
    'Rezaei',
    'Mousavi',
    'Jafari',
    'Ghorbani',
    'Karimi',
    'Rahimi',
    'Sadeghi',
    'Moradi',
    'Tehrani',
    'Shirazi',
    'Esfahani',
    'Najafi',
    'Kazemi',
    'Zarif',
    'Larijani',
    'Soleimani',
    'Bagheri',
    'Ahmadinejad',
    'Rafsanjani',
  ],
  koreanGiven: [
    'Jong Un',
    'Yong Chol',
    'Song Il',
    'Kwang Ho',
    'Chol Su',
    'Myong Guk',
    'Hyon Chol',
    'Tae Song',
    'Il Nam',
    'Chang Ho',
  ],
  koreanFamily: ['Kim', 'Ri', 'Pak', 'Choe', 'Jong', 'Kang', 'Jo', 'Yun', 'Jang', 'Han'],
  latinGiven: [
    'Nicolas',
    'Diosdado',
    'Tareck',
    'Alex',
    'Joaquin',
    'Rafael',
    'Hector',
    'Ovidio',
    'Ismael',
    'Rodrigo',
    'Fausto',
    'Ernesto',
  ],
  latinFamily: [
    'Maduro Moros',
    'Cabello Rondon',
    'El Aissami',
    'Saab Moran',
    'Guzman Loera',
    'Caro Quintero',
    'Zambada Garcia',
    'Salazar Zamorano',
    'Carrillo Fuentes',
    'Arellano Felix',
    'Beltran Leyva',
    'Padron Lopez',
  ],
  companyWord: [
    'Global',
    'Trans',
    'Petro',
    'Oriental',
    'Golden',
    'Eastern',
    'Pacific',
    'Crescent',
    'Sahara',
    'Neva',
    'Volga',
    'Caspian',
    'Tigris',
    'Orient',
    'Baltic',
    'Zagros',
    'Aral',
    'Amur',
    'Persia',
    'Levant',
    'Falcon',
    'Phoenix',
    'Emerald',
    'Sapphire',
    'Taiga',
  ],
  companyTrade: [
    'Shipping',
    'Trading',
    'Petroleum',
    'Logistics',
    'Investment',
    'Industrial',
    'Metals',
    'Energy',
    'Maritime',
    'Aviation',
    'Chemicals',
    'Exchange',
    'Holding',
    'Engineering',
    'Technologies',
  ],
  companyForm: ['LLC', 'Ltd', 'FZE', 'JSC', 'Co', 'GmbH', 'SA', 'Limited', 'Company', 'OOO'],
};

// Common names on no list (English, German, French, Italian, Spanish, Polish, Dutch, Indian first and last names).
const commonGiven = [
  'James',
  'Mary',
  'John',
  'Patricia',
  'Robert',
  'Jennifer',
  'Michael',
  'Linda',
  'William',
  'Elizabeth',
  'David',
  'Barbara',
  'Richard',
  'Susan',
  'Thomas',
  'Jessica',
  'Charles',
  'Sarah',
  'Daniel',
  'Karen',
  'Lukas',
  'Anna',
  'Jonas',
  'Lea',
  'Pierre',
  'Camille',
  'Giulia',
  'Marco',
  'Lucia',
  'Pablo',
  'Carmen',
  'Piotr',
  'Katarzyna',
  'Jan',
  'Sanne',
  'Priya',
  'Rahul',
  'Ananya',
  'Emma',
  'Olivia',
];
const commonFamily = [
  'Smith',
  'Johnson',
  'Williams',
  'Brown',
  'Jones',
  'Miller',
  'Davis',
  'Wilson',
  'Anderson',
  'Taylor',
  'Thomas',
  'Moore',
  'Martin',
  'Jackson',
  'Thompson',
  'White',
  'Harris',
  'Clark',
  'Lewis',
  'Walker',
  'Müller',
  'Schmidt',
  'Schneider',
  'Fischer',
  'Weber',
  'Dubois',
  'Lefebvre',
  'Rossi',
  'Bianchi',
  'Romano',
  'Fernández',
  'González',
  'Rodríguez',
  'Nowak',
  'Kowalski',
  'Wiśniewski',
  'de Jong',
  'Jansen',
  'Patel',
  'Sharma',
];

// Spelling variants a transliteration produces (applied to a name to query it as another romanisation).
const transliterations: [RegExp, string][] = [
  [/Mohammed/g, 'Muhammad'],
  [/Ahmad/g, 'Ahmed'],
  [/Yusuf/g, 'Youssef'],
  [/Hussein/g, 'Husayn'],
  [/Omar/g, 'Umar'],
  [/Qasim/g, 'Kassim'],
  [/Al-/g, 'El '],
  [/Sergei/g, 'Sergey'],
  [/Alexei/g, 'Aleksey'],
  [/Dmitri/g, 'Dmitry'],
  [/Yuri/g, 'Iouri'],
  [/Yevgeny/g, 'Evgeniy'],
  [/yev/g, 'ev'],
  [/yov/g, 'ev'],
  [/ov\b/g, 'off'],
  [/Ri\b/g, 'Lee'],
  [/Choe/g, 'Choi'],
  [/Jong/g, 'Chong'],
  [/Hossein/g, 'Hosein'],
  [/ei\b/g, 'ey'],
  [/ou/g, 'u'],
  [/kh/g, 'h'],
];

export interface SyntheticEntry {
  uid: number;
  kind: 'Individual' | 'Entity';
  first: string;
  last: string;
  akas: { first: string; last: string }[];
  dob?: string;
  country: string;
}

function generate(count: number, seed: number): SyntheticEntry[] {
  const next = random(seed);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(next() * list.length)]!;
  const entries: SyntheticEntry[] = [];
  const seen = new Set<string>();
  while (entries.length < count) {
    const roll = next();
    let person: { first: string; last: string; country: string };
    let kind: SyntheticEntry['kind'] = 'Individual';
    if (roll < 0.3)
      person = {
        first: `${pick(pools.arabicGiven)} ${pick(pools.arabicGiven)}`,
        last: pick(pools.arabicFamily),
        country: pick(['Syria', 'Iraq', 'Yemen', 'Lebanon', 'Saudi Arabia']),
      };
    else if (roll < 0.5)
      person = {
        first: `${pick(pools.russianGiven)} ${pick(pools.russianPatronymic)}`,
        last: pick(pools.russianFamily),
        country: 'Russia',
      };
    else if (roll < 0.6)
      person = {
        first: pick(pools.persianGiven),
        last: `${pick(pools.persianFamily)} ${pick(pools.persianFamily)}`,
        country: 'Iran',
      };
    else if (roll < 0.67)
      person = { first: pick(pools.koreanGiven), last: pick(pools.koreanFamily), country: 'North Korea' };
    else if (roll < 0.75)
      person = {
        first: pick(pools.latinGiven),
        last: pick(pools.latinFamily),
        country: pick(['Venezuela', 'Mexico', 'Colombia']),
      };
    else {
      kind = 'Entity';
      person = {
        first: '',
        last: `${pick(pools.companyWord)} ${pick(pools.companyWord)} ${pick(pools.companyTrade)} ${pick(pools.companyForm)}`,
        country: pick(['United Arab Emirates', 'Russia', 'Iran', 'China', 'Turkey']),
      };
    }
    const key = `${person.first} ${person.last}`;
    if (seen.has(key)) continue;
    seen.add(key);
    const akas: SyntheticEntry['akas'] = [];
    // ~40k names for ~18k entries (OFAC SDN's proportions): 1.2 distinct aliases per entry on average.
    const aliasCount = next() < 0.15 ? 0 : 1 + Math.floor(next() * 4);
    for (let i = 0; i < aliasCount; i++) {
      const alias =
        kind === 'Entity'
          ? {
              first: '',
              last: `${pick(pools.companyWord)} ${pick(pools.companyWord)} ${pick(pools.companyTrade)} ${pick(pools.companyForm)}`,
            }
          : next() < 0.3
            ? { first: `Abu ${pick(pools.arabicGiven)}`, last: pick(pools.arabicFamily) }
            : next() < 0.5
              ? { first: `${pick(pools.russianGiven)} ${pick(pools.persianGiven)}`, last: person.last }
              : { first: person.first.split(' ')[0]!, last: applyTransliteration(person.last) };
      // An alias that is another entry's name (or alias) would make the measurement ambiguous.
      const aliasKey = `${alias.first} ${alias.last}`;
      if (seen.has(aliasKey)) continue;
      seen.add(aliasKey);
      akas.push(alias);
    }
    const year = 1940 + Math.floor(next() * 60);
    entries.push({
      uid: 100000 + entries.length,
      kind,
      first: person.first,
      last: person.last,
      akas,
      dob:
        kind === 'Individual'
          ? `${String(1 + Math.floor(next() * 28)).padStart(2, '0')} ${pick(['Jan', 'Mar', 'Jun', 'Sep', 'Nov'])} ${year}`
          : undefined,
      country: person.country,
    });
  }
  return entries;
}

function applyTransliteration(name: string): string {
  for (const [pattern, replacement] of transliterations)
    if (pattern.test(name)) return name.replace(pattern, replacement);
  return name;
}

const escape = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;');

/** The entries as an OFAC SDN XML file (sdn.xsd classic format). */
export function sdnXml(entries: SyntheticEntry[]): string {
  const parts = [
    '<?xml version="1.0" standalone="yes"?>\n<sdnList xmlns="https://sanctionslistservice.ofac.treas.gov/api/PublicationPreview/exports/XML">',
    `<publshInformation><Publish_Date>11/20/2026</Publish_Date><Record_Count>${entries.length}</Record_Count></publshInformation>`,
  ];
  for (const e of entries) {
    const name = (first: string, last: string) =>
      `${first ? `<firstName>${escape(first)}</firstName>` : ''}<lastName>${escape(last || first)}</lastName>`;
    parts.push(
      `<sdnEntry><uid>${e.uid}</uid>${name(e.first, e.last)}<sdnType>${e.kind}</sdnType><programList><program>SDGT</program></programList>` +
        (e.akas.length
          ? `<akaList>${e.akas.map((a, i) => `<aka><uid>${e.uid * 10 + i}</uid><type>a.k.a.</type><category>strong</category>${name(a.first, a.last)}</aka>`).join('')}</akaList>`
          : '') +
        `<addressList><address><uid>${e.uid}1</uid><country>${e.country}</country></address></addressList>` +
        (e.dob
          ? `<dateOfBirthList><dateOfBirthItem><uid>${e.uid}2</uid><dateOfBirth>${e.dob}</dateOfBirth><mainEntry>true</mainEntry></dateOfBirthItem></dateOfBirthList>`
          : '') +
        '</sdnEntry>',
    );
  }
  parts.push('</sdnList>');
  return parts.join('\n');
}

type Variation = 'exact' | 'typo' | 'swapped_order' | 'transliteration' | 'missing_middle_name' | 'alias';

function vary(entry: SyntheticEntry, variation: Variation, next: () => number): string | null {
  const full = [entry.first, entry.last].filter(Boolean).join(' ');
  const tokens = full.split(' ');
  switch (variation) {
    case 'exact':
      return full;
    case 'typo': {
      // One edit (swap, drop or change a letter) in one token of four or more letters.
      const candidates = tokens.map((t, i) => [t, i] as const).filter(([t]) => t.length >= 5);
      if (candidates.length === 0) return null;
      const [token, index] = candidates[Math.floor(next() * candidates.length)]!;
      const at = 1 + Math.floor(next() * (token.length - 2));
      const kind = Math.floor(next() * 3);
      const changed =
        kind === 0
          ? token.slice(0, at) + token[at + 1] + token[at] + token.slice(at + 2)
          : kind === 1
            ? token.slice(0, at) + token.slice(at + 1)
            : token.slice(0, at) + 'aeiou'[Math.floor(next() * 5)] + token.slice(at + 1);
      tokens[index] = changed;
      return tokens.join(' ');
    }
    case 'swapped_order':
      return entry.kind === 'Entity' ? null : `${entry.last}, ${entry.first}`;
    case 'transliteration': {
      const changed = applyTransliteration(full);
      return changed === full ? null : changed;
    }
    case 'missing_middle_name':
      return entry.kind === 'Entity' || tokens.length < 3 ? null : [tokens[0], tokens[tokens.length - 1]].join(' ');
    case 'alias': {
      const alias = entry.akas[Math.floor(next() * entry.akas.length)];
      return alias ? [alias.first, alias.last].filter(Boolean).join(' ') : null;
    }
  }
}

export interface QualityReport {
  list: { entries: number; names: number; xml_bytes: number; load_ms: number; index_heap_mb: number };
  recall: number;
  false_positive_rate: number;
  positives: number;
  negatives: number;
  recall_by_variation: Record<string, number>;
  misses: string[];
  false_positives: string[];
  latency_ms: { p50: number; p99: number; max: number };
  /** The process's CPU time per call: the work itself, which a loaded machine does not stretch as it does wall time. */
  cpu_ms: { p50: number; p99: number; max: number };
  /**
   * The median CPU time of a fixed piece of string work (4,000 names folded and sorted), run between the screenings:
   * the baseline that makes the CPU figures comparable across machines (a test asserts their ratio).
   */
  reference_cpu_ms: number;
  review_threshold: number;
}

export async function measureQuality(
  options: { entries?: number; positives?: number; negatives?: number } = {},
): Promise<QualityReport> {
  const entries = generate(options.entries ?? 18_000, 39);
  const xml = sdnXml(entries);
  const directory = mkdtempSync(path.join(tmpdir(), 'screening-quality-'));
  const file = path.join(directory, 'sdn.xml');
  writeFileSync(file, xml);

  const gc = (globalThis as { gc?: () => void }).gc;
  gc?.();
  const heapBefore = process.memoryUsage().heapUsed;
  const store = new ListStore();
  const started = performance.now();
  let outcome: LoadOutcome;
  let loadMs: number;
  try {
    outcome = await store.load({ source: 'ofac_sdn', url: file });
    loadMs = performance.now() - started;
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
  if (outcome.outcome !== 'loaded') throw new Error(`synthetic list refused: ${JSON.stringify(outcome)}`);
  gc?.();
  const heapAfter = process.memoryUsage().heapUsed;

  const next = random(7);
  // Warm-up (JIT), not timed.
  for (const entry of entries.slice(0, 50)) store.screen({ name: `${entry.first} ${entry.last}` });
  const variations: Variation[] = ['exact', 'typo', 'swapped_order', 'transliteration', 'missing_middle_name', 'alias'];
  const byVariation: Record<string, { found: number; total: number }> = {};
  const misses: string[] = [];
  const latencies: number[] = [];
  const cpuTimes: number[] = [];
  const timedScreen = (name: string) => {
    const cpu = process.cpuUsage();
    const t0 = performance.now();
    const result = store.screen({ name });
    latencies.push(performance.now() - t0);
    const used = process.cpuUsage(cpu);
    cpuTimes.push((used.user + used.system) / 1000);
    return result;
  };
  const referenceNames = entries.slice(0, 4000).map((entry) => `${entry.first} ${entry.last}`);
  const referenceTimes: number[] = [];
  const timedReference = () => {
    const cpu = process.cpuUsage();
    referenceNames
      .map((name) =>
        name
          .normalize('NFKD')
          .replace(/[\u0300-\u036f]/g, '')
          .toLowerCase(),
      )
      .sort();
    const used = process.cpuUsage(cpu);
    referenceTimes.push((used.user + used.system) / 1000);
  };
  let found = 0;
  let positives = 0;
  const wanted = options.positives ?? 1200;
  while (positives < wanted) {
    const entry = entries[Math.floor(next() * entries.length)]!;
    const variation = variations[positives % variations.length]!;
    const name = vary(entry, variation, next);
    if (!name) continue;
    positives += 1;
    if (positives % 20 === 0) timedReference();
    const result = timedScreen(name);
    const hit = result.potentialMatch && result.matches.some((m) => m.entryId === String(entry.uid) && m.score >= 0.88);
    const slot = (byVariation[variation] ??= { found: 0, total: 0 });
    slot.total += 1;
    if (hit) {
      found += 1;
      slot.found += 1;
    } else if (misses.length < 20)
      misses.push(`${variation}: "${name}" (entry ${entry.uid} "${entry.first} ${entry.last}")`);
  }

  const falsePositives: string[] = [];
  const negatives = options.negatives ?? 2000;
  for (let i = 0; i < negatives; i++) {
    const name = `${commonGiven[Math.floor(next() * commonGiven.length)]} ${next() < 0.3 ? `${commonGiven[Math.floor(next() * commonGiven.length)]} ` : ''}${commonFamily[Math.floor(next() * commonFamily.length)]}`;
    const result = timedScreen(name);
    if (result.potentialMatch)
      falsePositives.push(`"${name}" -> "${result.matches[0]!.matchedName}" ${result.matches[0]!.score}`);
  }

  const quantiles = (values: number[]) => {
    const sorted = [...values].sort((a, b) => a - b);
    const at = (q: number) =>
      Math.round(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]! * 1000) / 1000;
    return { p50: at(0.5), p99: at(0.99), max: at(1) };
  };
  return {
    list: {
      entries: entries.length,
      names: store.index.nameCount,
      xml_bytes: Buffer.byteLength(xml),
      load_ms: Math.round(loadMs),
      index_heap_mb: Math.round(((heapAfter - heapBefore) / 1024 / 1024) * 10) / 10,
    },
    recall: Math.round((found / positives) * 10000) / 10000,
    false_positive_rate: Math.round((falsePositives.length / negatives) * 10000) / 10000,
    positives,
    negatives,
    recall_by_variation: Object.fromEntries(
      Object.entries(byVariation).map(([k, v]) => [k, Math.round((v.found / v.total) * 1000) / 1000]),
    ),
    misses,
    false_positives: falsePositives.slice(0, 20),
    latency_ms: quantiles(latencies),
    cpu_ms: quantiles(cpuTimes),
    reference_cpu_ms: quantiles(referenceTimes).p50,
    review_threshold: 0.88,
  };
}

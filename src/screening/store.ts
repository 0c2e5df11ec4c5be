// The loaded lists of one worker: one version per source, and the index built from all of them, replaced by a
// single assignment so a screening sees either the old lists or the new ones, never a mixture. A load that fails
// to parse, or that has far fewer entries than the version it would replace, is refused: the previous version
// stays and the refusal is counted (payments_screening_list_load_failures_total, ops/prometheus).
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import type { ListSource, ParsedList } from './entries';
import { loadEuXml } from './loaders/eu';
import { loadOfacSdnXml } from './loaders/ofac';
import { loadUnConsolidatedXml } from './loaders/un';
import { loadUkXml } from './loaders/uk';
import type { XmlInput } from './loaders/xml';
import {
  defaultThresholds,
  type MatchReport,
  type MatchThresholds,
  SanctionsIndex,
  type ScreeningQuery,
} from './matcher';

export interface ListLocation {
  source: ListSource;
  /** file:// path or https:// URL of the publisher's file. */
  url: string;
}

export interface ListVersion {
  source: ListSource;
  /** sha256 of the file's bytes: the same file loaded twice is the same version. */
  version: string;
  publishedAt: string | null;
  entryCount: number;
  loadedAt: string;
}

export type LoadOutcome =
  | { outcome: 'loaded'; version: ListVersion }
  | { outcome: 'unchanged'; version: ListVersion }
  | {
      outcome: 'refused';
      source: ListSource;
      reason: 'parse_error' | 'fetch_error' | 'too_few_entries';
      detail: string;
    };

export interface ScreeningResultOfLists {
  matches: MatchReport[];
  potentialMatch: boolean;
  /** The list versions this screening used (source:sha256). */
  versions: string[];
}

export function parseList(source: ListSource, input: XmlInput): Promise<ParsedList> {
  switch (source) {
    case 'ofac_sdn':
    case 'ofac_consolidated':
      return loadOfacSdnXml(input, source);
    case 'un':
      return loadUnConsolidatedXml(input);
    case 'eu':
      return loadEuXml(input);
    case 'uk':
      return loadUkXml(input);
  }
}

/** The file's bytes as a stream, hashed as they pass. */
async function openList(url: string, fetchTimeoutMs: number): Promise<AsyncIterable<Uint8Array>> {
  if (url.startsWith('file:')) return createReadStream(fileURLToPath(url));
  if (url.startsWith('/')) return createReadStream(url);
  const response = await fetch(url, { signal: AbortSignal.timeout(fetchTimeoutMs) });
  if (!response.ok || !response.body) throw new Error(`${url} answered ${response.status}`);
  return Readable.fromWeb(response.body as import('node:stream/web').ReadableStream<Uint8Array>);
}

async function* hashing(
  input: AsyncIterable<Uint8Array>,
  hash: ReturnType<typeof createHash>,
): AsyncIterable<Uint8Array> {
  for await (const chunk of input) {
    hash.update(chunk);
    yield chunk;
  }
}

/** Reads and parses one list, with the sha256 of its bytes; a fetch or parse failure is a refusal. */
export async function readList(
  location: ListLocation,
  fetchTimeoutMs: number,
): Promise<{ parsed: ParsedList; checksum: string } | Extract<LoadOutcome, { outcome: 'refused' }>> {
  const hash = createHash('sha256');
  try {
    const bytes = await openList(location.url, fetchTimeoutMs);
    const parsed = await parseList(location.source, hashing(bytes, hash));
    return { parsed, checksum: hash.digest('hex') };
  } catch (error) {
    const detail = error instanceof Error ? error.message : String(error);
    const reason = error instanceof Error && error.name === 'ListFormatError' ? 'parse_error' : 'fetch_error';
    return { outcome: 'refused', source: location.source, reason, detail };
  }
}

export interface ListStoreOptions {
  /** A new version with fewer entries than this fraction of the current one is refused as suspicious. */
  minEntryRatio: number;
  thresholds: MatchThresholds;
  fetchTimeoutMs: number;
  onRefused?: (refusal: Extract<LoadOutcome, { outcome: 'refused' }>) => void;
  onLoaded?: (version: ListVersion) => void;
}

interface Snapshot {
  index: SanctionsIndex;
  versions: ListVersion[];
}

export class ListStore {
  private readonly lists = new Map<ListSource, { version: ListVersion; parsed: ParsedList }>();
  private snapshot: Snapshot = { index: new SanctionsIndex([]), versions: [] };
  private readonly options: ListStoreOptions;

  constructor(options: Partial<ListStoreOptions> = {}) {
    this.options = { minEntryRatio: 0.5, thresholds: defaultThresholds, fetchTimeoutMs: 120_000, ...options };
  }

  get versions(): readonly ListVersion[] {
    return this.snapshot.versions;
  }

  get index(): SanctionsIndex {
    return this.snapshot.index;
  }

  /** Reads, parses and (unless refused) installs one list. */
  async load(location: ListLocation): Promise<LoadOutcome> {
    const read = await readList(location, this.options.fetchTimeoutMs);
    if ('outcome' in read) return this.refuse(read);
    return this.install(read.parsed, read.checksum);
  }

  /** Installs an already parsed list under `version` (a hash of its file). */
  install(parsed: ParsedList, version: string): LoadOutcome {
    const current = this.lists.get(parsed.source);
    if (current && current.version.version === version) return { outcome: 'unchanged', version: current.version };
    if (
      parsed.entries.length === 0 ||
      (current && parsed.entries.length < current.version.entryCount * this.options.minEntryRatio)
    ) {
      return this.refuse({
        outcome: 'refused',
        source: parsed.source,
        reason: 'too_few_entries',
        detail: `${parsed.entries.length} entries${current ? `, the current version has ${current.version.entryCount}` : ''}`,
      });
    }
    const listVersion: ListVersion = {
      source: parsed.source,
      version,
      publishedAt: parsed.publishedAt,
      entryCount: parsed.entries.length,
      loadedAt: new Date().toISOString(),
    };
    this.lists.set(parsed.source, { version: listVersion, parsed });
    const all = [...this.lists.values()];
    // Built aside, then swapped in one assignment.
    this.snapshot = {
      index: new SanctionsIndex(all.flatMap((list) => list.parsed.entries)),
      // By source, as the database lists the current versions: what a screening records does not depend on which
      // list happened to load first.
      versions: all
        .map((list) => list.version)
        .sort((a, b) => (a.source < b.source ? -1 : a.source > b.source ? 1 : 0)),
    };
    this.options.onLoaded?.(listVersion);
    return { outcome: 'loaded', version: listVersion };
  }

  private refuse(refusal: Extract<LoadOutcome, { outcome: 'refused' }>): LoadOutcome {
    this.options.onRefused?.(refusal);
    return refusal;
  }

  screen(query: ScreeningQuery): ScreeningResultOfLists {
    const { index, versions } = this.snapshot;
    const matches = index.screen(query, this.options.thresholds);
    return {
      matches,
      potentialMatch: matches.some((match) => match.score >= this.options.thresholds.review),
      versions: versions.map((version) => `${version.source}:${version.version}`),
    };
  }
}

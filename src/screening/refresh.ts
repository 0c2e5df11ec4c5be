// One refresh of one configured list (the Schedule's activity, workflows/screening.ts): read and parse the
// publisher's file, then keep it as a new version row, or record why it was refused. The entries go into the row
// itself: every worker and API process then screens against exactly the version a screening names, the publisher is
// read once per refresh whatever the number of processes, and no shared disk is needed (docs/screening.md).
import type { Database } from '../persistence/database';
import { currentListVersions, insertListVersion, type ListVersionRow } from '../persistence/screening';
import type { ListSource } from './entries';
import { readList, type ListLocation } from './store';

export type RefreshOutcome =
  | { source: ListSource; outcome: 'loaded'; version: ListVersionRow; previous: string | null }
  | { source: ListSource; outcome: 'unchanged'; version: ListVersionRow }
  | {
      source: ListSource;
      outcome: 'refused';
      reason: 'parse_error' | 'fetch_error' | 'too_few_entries';
      detail: string;
    };

export interface RefreshOptions {
  minEntryRatio: number;
  fetchTimeoutMs: number;
}

export async function refreshList(
  db: Database,
  location: ListLocation,
  options: RefreshOptions,
): Promise<RefreshOutcome> {
  const current = (await currentListVersions(db)).find((version) => version.source === location.source) ?? null;
  const read = await readList(location, options.fetchTimeoutMs);
  const refuse = async (
    reason: 'parse_error' | 'fetch_error' | 'too_few_entries',
    detail: string,
    checksum: string,
    entryCount: number,
  ): Promise<RefreshOutcome> => {
    await insertListVersion(db, {
      source: location.source,
      url: location.url,
      checksum,
      entryCount,
      publishedAt: null,
      status: 'refused',
      detail: `${reason}: ${detail}`,
      entries: null,
    });
    return { source: location.source, outcome: 'refused', reason, detail };
  };
  if ('outcome' in read) return refuse(read.reason, read.detail, '', 0);
  const { parsed, checksum } = read;
  if (current && current.checksum === checksum)
    return { source: location.source, outcome: 'unchanged', version: current };
  const count = parsed.entries.length;
  if (count === 0 || (current && count < current.entryCount * options.minEntryRatio)) {
    return refuse(
      'too_few_entries',
      `${count} entries${current ? `, the current version has ${current.entryCount}` : ''}`,
      checksum,
      count,
    );
  }
  const version = await insertListVersion(db, {
    source: location.source,
    url: location.url,
    checksum,
    entryCount: count,
    publishedAt: parsed.publishedAt,
    status: 'loaded',
    detail: null,
    entries: parsed.entries,
  });
  return { source: location.source, outcome: 'loaded', version, previous: current?.checksum ?? null };
}

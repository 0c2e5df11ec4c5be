// Screening against the published sanctions lists (docs/screening.md): the process's in-memory index follows the
// newest loaded version of each list in screening_list_versions (written by the refresh Schedule), so the API and
// every worker screen against the same versions, and a screening names them.
import type { DatabaseClient } from '../persistence/database';
import { currentListVersions, listVersionEntries } from '../persistence/screening';
import { ListStore } from '../screening/store';
import type { MatchThresholds } from '../screening/matcher';
import { ProviderUnavailableError } from './unavailable';
import type { Screening, ScreeningResult, ScreeningSubject } from './screening';

export interface ListScreeningOptions {
  thresholds: MatchThresholds;
  /** How long the process trusts its versions before it asks the table again. */
  checkEveryMs: number;
}

export class ListScreening implements Screening {
  // The table decided which versions count (refusals included): the process installs whatever it names.
  private readonly store: ListStore;
  private checkedAt = 0;
  private syncing: Promise<void> | null = null;

  constructor(
    private readonly prisma: DatabaseClient,
    private readonly options: ListScreeningOptions,
  ) {
    this.store = new ListStore({ minEntryRatio: 0, thresholds: options.thresholds });
  }

  /** The versions in use (source:sha256). */
  get versions(): string[] {
    return this.store.versions.map((version) => `${version.source}:${version.version}`);
  }

  /** Installs the table's newest loaded versions that this process does not have yet. */
  async sync(): Promise<void> {
    // One reader at a time: concurrent screenings wait for the same sync instead of each loading the entries.
    this.syncing ??= (async () => {
      try {
        const current = await currentListVersions(this.prisma);
        for (const version of current) {
          const installed = this.store.versions.find((known) => known.source === version.source);
          if (installed?.version === version.checksum) continue;
          const entries = await listVersionEntries(this.prisma, version.id);
          this.store.install({ source: version.source, publishedAt: version.publishedAt, entries }, version.checksum);
        }
        this.checkedAt = Date.now();
      } finally {
        this.syncing = null;
      }
    })();
    return this.syncing;
  }

  async screen(subject: ScreeningSubject): Promise<ScreeningResult> {
    if (Date.now() - this.checkedAt >= this.options.checkEveryMs) await this.sync();
    // No list loaded yet (a new deployment before its first refresh): refuse to screen rather than approve.
    if (this.store.versions.length === 0) {
      throw new ProviderUnavailableError('no sanctions list version is loaded yet (the refresh Schedule loads them)');
    }
    const result = this.store.screen({
      name: subject.name,
      ...(subject.kind ? { kind: subject.kind } : {}),
      dateOfBirth: subject.dateOfBirth ?? null,
      nationality: subject.nationality ?? null,
      country: subject.country ?? null,
    });
    const report = { versions: result.versions, matches: result.matches };
    if (!result.potentialMatch) return { outcome: 'approved', report };
    const best = result.matches[0]!;
    return {
      outcome: 'review',
      reason: `potential match: ${best.source} entry ${best.entryId} (${best.matchedName}), score ${best.score.toFixed(2)}`,
      report,
    };
  }
}

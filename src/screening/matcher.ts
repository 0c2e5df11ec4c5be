// The matcher: pure code over an in-memory index of every name of every entry of the loaded lists. A query's
// name is normalised like the list's (normalise.ts), candidates are found by blocking keys (a token's first and
// last three letters and its double-metaphone code, so one typo or a transliteration still finds the entry),
// then scored: Jaro-Winkler per token (a phonetic agreement counts as a near match), aligned in both directions so
// that token order does not matter and a missing middle name costs little; the list's secondary fields (date of
// birth, nationality, country, kind) raise or lower the score. Memory and latency: docs/screening.md.
import jaroWinkler from 'talisman/metrics/jaro-winkler';
import doubleMetaphone from 'talisman/phonetics/double-metaphone';
import { countryCode } from './countries';
import type { EntryKind, ListEntry, ListSource } from './entries';
import { nameTokens } from './normalise';

export interface MatchThresholds {
  /** A score at or above this is a potential match: the subject goes to review. */
  review: number;
  /** Name scores below this are not reported at all. */
  report: number;
}

export const defaultThresholds: MatchThresholds = { review: 0.88, report: 0.8 };

export interface ScreeningQuery {
  name: string;
  kind?: 'individual' | 'entity';
  /** `YYYY`, `YYYY-MM` or `YYYY-MM-DD`. */
  dateOfBirth?: string | null;
  /** Alpha-2, alpha-3 or an English country name. */
  nationality?: string | null;
  country?: string | null;
}

export type SecondaryField = 'date_of_birth' | 'nationality' | 'country' | 'kind';

export interface MatchReport {
  source: ListSource;
  entryId: string;
  /** The entry's name (primary or alias) that matched, as the list spells it. */
  matchedName: string;
  primaryName: string;
  nameScore: number;
  score: number;
  agreed: SecondaryField[];
  disagreed: SecondaryField[];
}

interface IndexedName {
  entry: number;
  name: string;
  tokens: Uint32Array;
  /** Sum of the tokens' lengths, for the length-weighted alignment. */
  length: number;
}

// A token below this similarity counts as unmatched (unrelated short words still score ~0.5 in Jaro-Winkler).
const TOKEN_FLOOR = 0.86;
// Two tokens that sound alike (Mohammed / Muhammad, Qaddafi / Gaddafi) count at least this much.
const PHONETIC_AGREEMENT = 0.93;

// Particles that half the names of a list share: scored, but no key of theirs (it would make every name a candidate).
const particles = new Set([
  'al',
  'el',
  'ul',
  'bin',
  'ibn',
  'bint',
  'abu',
  'abd',
  'ben',
  'de',
  'da',
  'del',
  'van',
  'von',
  'la',
  'le',
]);

function blockingKeys(token: string, phonetic: string): string[] {
  if (particles.has(token)) return [];
  // Short tokens (Korean and Chinese syllables: "Jo", "Ri") are keys as they are.
  if (token.length < 3) return [`x${token}`];
  const keys = [`p${token.slice(0, 3)}`, `s${token.slice(-3)}`];
  if (phonetic.length >= 2) keys.push(`m${phonetic}`);
  return keys;
}

export class SanctionsIndex {
  readonly entries: readonly ListEntry[];
  private readonly names: IndexedName[] = [];
  private readonly tokenText: string[] = [];
  private readonly tokenPhonetic: string[] = [];
  private readonly tokenIds = new Map<string, number>();
  private readonly postings = new Map<string, number[]>();
  private stamp: Uint32Array;
  private readonly mask: Uint32Array;
  private query = 0;

  constructor(entries: readonly ListEntry[]) {
    this.entries = entries;
    entries.forEach((entry, entryIndex) => {
      const seen = new Set<string>();
      for (const name of entry.names) {
        const tokens = nameTokens(name);
        const key = tokens.join(' ');
        if (tokens.length === 0 || seen.has(key)) continue;
        seen.add(key);
        const ids = Uint32Array.from(tokens, (token) => this.intern(token));
        const nameIndex = this.names.length;
        this.names.push({
          entry: entryIndex,
          name,
          tokens: ids,
          length: tokens.reduce((sum, token) => sum + token.length, 0),
        });
        const keys = new Set<string>();
        for (const id of ids) for (const k of blockingKeys(this.tokenText[id]!, this.tokenPhonetic[id]!)) keys.add(k);
        for (const k of keys) {
          const list = this.postings.get(k);
          if (list) list.push(nameIndex);
          else this.postings.set(k, [nameIndex]);
        }
      }
    });
    this.stamp = new Uint32Array(this.names.length);
    this.mask = new Uint32Array(this.names.length);
  }

  get nameCount(): number {
    return this.names.length;
  }

  private intern(token: string): number {
    let id = this.tokenIds.get(token);
    if (id === undefined) {
      id = this.tokenText.length;
      this.tokenIds.set(token, id);
      this.tokenText.push(token);
      this.tokenPhonetic.push(doubleMetaphone(token)[0]);
    }
    return id;
  }

  /** Every entry whose best name scores at least `thresholds.report`, best first. */
  screen(query: ScreeningQuery, thresholds: MatchThresholds = defaultThresholds): MatchReport[] {
    const queryTokens = nameTokens(query.name);
    if (queryTokens.length === 0) return [];
    const queryPhonetic = queryTokens.map((token) => doubleMetaphone(token)[0]);
    const queryLength = queryTokens.reduce((sum, token) => sum + token.length, 0);

    // Candidates: names sharing a blocking key with at least two of the query's tokens (one for a one-token
    // query), each once: a stamp and a bit mask per name instead of a Set, so common keys cost little.
    this.query += 1;
    if (this.query === 0xffffffff) {
      this.stamp.fill(0);
      this.query = 1;
    }
    const required = Math.min(2, queryTokens.length);
    const candidates: number[] = [];
    queryTokens.forEach((token, i) => {
      const bit = 1 << Math.min(i, 31);
      for (const key of blockingKeys(token, queryPhonetic[i]!)) {
        for (const nameIndex of this.postings.get(key) ?? []) {
          if (this.stamp[nameIndex] !== this.query) {
            this.stamp[nameIndex] = this.query;
            this.mask[nameIndex] = bit;
            if (required === 1) candidates.push(nameIndex);
          } else if ((this.mask[nameIndex]! & bit) === 0) {
            this.mask[nameIndex]! |= bit;
            if (popcount(this.mask[nameIndex]!) === required) candidates.push(nameIndex);
          }
        }
      }
    });

    // Token similarities are shared by many names (common given names): computed once per query.
    const memo = queryTokens.map(() => new Map<number, number>());
    const similarity = (q: number, tokenId: number): number => {
      const known = memo[q]!.get(tokenId);
      if (known !== undefined) return known;
      const a = queryTokens[q]!;
      const b = this.tokenText[tokenId]!;
      let value = a === b ? 1 : jaroWinkler(a, b);
      if (
        value < PHONETIC_AGREEMENT &&
        queryPhonetic[q] === this.tokenPhonetic[tokenId] &&
        queryPhonetic[q]!.length >= 2
      ) {
        value = PHONETIC_AGREEMENT;
      }
      if (value < TOKEN_FLOOR) value = 0;
      memo[q]!.set(tokenId, value);
      return value;
    };

    const best = new Map<number, { nameIndex: number; nameScore: number }>();
    for (const nameIndex of candidates) {
      const candidate = this.names[nameIndex]!;
      const nameScore = this.nameScore(queryTokens, queryLength, candidate, similarity);
      if (nameScore < thresholds.report) continue;
      const previous = best.get(candidate.entry);
      if (!previous || previous.nameScore < nameScore) best.set(candidate.entry, { nameIndex, nameScore });
    }

    const reports: MatchReport[] = [];
    for (const [entryIndex, { nameIndex, nameScore }] of best) {
      const entry = this.entries[entryIndex]!;
      const { adjustment, agreed, disagreed } = secondaryFields(query, entry);
      const score = Math.max(0, Math.min(1, nameScore + adjustment));
      if (score < thresholds.report) continue;
      reports.push({
        source: entry.source,
        entryId: entry.id,
        matchedName: this.names[nameIndex]!.name,
        primaryName: entry.names[0]!,
        nameScore: round(nameScore),
        score: round(score),
        agreed,
        disagreed,
      });
    }
    // Every entry at or above the report threshold: a common name can match several, and review sees them all.
    return reports.sort((a, b) => b.score - a.score).slice(0, 50);
  }

  private nameScore(
    queryTokens: string[],
    queryLength: number,
    candidate: IndexedName,
    similarity: (q: number, tokenId: number) => number,
  ): number {
    const tokens = candidate.tokens;
    // Query -> entry: how much of the query's name the entry has.
    let forward = 0;
    const backwardBest = new Float64Array(tokens.length);
    for (let q = 0; q < queryTokens.length; q++) {
      let top = 0;
      for (let t = 0; t < tokens.length; t++) {
        const value = similarity(q, tokens[t]!);
        if (value > top) top = value;
        if (value > backwardBest[t]!) backwardBest[t] = value;
      }
      forward += top * queryTokens[q]!.length;
    }
    forward /= queryLength;
    // Entry -> query: how much of the entry's name the query has; one token of a three-or-more-token name may be
    // missing (a middle name left out) without cost.
    let backward = 0;
    let length = candidate.length;
    let worst = -1;
    if (tokens.length >= 3 && queryTokens.length >= 2 && queryTokens.length < tokens.length) {
      let worstValue = Infinity;
      for (let t = 0; t < tokens.length; t++) {
        if (backwardBest[t]! < worstValue) {
          worstValue = backwardBest[t]!;
          worst = t;
        }
      }
      length -= this.tokenText[tokens[worst]!]!.length;
    }
    for (let t = 0; t < tokens.length; t++) {
      if (t !== worst) backward += backwardBest[t]! * this.tokenText[tokens[t]!]!.length;
    }
    backward /= length;
    return forward + backward === 0 ? 0 : (2 * forward * backward) / (forward + backward);
  }
}

function popcount(value: number): number {
  let count = 0;
  for (let v = value; v !== 0; v &= v - 1) count += 1;
  return count;
}

function round(value: number): number {
  return Math.round(value * 1000) / 1000;
}

function secondaryFields(
  query: ScreeningQuery,
  entry: ListEntry,
): { adjustment: number; agreed: SecondaryField[]; disagreed: SecondaryField[] } {
  let adjustment = 0;
  const agreed: SecondaryField[] = [];
  const disagreed: SecondaryField[] = [];
  if (query.kind && entry.kind !== 'vessel' && entry.kind !== 'aircraft') {
    if (query.kind === entry.kind) agreed.push('kind');
    else {
      adjustment -= 0.1;
      disagreed.push('kind');
    }
  }
  if (query.dateOfBirth && entry.datesOfBirth.length > 0) {
    const exact = entry.datesOfBirth.some((date) => date === query.dateOfBirth);
    const year = Number(query.dateOfBirth.slice(0, 4));
    const sameYear = entry.datesOfBirth.some((date) => Number(date.slice(0, 4)) === year);
    const near = entry.datesOfBirth.some((date) => Math.abs(Number(date.slice(0, 4)) - year) <= 1);
    if (exact || sameYear) {
      adjustment += exact ? 0.05 : 0.03;
      agreed.push('date_of_birth');
    } else if (!near) {
      adjustment -= 0.12;
      disagreed.push('date_of_birth');
    }
  }
  if (query.nationality && entry.nationalities.length > 0) {
    const code = countryCode(query.nationality);
    if (code && entry.nationalities.includes(code)) {
      adjustment += 0.03;
      agreed.push('nationality');
    } else {
      adjustment -= 0.05;
      disagreed.push('nationality');
    }
  }
  if (query.country && (entry.countries.length > 0 || entry.nationalities.length > 0)) {
    const code = countryCode(query.country);
    if (code && (entry.countries.includes(code) || entry.nationalities.includes(code))) {
      adjustment += 0.02;
      agreed.push('country');
    } else if (entry.countries.length > 0) {
      adjustment -= 0.02;
      disagreed.push('country');
    }
  }
  return { adjustment, agreed, disagreed };
}

/** The kind a screening subject has, for the kind comparison. */
export function subjectKind(kind: EntryKind): ScreeningQuery['kind'] {
  return kind === 'individual' ? 'individual' : 'entity';
}

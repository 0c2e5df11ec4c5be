// A sanctions-list entry as every loader produces it, whatever the publisher's format.

export const listSources = ['ofac_sdn', 'ofac_consolidated', 'un', 'eu', 'uk'] as const;
export type ListSource = (typeof listSources)[number];
/** The sources a loader exists for. */
export const loadableListSources = [
  'ofac_sdn',
  'ofac_consolidated',
  'un',
  'eu',
  'uk',
] as const satisfies readonly ListSource[];

export type EntryKind = 'individual' | 'entity' | 'vessel' | 'aircraft';

export interface ListEntry {
  source: ListSource;
  /** The publisher's own id (OFAC uid, UN DATAID, EU logicalId, UK UniqueID). */
  id: string;
  kind: EntryKind;
  /** The primary name first, then every alias, as the list spells them (any script). */
  names: string[];
  /** `YYYY`, `YYYY-MM` or `YYYY-MM-DD`. */
  datesOfBirth: string[];
  /** ISO 3166-1 alpha-2 where the list's text could be mapped, else the normalised text. */
  nationalities: string[];
  /** Countries of address, same encoding as nationalities. */
  countries: string[];
  programs: string[];
}

/** An entry a loader starts when the list opens one, its fields filled as the list's elements follow. */
export function emptyEntry(source: ListSource, kind: EntryKind = 'entity'): ListEntry {
  return { source, id: '', kind, names: [], datesOfBirth: [], nationalities: [], countries: [], programs: [] };
}

/** One parse of one list: its entries and what the publisher says about the file. */
export interface ParsedList {
  source: ListSource;
  /** The publication date the file states, when it states one. */
  publishedAt: string | null;
  entries: ListEntry[];
}

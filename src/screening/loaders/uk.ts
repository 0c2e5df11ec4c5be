// The UK Sanctions List published by the FCDO, XML format (root <Designations>): one <Designation> per designated
// person, entity or ship, with <UniqueID> (e.g. RUS0001), <RegimeName>, <IndividualEntityShip>, its names in <Names>
// (each <Name> in parts Name1..Name6, Name6 the family name or an entity's whole name; <NameType> Primary Name or
// Alias), names in other scripts in <NonLatinNames>, <Addresses> with <AddressCountry>, and for individuals
// <IndividualDetails> with <DOB> (dd/mm/yyyy, 00 for an unknown day or month) and <Nationality>.
import { countryCode } from '../countries';
import { emptyEntry, type EntryKind, type ListEntry, type ParsedList } from '../entries';
import { ListFormatError, parseXml, type XmlInput } from './xml';

const kinds: Record<string, EntryKind> = { individual: 'individual', entity: 'entity', ship: 'vessel' };
const nameParts = ['Name1', 'Name2', 'Name3', 'Name4', 'Name5', 'Name6'] as const;

/** `14/03/1961` -> `1961-03-14`; `00/00/1961` -> `1961`; `00/03/1961` -> `1961-03`; null when there is no year. */
export function ukDate(text: string): string | null {
  const parts = /^(\d{1,2})\/(\d{1,2})\/(\d{4})$/.exec(text.trim());
  if (!parts) return /^\d{4}$/.test(text.trim()) ? text.trim() : null;
  const [, day, month, year] = parts as unknown as [string, string, string, string];
  if (Number(month) === 0) return year;
  if (Number(day) === 0) return `${year}-${month.padStart(2, '0')}`;
  return `${year}-${month.padStart(2, '0')}-${day.padStart(2, '0')}`;
}

export async function loadUkXml(input: XmlInput): Promise<ParsedList> {
  const entries: ListEntry[] = [];
  let publishedAt: string | null = null;
  let sawRoot = false;
  let entry: ListEntry | null = null;
  let name: Partial<Record<(typeof nameParts)[number], string>> = {};

  await parseXml(input, {
    open(element, _attributes, path) {
      if (path.length === 0) {
        if (element !== 'Designations') {
          throw new ListFormatError(`UK XML: root element is <${element}>, not <Designations>`);
        }
        sawRoot = true;
        return;
      }
      if (element === 'Designation') {
        entry = emptyEntry('uk');
      } else if (element === 'Name') name = {};
    },
    close(element, text, path) {
      const parent = path[path.length - 1];
      if (element === 'DateGenerated' && parent === 'Designations') publishedAt = text || null;
      const current = entry as ListEntry | null;
      if (!current) return;
      const add = (list: string[], value: string | null) => {
        if (value && !list.includes(value)) list.push(value);
      };
      if ((nameParts as readonly string[]).includes(element) && parent === 'Name') {
        name[element as (typeof nameParts)[number]] = text;
      } else if (element === 'Name') {
        add(
          current.names,
          nameParts
            .map((part) => name[part])
            .filter(Boolean)
            .join(' '),
        );
      } else if (element === 'NameNonLatinScript') add(current.names, text);
      else if (element === 'UniqueID' && parent === 'Designation') current.id = text;
      else if (element === 'RegimeName') add(current.programs, text);
      else if (element === 'IndividualEntityShip') current.kind = kinds[text.toLowerCase()] ?? 'entity';
      else if (element === 'DOB') add(current.datesOfBirth, ukDate(text));
      else if (element === 'Nationality') add(current.nationalities, countryCode(text));
      else if (element === 'AddressCountry') add(current.countries, countryCode(text));
      else if (element === 'Designation') {
        if (!current.id || current.names.length === 0)
          throw new ListFormatError('UK XML: a Designation without UniqueID or Name');
        entries.push(current);
        entry = null;
      }
    },
  });
  if (!sawRoot) throw new ListFormatError('UK XML: empty document');
  return { source: 'uk', publishedAt, entries };
}

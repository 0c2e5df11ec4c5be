// The UN Security Council consolidated list (consolidated.xml, root <CONSOLIDATED_LIST>): <INDIVIDUAL> with
// FIRST_NAME..FOURTH_NAME, NAME_ORIGINAL_SCRIPT, <INDIVIDUAL_ALIAS>, <NATIONALITY><VALUE>, dates of birth as
// DATE or YEAR; <ENTITY> with FIRST_NAME as its name and <ENTITY_ALIAS>.
import { countryCode } from '../countries';
import { emptyEntry, type ListEntry, type ParsedList } from '../entries';
import { isoDate, ListFormatError, parseXml, type XmlInput } from './xml';

const nameParts = ['FIRST_NAME', 'SECOND_NAME', 'THIRD_NAME', 'FOURTH_NAME'];

export async function loadUnConsolidatedXml(input: XmlInput): Promise<ParsedList> {
  const entries: ListEntry[] = [];
  let publishedAt: string | null = null;
  let sawRoot = false;
  let entry: ListEntry | null = null;
  let parts: string[] = [];

  await parseXml(input, {
    open(name, attributes, path) {
      if (path.length === 0) {
        if (name !== 'CONSOLIDATED_LIST')
          throw new ListFormatError(`UN XML: root element is <${name}>, not <CONSOLIDATED_LIST>`);
        sawRoot = true;
        publishedAt = attributes.dateGenerated ?? null;
      }
      if (name === 'INDIVIDUAL' || name === 'ENTITY') {
        entry = emptyEntry('un', name === 'INDIVIDUAL' ? 'individual' : 'entity');
        parts = ['', '', '', ''];
      }
    },
    close(name, text, path) {
      const current = entry as ListEntry | null;
      if (!current) return;
      const parent = path[path.length - 1];
      const part = nameParts.indexOf(name);
      if (part !== -1 && (parent === 'INDIVIDUAL' || parent === 'ENTITY')) parts[part] = text;
      else if (name === 'DATAID') current.id = text;
      else if (name === 'UN_LIST_TYPE' && text) current.programs.push(text);
      else if ((name === 'ALIAS_NAME' || name === 'NAME_ORIGINAL_SCRIPT') && text) current.names.push(text);
      else if (name === 'VALUE' && parent === 'NATIONALITY' && text) {
        const code = countryCode(text);
        if (code) current.nationalities.push(code);
      } else if (name === 'COUNTRY' && (parent === 'INDIVIDUAL_ADDRESS' || parent === 'ENTITY_ADDRESS') && text) {
        const code = countryCode(text);
        if (code) current.countries.push(code);
      } else if ((name === 'DATE' || name === 'YEAR') && parent === 'INDIVIDUAL_DATE_OF_BIRTH' && text) {
        const date = isoDate(text);
        if (date) current.datesOfBirth.push(date);
      } else if (name === 'INDIVIDUAL' || name === 'ENTITY') {
        const primary = parts.filter(Boolean).join(' ');
        if (primary) current.names.unshift(primary);
        if (!current.id || current.names.length === 0)
          throw new ListFormatError(`UN XML: an ${name} without DATAID or name`);
        entries.push(current);
        entry = null;
      }
    },
  });
  if (!sawRoot) throw new ListFormatError('UN XML: empty document');
  return { source: 'un', publishedAt, entries };
}

// OFAC's SDN list and its consolidated (non-SDN) list in the classic XML format (sdn.xml, consolidated.xml;
// schema sdn.xsd / "SDN XML", root <sdnList>): one <sdnEntry> per designation, its names in
// firstName/lastName, aliases in <akaList>, dates of birth, nationalities, citizenships and addresses in lists.
import { countryCode } from '../countries';
import { emptyEntry, type EntryKind, type ListEntry, type ListSource, type ParsedList } from '../entries';
import { isoDate, ListFormatError, parseXml, type XmlInput } from './xml';

const kinds: Record<string, EntryKind> = {
  individual: 'individual',
  entity: 'entity',
  vessel: 'vessel',
  aircraft: 'aircraft',
};

export async function loadOfacSdnXml(
  input: XmlInput,
  source: Extract<ListSource, 'ofac_sdn' | 'ofac_consolidated'>,
): Promise<ParsedList> {
  const entries: ListEntry[] = [];
  let publishedAt: string | null = null;
  let sawRoot = false;
  let entry: ListEntry | null = null;
  // The entry's own name and the alias being read, each as [firstName, lastName].
  const names: Record<'sdnEntry' | 'aka', [string, string]> = { sdnEntry: ['', ''], aka: ['', ''] };

  await parseXml(input, {
    open(name, _attributes, path) {
      if (path.length === 0) {
        if (name !== 'sdnList') throw new ListFormatError(`OFAC XML: root element is <${name}>, not <sdnList>`);
        sawRoot = true;
      }
      if (name === 'sdnEntry') {
        entry = emptyEntry(source);
      }
      if (name === 'sdnEntry' || name === 'aka') names[name] = ['', ''];
    },
    close(name, text, path) {
      const parent = path[path.length - 1];
      if (name === 'Publish_Date' && text) publishedAt = text;
      const current = entry as ListEntry | null;
      if (!current) return;
      if ((name === 'firstName' || name === 'lastName') && (parent === 'sdnEntry' || parent === 'aka')) {
        names[parent][name === 'firstName' ? 0 : 1] = text;
      } else if (name === 'uid' && parent === 'sdnEntry') current.id = text;
      else if (name === 'sdnType') current.kind = kinds[text.toLowerCase()] ?? 'entity';
      else if (name === 'program' && text) current.programs.push(text);
      else if (name === 'dateOfBirth') {
        const date = isoDate(text);
        if (date) current.datesOfBirth.push(date);
      } else if (name === 'country' && text) {
        const code = countryCode(text);
        if (!code) return;
        if (parent === 'nationality' || parent === 'citizenship') current.nationalities.push(code);
        else if (parent === 'address') current.countries.push(code);
      } else if (name === 'aka' || name === 'sdnEntry') {
        const full = names[name].filter(Boolean).join(' ');
        if (full) name === 'sdnEntry' ? current.names.unshift(full) : current.names.push(full);
        if (name === 'sdnEntry') {
          if (!current.id || current.names.length === 0)
            throw new ListFormatError('OFAC XML: an sdnEntry without uid or name');
          entries.push(current);
          entry = null;
        }
      }
    },
  });
  if (!sawRoot) throw new ListFormatError('OFAC XML: empty document');
  return { source, publishedAt, entries };
}

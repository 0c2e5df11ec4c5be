// The EU consolidated financial sanctions list, XML format 1.1 (xmlFullSanctionsList_1_1, root <export> in
// namespace http://eu.europa.ec/fpi/fsd/export): one <sanctionEntity> per designation, every name a <nameAlias>
// (wholeName, in each language and script the EU publishes), <birthdate>, <citizenship> and <address> with
// countryIso2Code, <subjectType code="person|enterprise">.
import { countryCode } from '../countries';
import type { EntryKind, ListEntry, ParsedList } from '../entries';
import { isoDate, ListFormatError, parseXml, type XmlInput } from './xml';

const kinds: Record<string, EntryKind> = {
  person: 'individual',
  enterprise: 'entity',
  vessel: 'vessel',
  aircraft: 'aircraft',
};

export async function loadEuXml(input: XmlInput): Promise<ParsedList> {
  const entries: ListEntry[] = [];
  let publishedAt: string | null = null;
  let sawRoot = false;
  let entry: ListEntry | null = null;

  const country = (attributes: Record<string, string>): string | null =>
    attributes.countryIso2Code && attributes.countryIso2Code !== '00'
      ? countryCode(attributes.countryIso2Code)
      : attributes.countryDescription && attributes.countryDescription !== 'UNKNOWN'
        ? countryCode(attributes.countryDescription)
        : null;

  await parseXml(input, {
    open(name, attributes, path) {
      if (path.length === 0) {
        if (name !== 'export') throw new ListFormatError(`EU XML: root element is <${name}>, not <export>`);
        sawRoot = true;
        publishedAt = attributes.generationDate ?? null;
        return;
      }
      if (name === 'sanctionEntity') {
        entry = {
          source: 'eu',
          id: attributes.logicalId ?? attributes.euReferenceNumber ?? '',
          kind: 'entity',
          names: [],
          datesOfBirth: [],
          nationalities: [],
          countries: [],
          programs: attributes.euReferenceNumber ? [attributes.euReferenceNumber.replace(/\.\d+$/, '')] : [],
        };
        return;
      }
      const current = entry as ListEntry | null;
      if (!current || path[path.length - 1] !== 'sanctionEntity') return;
      if (name === 'subjectType') current.kind = kinds[attributes.code ?? ''] ?? 'entity';
      else if (name === 'nameAlias') {
        const whole =
          attributes.wholeName ||
          [attributes.firstName, attributes.middleName, attributes.lastName].filter(Boolean).join(' ');
        if (whole && !current.names.includes(whole)) current.names.push(whole);
      } else if (name === 'birthdate') {
        const date = isoDate(attributes.birthdate || attributes.year || '');
        if (date) current.datesOfBirth.push(date);
      } else if (name === 'citizenship') {
        const code = country(attributes);
        if (code) current.nationalities.push(code);
      } else if (name === 'address') {
        const code = country(attributes);
        if (code) current.countries.push(code);
      }
    },
    close(name) {
      const current = entry as ListEntry | null;
      if (name !== 'sanctionEntity' || !current) return;
      if (!current.id || current.names.length === 0)
        throw new ListFormatError('EU XML: a sanctionEntity without logicalId or nameAlias');
      entries.push(current);
      entry = null;
    },
  });
  if (!sawRoot) throw new ListFormatError('EU XML: empty document');
  return { source: 'eu', publishedAt, entries };
}

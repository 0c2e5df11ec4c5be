// Streaming XML for the list loaders (saxes): the published lists run to tens of megabytes, so they are read
// chunk by chunk and only the entry being built is kept, never a document tree.
import { SaxesParser } from 'saxes';

export type XmlInput = string | AsyncIterable<string | Uint8Array>;

export interface XmlHandler {
  /** An element opens; `path` holds the names of its ancestors (outermost first), local names without prefix. */
  open(name: string, attributes: Record<string, string>, path: readonly string[]): void;
  /** An element closes with its own text (trimmed; text of child elements excluded). */
  close(name: string, text: string, path: readonly string[]): void;
}

/** Thrown for a file that is not well-formed XML or not the expected format: the load keeps the previous version. */
export class ListFormatError extends Error {
  override name = 'ListFormatError';
}

function localName(name: string): string {
  const colon = name.indexOf(':');
  return colon === -1 ? name : name.slice(colon + 1);
}

export async function parseXml(input: XmlInput, handler: XmlHandler): Promise<void> {
  const parser = new SaxesParser();
  const path: string[] = [];
  const texts: string[] = [];
  let failure: Error | null = null;
  parser.on('error', (error) => {
    failure ??= new ListFormatError(error.message);
  });
  parser.on('opentag', (tag) => {
    const name = localName(tag.name);
    const attributes: Record<string, string> = {};
    for (const [key, value] of Object.entries(tag.attributes)) attributes[localName(key)] = String(value);
    handler.open(name, attributes, path);
    path.push(name);
    texts.push('');
  });
  const onText = (text: string): void => {
    if (texts.length > 0) texts[texts.length - 1] += text;
  };
  parser.on('text', onText);
  parser.on('cdata', onText);
  parser.on('closetag', () => {
    const name = path.pop()!;
    const text = texts.pop()!.trim();
    handler.close(name, text, path);
  });
  if (typeof input === 'string') {
    parser.write(input);
  } else {
    const decoder = new TextDecoder();
    for await (const chunk of input) {
      parser.write(typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true }));
      if (failure) break;
    }
  }
  if (!failure) parser.close();
  if (failure) throw failure;
}

/** `12 Nov 1956`, `1956`, `circa 1956`, `1956-11-12`, `12/11/1956` -> ISO (`YYYY`, `YYYY-MM-DD`); null when no year. */
export function isoDate(text: string): string | null {
  const iso = /^(\d{4})(?:-(\d{2})(?:-(\d{2}))?)?/.exec(text.trim());
  if (iso) return [iso[1], iso[2], iso[3]].filter(Boolean).join('-');
  const months = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];
  const dayMonthYear = /(\d{1,2}) ([A-Za-z]{3})[a-z]* (\d{4})/.exec(text);
  if (dayMonthYear) {
    const month = months.indexOf(dayMonthYear[2]!.toLowerCase()) + 1;
    if (month > 0) return `${dayMonthYear[3]}-${String(month).padStart(2, '0')}-${dayMonthYear[1]!.padStart(2, '0')}`;
  }
  const year = /\b(1[89]\d{2}|20\d{2})\b/.exec(text);
  return year ? year[1]! : null;
}

// Name normalisation shared by the index and the query: the same function on both sides, so a variation the
// normaliser removes (case, accents, script, punctuation, honorifics, company forms, token order) cannot
// make two spellings of one name differ.
import jaroWinkler from 'talisman/metrics/jaro-winkler';
import type * as Transliteration from 'transliteration';

// Titles and honorifics that lists and customers add or leave out.
const honorifics = new Set([
  'mr',
  'mrs',
  'ms',
  'miss',
  'dr',
  'prof',
  'sir',
  'dame',
  'lord',
  'lady',
  'sheikh',
  'shaykh',
  'sheik',
  'haji',
  'hajji',
  'al-haj',
  'mullah',
  'maulana',
  'mawlawi',
  'general',
  'gen',
  'colonel',
  'col',
  'major',
  'captain',
  'capt',
  'admiral',
  'lt',
  'brigadier',
  'imam',
  'emir',
  'amir',
  'prince',
  'princess',
  'king',
  'president',
  'minister',
  'herr',
  'frau',
  'monsieur',
  'madame',
  'senor',
  'senora',
  'don',
  'dona',
  'jr',
  'sr',
  'ii',
  'iii',
]);

// Company-form suffixes: "Acme Trading LLC" and "ACME TRADING L.L.C." are one name.
const companyForms = new Set([
  'ltd',
  'limited',
  'llc',
  'llp',
  'lp',
  'inc',
  'incorporated',
  'corp',
  'corporation',
  'co',
  'company',
  'plc',
  'gmbh',
  'ag',
  'sa',
  'sarl',
  'sas',
  'srl',
  'spa',
  'bv',
  'nv',
  'oy',
  'ab',
  'as',
  'aps',
  'kg',
  'ooo',
  'oao',
  'zao',
  'pao',
  'ao',
  'jsc',
  'pjsc',
  'ojsc',
  'cjsc',
  'fze',
  'fzco',
  'fzc',
  'fzllc',
  'pte',
  'pty',
  'bhd',
  'sdn',
  'kk',
  'lda',
  'ltda',
  'sociedad',
  'anonima',
  'the',
  'establishment',
  'est',
]);

const longCompanyForms = ['company', 'limited', 'corporation', 'incorporated', 'establishment'];

const ascii = /^[\u0000-\u007f]*$/;

// Required at the first name that needs it: a process that screens only ASCII names never loads its tables.
let transliterate: typeof Transliteration.transliterate | undefined;
const toLatin = (text: string) =>
  (transliterate ??= (require('transliteration') as typeof Transliteration).transliterate)(text);

/** The tokens of a name: Latin script, lower case, no accents or punctuation, no honorifics or company forms, sorted. */
export function nameTokens(name: string): string[] {
  const composed = name.normalize('NFKC');
  // Transliteration leaves ASCII as it is, and most names on the lists and in requests are ASCII.
  const latin = (ascii.test(composed) ? composed : toLatin(composed))
    .normalize('NFD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    // "L.L.C." and "O'Brien" become one token each; other punctuation separates words.
    .replace(/(\p{L})[.'’`](?=\p{L})/gu, '$1')
    .replace(/[^\p{L}\p{N}]+/gu, ' ');
  const tokens = latin.split(' ').filter((token) => token.length > 0);
  const kept = tokens.filter((token) => !honorifics.has(token) && !companyForms.has(token));
  // A misspelt long company form at the end ("Limted", "Compnay") is still one.
  const last = kept[kept.length - 1];
  if (kept.length > 1 && last && last.length >= 6 && longCompanyForms.some((form) => jaroWinkler(form, last) >= 0.9))
    kept.pop();
  // A name made only of such words ("The Company") keeps them rather than becoming empty.
  return (kept.length > 0 ? kept : tokens).sort();
}

/** The normalised form as one string (sorted tokens, single spaces). */
export function normaliseName(name: string): string {
  return nameTokens(name).join(' ');
}

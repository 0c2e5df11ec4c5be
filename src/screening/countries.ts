// Lists write countries as names ("Russian Federation", "Iran (Islamic Republic of)") or ISO codes; both sides of a
// comparison are mapped to alpha-2 so that a subject's alpha-3 country agrees with a list's name for it.
import countries from 'i18n-iso-countries';
import english from 'i18n-iso-countries/langs/en.json';

countries.registerLocale(english);

/** Alpha-2 for an alpha-2, alpha-3 or English name; the lower-cased text when it is none of those. */
export function countryCode(text: string): string | null {
  const trimmed = text.trim();
  if (!trimmed) return null;
  const upper = trimmed.toUpperCase();
  if (/^[A-Z]{2}$/.test(upper) && countries.isValid(upper)) return upper;
  if (/^[A-Z]{3}$/.test(upper) && countries.isValid(upper)) return countries.alpha3ToAlpha2(upper) ?? upper;
  const withoutParens = trimmed.replace(/\s*\(.*\)\s*/g, ' ').trim();
  const byName = countries.getAlpha2Code(trimmed, 'en') ?? countries.getAlpha2Code(withoutParens, 'en');
  if (byName) return byName;
  const known = extraNames[trimmed.toLowerCase()] ?? extraNames[withoutParens.toLowerCase()];
  return known ?? trimmed.toLowerCase();
}

// Spellings the lists use that i18n-iso-countries does not know.
const extraNames: Record<string, string> = {
  "democratic people's republic of korea": 'KP',
  'korea, north': 'KP',
  'north korea': 'KP',
  'korea, south': 'KR',
  iran: 'IR',
  burma: 'MM',
  'russian federation': 'RU',
  'syrian arab republic': 'SY',
  'lao people’s democratic republic': 'LA',
  'united kingdom of great britain and northern ireland': 'GB',
};

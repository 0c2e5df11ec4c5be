// Lists write countries as names ("Russian Federation", "Iran (Islamic Republic of)") or ISO codes; both sides of a
// comparison are mapped to alpha-2 so that a subject's alpha-3 country agrees with a list's name for it.
// The library without its locales (its main module registers every language it has): English is all we read.
import countries from 'i18n-iso-countries/index';
import english from 'i18n-iso-countries/langs/en.json';

countries.registerLocale(english);

// A list says the same few hundred country texts over and over, and a lookup by name scans every country's names:
// each text is mapped once. Bounded, as a screened subject's country is free text.
const known = new Map<string, string | null>();
const knownLimit = 2_000;

/** Alpha-2 for an alpha-2, alpha-3 or English name; the lower-cased text when it is none of those. */
export function countryCode(text: string): string | null {
  const cached = known.get(text);
  if (cached !== undefined) return cached;
  const code = lookUpCountryCode(text);
  if (known.size >= knownLimit) known.clear();
  known.set(text, code);
  return code;
}

function lookUpCountryCode(text: string): string | null {
  const trimmed = text.trim();
  if (!trimmed) return null;
  const upper = trimmed.toUpperCase();
  if (/^[A-Z]{2}$/.test(upper) && countries.isValid(upper)) return upper;
  if (/^[A-Z]{3}$/.test(upper) && countries.isValid(upper)) return countries.alpha3ToAlpha2(upper) ?? upper;
  const withoutParens = trimmed.replace(/\s*\(.*\)\s*/g, ' ').trim();
  const byName = countries.getAlpha2Code(trimmed, 'en') ?? countries.getAlpha2Code(withoutParens, 'en');
  if (byName) return byName;
  const extra = extraNames[trimmed.toLowerCase()] ?? extraNames[withoutParens.toLowerCase()];
  return extra ?? trimmed.toLowerCase();
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

// talisman ships no types; the two functions used here.
declare module 'talisman/metrics/jaro-winkler' {
  const jaroWinkler: ((a: string, b: string) => number) & { similarity(a: string, b: string): number };
  export = jaroWinkler;
}
declare module 'talisman/phonetics/double-metaphone' {
  const doubleMetaphone: (word: string) => [string, string];
  export = doubleMetaphone;
}

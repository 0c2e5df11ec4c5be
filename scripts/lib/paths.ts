import path from 'node:path';

export const projectRoot = path.resolve(__dirname, '..', '..');

/**
 * TypeScript 7's compiler (the native one, package `typescript-native`), which checks and builds the project. The
 * package `typescript` (5.9) stays for the tools that load TypeScript's JavaScript API (openapi-typescript,
 * dependency-cruiser, Prisma), which TypeScript 7 does not have.
 */
export const typescriptCompiler = path.join(
  path.dirname(require.resolve('typescript-native/package.json')),
  'bin',
  'tsc',
);

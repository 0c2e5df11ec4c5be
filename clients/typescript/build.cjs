// Builds the package (`npm run build`, and `npm pack` through prepack) with the project's TypeScript 7 compiler:
// CommonJS in dist/cjs and ES modules in dist/esm, each with its declarations. The generated schema.d.ts is copied as is
// (tsc does not emit declaration files it is given), each folder says its module type, and the ES build's relative
// imports get the `.js` extension Node's ES module loader needs.
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const here = __dirname;
const dist = path.join(here, 'dist');
const cjs = path.join(dist, 'cjs');
const esm = path.join(dist, 'esm');
fs.rmSync(dist, { recursive: true, force: true });
// The package `typescript-native` is TypeScript 7 (scripts/lib/paths.ts typescriptCompiler).
const tsc = path.join(path.dirname(require.resolve('typescript-native/package.json', { paths: [here] })), 'bin', 'tsc');
for (const config of ['tsconfig.cjs.json', 'tsconfig.esm.json'])
  execFileSync(process.execPath, [tsc, '-p', path.join(here, config)], { stdio: 'inherit' });

for (const [out, type] of [
  [cjs, 'commonjs'],
  [esm, 'module'],
]) {
  fs.copyFileSync(path.join(here, 'schema.d.ts'), path.join(out, 'schema.d.ts'));
  fs.writeFileSync(path.join(out, 'package.json'), `${JSON.stringify({ type })}\n`);
}
for (const file of fs.readdirSync(esm)) {
  if (!file.endsWith('.js') && !file.endsWith('.d.ts')) continue;
  const full = path.join(esm, file);
  const source = fs.readFileSync(full, 'utf8');
  fs.writeFileSync(
    full,
    source.replace(/(from\s+['"])(\.\/[^'"]+?)(['"])/g, (_, a, spec, b) => `${a}${spec}.js${b}`),
  );
}
fs.chmodSync(path.join(cjs, 'cli.js'), 0o755);

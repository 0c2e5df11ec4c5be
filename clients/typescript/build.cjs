// Builds the package (`npm run build`, and `npm pack` through prepack): TypeScript compiled twice, to CommonJS
// (dist/cjs) and to ES modules (dist/esm), with type declarations. The generated schema.d.ts is copied as is (tsc does
// not emit declaration files it is given), each folder says its module type, and the ES build's relative imports get
// the `.js` extension Node's ES module loader needs.
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const here = __dirname;
const dist = path.join(here, 'dist');
fs.rmSync(dist, { recursive: true, force: true });
const tsc = require.resolve('typescript/bin/tsc', { paths: [here] });
for (const config of ['tsconfig.cjs.json', 'tsconfig.esm.json']) {
  execFileSync(process.execPath, [tsc, '-p', path.join(here, config)], { stdio: 'inherit' });
}
for (const [folder, type] of [
  ['cjs', 'commonjs'],
  ['esm', 'module'],
]) {
  const out = path.join(dist, folder);
  fs.copyFileSync(path.join(here, 'schema.d.ts'), path.join(out, 'schema.d.ts'));
  fs.writeFileSync(path.join(out, 'package.json'), `${JSON.stringify({ type })}\n`);
}
const esm = path.join(dist, 'esm');
for (const file of fs.readdirSync(esm)) {
  if (!file.endsWith('.js') && !file.endsWith('.d.ts')) continue;
  const full = path.join(esm, file);
  const source = fs.readFileSync(full, 'utf8');
  fs.writeFileSync(full, source.replace(/(from\s+['"])(\.\/[^'"]+?)(['"])/g, (_, a, spec, b) => `${a}${spec}.js${b}`));
}
fs.chmodSync(path.join(dist, 'cjs', 'cli.js'), 0o755);

// Builds the package (`npm run build`, and `npm pack` through prepack): TypeScript compiled to CommonJS (dist/cjs) by
// tsc, which type-checks and writes the declarations, and to ES modules (dist/esm) by transpiling each file on its own
// (the ES build needs no second type check: `isolatedModules` makes tsc refuse what a file-by-file transpile could get
// wrong), with the same declarations. The generated schema.d.ts is copied as is (tsc does not emit declaration files it
// is given), each folder says its module type, and the ES build's relative imports get the `.js` extension Node's ES
// module loader needs.
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const here = __dirname;
const dist = path.join(here, 'dist');
const cjs = path.join(dist, 'cjs');
const esm = path.join(dist, 'esm');
fs.rmSync(dist, { recursive: true, force: true });
const tsc = require.resolve('typescript/bin/tsc', { paths: [here] });
const config = path.join(here, 'tsconfig.cjs.json');
execFileSync(process.execPath, [tsc, '-p', config], { stdio: 'inherit' });

const ts = require(require.resolve('typescript', { paths: [here] }));
const { config: cjsConfig } = ts.readConfigFile(config, ts.sys.readFile);
const { options } = ts.convertCompilerOptionsFromJson(cjsConfig.compilerOptions, here);
fs.mkdirSync(esm, { recursive: true });
for (const file of cjsConfig.files) {
  const source = fs.readFileSync(path.join(here, file), 'utf8');
  const { outputText } = ts.transpileModule(source, {
    fileName: file,
    compilerOptions: { ...options, module: ts.ModuleKind.ES2022, declaration: false },
  });
  fs.writeFileSync(path.join(esm, file.replace(/\.ts$/, '.js')), outputText);
}
for (const file of fs.readdirSync(cjs)) {
  if (file.endsWith('.d.ts')) fs.copyFileSync(path.join(cjs, file), path.join(esm, file));
}

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

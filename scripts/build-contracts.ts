// `npm run contracts:build`: compiles contracts/ with the pinned solc and writes the artifact the code deploys.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { compileSandboxStablecoin } from './lib/contracts';
import { projectRoot } from './lib/paths';

const artifact = compileSandboxStablecoin();
const file = path.join(projectRoot, 'src/providers/evm/artifacts/SandboxStablecoin.json');
writeFileSync(file, `${JSON.stringify(artifact, null, 2)}\n`);
console.log(
  `wrote ${path.relative(projectRoot, file)} (${artifact.compiler}, ${(artifact.bytecode.length - 2) / 2} bytes)`,
);

// Compiles the sandbox chain's contracts (contracts/*.sol) with the pinned solc-js (the `solc` devDependency: a
// WebAssembly build, no download) and OpenZeppelin's sources from node_modules. `npm run contracts:build` writes the
// artifact the code deploys (src/providers/evm/artifacts/); test/anvil.test.ts compiles again and compares, so the
// committed bytecode is always the one the committed source and compiler make.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { projectRoot } from './paths';

export interface ContractArtifact {
  contractName: string;
  compiler: string;
  abi: unknown[];
  bytecode: `0x${string}`;
}

/** The compiler settings: part of what the bytecode is, so changing them is a change of the artifact. */
const settings = {
  optimizer: { enabled: true, runs: 200 },
  evmVersion: 'cancun',
  outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object'] } },
};

export function compileSandboxStablecoin(): ContractArtifact {
  // Required at run time: the compiler is a devDependency, needed only to build and to check the artifact.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const solc = require('solc') as { version(): string; compile(input: string, options: object): string };
  const source = 'contracts/SandboxStablecoin.sol';
  const input = {
    language: 'Solidity',
    sources: { [source]: { content: readFileSync(path.join(projectRoot, source), 'utf8') } },
    settings,
  };
  const findImports = (importPath: string) => {
    try {
      return { contents: readFileSync(require.resolve(importPath, { paths: [projectRoot] }), 'utf8') };
    } catch {
      return { error: `not found: ${importPath}` };
    }
  };
  const output = JSON.parse(solc.compile(JSON.stringify(input), { import: findImports })) as {
    errors?: Array<{ severity: string; formattedMessage: string }>;
    contracts: Record<string, Record<string, { abi: unknown[]; evm: { bytecode: { object: string } } }>>;
  };
  const errors = (output.errors ?? []).filter((error) => error.severity === 'error');
  if (errors.length > 0) throw new Error(errors.map((error) => error.formattedMessage).join('\n'));
  const compiled = output.contracts[source]?.SandboxStablecoin;
  if (!compiled) throw new Error('solc produced no SandboxStablecoin');
  return {
    contractName: 'SandboxStablecoin',
    compiler: `solc-js ${solc.version()}`,
    abi: compiled.abi,
    bytecode: `0x${compiled.evm.bytecode.object}`,
  };
}

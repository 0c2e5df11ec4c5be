// How the API and the worker processes run everywhere: production (package.json start:api and start:worker,
// Dockerfile, docker-compose.yml, which repeat these; test/startup.test.ts checks they agree), `npm run dev` and
// `npm run bench`.
// - A young generation of 4 MB per semi-space instead of V8's heap-sized default (16 MB here), in the main thread
//   and in the worker's workflow thread: the resident memory of a loaded worker went from 540 to 390 MB and the
//   API's from 430 to 250 MB, with no measurable CPU cost (docs/benchmark.md).
// - glibc keeps at most two malloc arenas: the Temporal core's threads otherwise each grow their own (another
//   50 MB resident under load).
// - The worker's old generation is capped at 192 MB (each isolate: its main thread and its workflow thread): V8's
//   heap-sized default (about 4 GB here) let garbage accumulate, and the worker's peak memory grew with every
//   settlement (315 MB after 500, `npm run bench`). Its live heap is small and bounded (the workflow cache,
//   WORKER_MAX_CACHED_WORKFLOWS; the activity slots); raise the cap with the cache. The API keeps V8's default: the
//   size of what it holds follows its requests (bodies up to 1 MB, concurrent).
const serviceNodeArgs = ['--max-semi-space-size=4'];
export const nodeArgsOf = {
  api: serviceNodeArgs,
  worker: [...serviceNodeArgs, '--max-old-space-size=192'],
} as const;
export const serviceEnv = { MALLOC_ARENA_MAX: '2' };

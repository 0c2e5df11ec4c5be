// How the API and the worker processes run everywhere: production (package.json start:api and start:worker,
// Dockerfile, docker-compose.yml, which repeat these; test/startup.test.ts checks they agree), `npm run dev` and
// `npm run bench`.
// - A young generation of 4 MB per semi-space instead of V8's heap-sized default (16 MB here), in the main thread
//   and in the worker's workflow thread: the resident memory of a loaded worker went from 540 to 390 MB and the
//   API's from 430 to 250 MB, with no measurable CPU cost (README "Benchmark").
// - glibc keeps at most two malloc arenas: the Temporal core's threads otherwise each grow their own (another
//   50 MB resident under load).
export const serviceNodeArgs = ['--max-semi-space-size=4'];
export const serviceEnv = { MALLOC_ARENA_MAX: '2' };

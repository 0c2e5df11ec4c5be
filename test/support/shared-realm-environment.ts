// jest's node environment with one V8 context (realm) for all the test files a jest worker runs, instead of a new
// one per file: test/support/module-sharing-runtime.cjs shares the packages a worker has loaded among its files, and
// a package's objects must be of the realm of the code using them (an error from viem an `instanceof Error` in the
// project's code, a zod schema's arrays `Array.isArray`). Each file still gets its own copy of the project's modules,
// its own `process` object (with its own copy of the environment variables) and its own test globals.
// TEST_NO_MODULE_SHARING=1: a realm per file, as jest makes it (to measure what sharing saves).
// See docs/development.md "Test suite time".
import type { EnvironmentContext, JestEnvironmentConfig } from '@jest/environment';
import { TestEnvironment as NodeEnvironment } from 'jest-environment-node';
import type { Context } from 'node:vm';

export const moduleSharing = process.env.TEST_NO_MODULE_SHARING !== '1';

type RealmGlobal = InstanceType<typeof NodeEnvironment>['global'];

/** The realm of this jest worker's files: the first file's, kept for the next ones. */
let workerRealm: { context: Context; global: RealmGlobal } | undefined;

/** What packages register on the global object once per realm, which each file does anew (registering it again). */
function forgetPackageGlobals(global: RealmGlobal): void {
  // OpenTelemetry's API: a tracer provider registered while one is (src/observability/tracing.ts) is refused.
  delete (global as unknown as Record<symbol, unknown>)[Symbol.for('opentelemetry.js.api.1')];
  // zod's registry of schema metadata: the file's schemas are built, and their ids registered, again.
  (global as unknown as { __zod_globalRegistry?: { clear(): void } }).__zod_globalRegistry?.clear();
}

export class SharedRealmEnvironment extends NodeEnvironment {
  constructor(config: JestEnvironmentConfig, context: EnvironmentContext) {
    // jest's environment makes a realm for the file; from the second file on, only its process object is kept.
    super(config, context);
    if (!moduleSharing) return;
    if (!workerRealm) {
      workerRealm = { context: this.context!, global: this.global };
    } else {
      workerRealm.global.process = this.global.process;
      this.context = workerRealm.context;
      this.global = workerRealm.global;
    }
    forgetPackageGlobals(this.global);
  }

  override async teardown(): Promise<void> {
    if (!moduleSharing) return super.teardown();
    // Not jest's teardown, which would empty the global object of the realm the next file runs in. The context stays
    // too: a package's lazy require after the file's end still runs in it (module-sharing-runtime.cjs).
    this.fakeTimers?.dispose();
    this.fakeTimersModern?.dispose();
  }
}

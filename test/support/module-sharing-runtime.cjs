// jest's runtime, sharing the packages (node_modules) a jest worker has loaded among the test files it runs: each
// file still gets its own copy of the project's modules, as jest gives it, but not of viem, Kysely, zod, the Temporal
// SDK and the packages under them, which every file loaded and evaluated again (most of a file's loading). They are
// shared within one JavaScript realm: the files of a worker run in one V8 context (shared-realm-environment.ts), so an
// error, array or promise a package made in an earlier file is still an instance of this file's classes.
// TEST_NO_MODULE_SHARING=1 (jest.config.js): jest's own runtime. See docs/development.md "Test suite time".
const Runtime = require('jest-runtime').default;

/** The run's workflow bundle, whose source map the global set-up writes beside it (`<bundle>.map`). */
const workflowBundle = process.env.TEST_WORKFLOW_BUNDLE;

/** Path -> module object of the packages loaded so far in this jest worker. */
const sharedModules = new Map();
/** The runtime of the test file running now: a shared package's later require() goes through it. */
let current;

const isPackage = (modulePath) => /[\\/]node_modules[\\/]/.test(modulePath);

class ModuleSharingRuntime extends Runtime {
  constructor(...args) {
    super(...args);
    current = this;
    // A stack through the workflow bundle (a workflow's error, the SDK's trial run of the bundle at each worker's
    // start) is mapped to the workflows' sources with the bundle's map: registered as jest registers the maps of the
    // files it transforms, it is parsed once per jest worker instead of read from the bundle again in every file.
    if (workflowBundle) this.getSourceMaps().set(workflowBundle, `${workflowBundle}.map`);
  }

  requireModuleOrMock(from, moduleName) {
    // A package loaded by an earlier file that requires lazily (at a call, not at its load) does so through the
    // runtime that loaded it, torn down since: the current file's runtime loads it instead.
    if (this !== current && this.testState.isTornDown()) return current.requireModuleOrMock(from, moduleName);
    if (moduleName === '@jest/globals' || this._resolution.isCoreModule(moduleName)) {
      return super.requireModuleOrMock(from, moduleName);
    }
    let modulePath;
    try {
      modulePath = this._resolution.resolveCjs(from, moduleName);
    } catch {
      return super.requireModuleOrMock(from, moduleName); // jest's own error for a module it cannot find
    }
    if (!isPackage(modulePath) || this.mockState.shouldMockCjs(from, moduleName).shouldMock) {
      return super.requireModuleOrMock(from, moduleName);
    }
    const shared = sharedModules.get(modulePath);
    if (shared) return shared.exports;
    // After the file's end (a timer or a request that outlived it), jest refuses to load a module. A package's lazy
    // require is loaded all the same: the package is the next files' too, and the half-loaded state a refusal leaves
    // in it (iconv-lite's table of encodings, say) would stay with them.
    const exports = this.testState.isTornDown()
      ? this.requireModule(from, moduleName)
      : super.requireModuleOrMock(from, moduleName);
    const loaded = this.registries.getActiveCjsRegistry().get(modulePath);
    // Not while it is still loading (a require cycle): its exports are not complete yet.
    if (loaded?.loaded) sharedModules.set(modulePath, loaded);
    return exports;
  }
}

module.exports = ModuleSharingRuntime;

import path from 'node:path';

export const projectRoot = path.resolve(__dirname, '..', '..');
export const workflowBundlePath = path.join(projectRoot, '.cache', 'test', 'workflow-bundle.js');
/** The bundle's source map, also inline in it (module-sharing-runtime.cjs registers it as `<bundle>.map`). */
export const workflowBundleSourceMapPath = `${workflowBundlePath}.map`;
/** The OpenAPI documents the harnesses of one jest run share (harness.ts openApiDocumentOf). */
/** Where a jest run bundles the entry points its tests start (scripts/lib/entry-points.ts), a folder per run. */
export const entryBundlesDir = path.join(projectRoot, '.cache', 'test', 'entry-bundles');
export const openApiDocumentCache = path.join(projectRoot, '.cache', 'test', 'openapi');
export const testArtifactsDir = path.join(projectRoot, 'test-artifacts');
/** The pools of started Temporal test servers, one folder per jest run (temporal-servers.ts). */
export const temporalServerPools = path.join(projectRoot, '.cache', 'test', 'temporal-servers');
/** The pools of namespaces on a run's Temporal dev server, one folder per jest run (dev-server.ts). */
export const temporalNamespacePools = path.join(projectRoot, '.cache', 'test', 'temporal-namespaces');

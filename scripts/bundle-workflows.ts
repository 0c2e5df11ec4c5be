// Bundles the workflow code once (webpack, via the Temporal SDK) so the worker starts without
// bundling: `npm run build` writes dist/workflow-bundle.js; tests write .cache/test/workflow-bundle.js.
import { bundleWorkflowCode } from '@temporalio/worker';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { projectRoot } from './lib/paths';
import { workflowTracingModule } from '../src/observability/temporal';
import { workflowPreloadModules } from '../src/temporal/worker';

/** Writes the bundle to `target`; returns its source map (JSON), which stays inline in the bundle too. */
export async function writeWorkflowBundle(
  target: string,
  workflowsPath = path.join(projectRoot, 'workflows', 'index.ts'),
): Promise<string> {
  const { code } = await bundleWorkflowCode({
    workflowsPath,
    // Trace context through workflows (the worker hands their spans to its tracer, or drops them without one).
    workflowInterceptorModules: [workflowTracingModule],
    preloadModules: workflowPreloadModules,
    logger: { trace() {}, debug() {}, info() {}, warn: console.warn, error: console.error, log() {} } as never,
  });
  mkdirSync(path.dirname(target), { recursive: true });
  const { bundle, sourceMap } = withoutSourcesContent(code);
  writeFileSync(target, bundle);
  return sourceMap;
}

/**
 * The bundle with its inline source map kept for stack traces but without the sources' text, which the worker shows
 * only with `showStackTraceSources` (off here): every worker decodes and parses the map when it loads the bundle, and
 * the text is most of it.
 */
function withoutSourcesContent(code: string): { bundle: string; sourceMap: string } {
  const marker = '//# sourceMappingURL=data:application/json;charset=utf-8;base64,';
  const at = code.lastIndexOf(marker);
  if (at < 0) throw new Error('the workflow bundle has no inline source map');
  const map = JSON.parse(Buffer.from(code.slice(at + marker.length).trim(), 'base64').toString('utf8')) as {
    sourcesContent?: unknown;
  };
  delete map.sourcesContent;
  const sourceMap = JSON.stringify(map);
  return { bundle: `${code.slice(0, at)}${marker}${Buffer.from(sourceMap).toString('base64')}\n`, sourceMap };
}

if (require.main === module) {
  const target = path.join(projectRoot, 'dist', 'workflow-bundle.js');
  writeWorkflowBundle(target, path.join(projectRoot, 'dist', 'workflows', 'index.js'))
    .then(() => console.error(`workflow bundle written to ${path.relative(projectRoot, target)}`))
    .catch((error: unknown) => {
      console.error(error);
      process.exit(1);
    });
}

// Runs once per jest run: bundles the workflow code so that every test file's worker reuses it, and empties the
// folder where the harnesses share the OpenAPI document (built from this run's code by the first that needs it).
import { mkdirSync, rmSync } from 'node:fs';
import { writeWorkflowBundle } from '../../scripts/bundle-workflows';
import { openApiDocumentCache, workflowBundlePath } from './paths';

export default async function globalSetup(): Promise<void> {
  if (!process.env.DATABASE_URL) {
    throw new Error('DATABASE_URL is not set: run the tests with `npm test`, which prepares the database.');
  }
  rmSync(openApiDocumentCache, { recursive: true, force: true });
  mkdirSync(openApiDocumentCache, { recursive: true });
  await writeWorkflowBundle(workflowBundlePath);
}

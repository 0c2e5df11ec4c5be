// Runs once per jest run: bundles the workflow code so that every test file's worker reuses it.
import { writeWorkflowBundle } from '../../scripts/bundle-workflows';
import { workflowBundlePath } from './paths';

export default async function globalSetup(): Promise<void> {
  if (!process.env.DATABASE_URL) {
    throw new Error('DATABASE_URL is not set: run the tests with `npm test`, which prepares the database.');
  }
  await writeWorkflowBundle(workflowBundlePath);
}

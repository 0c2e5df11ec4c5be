import path from 'node:path';

export const projectRoot = path.resolve(__dirname, '..', '..');
export const workflowBundlePath = path.join(projectRoot, '.cache', 'test', 'workflow-bundle.js');
export const testArtifactsDir = path.join(projectRoot, 'test-artifacts');

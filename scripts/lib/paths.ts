import path from 'node:path';

export const projectRoot = path.resolve(__dirname, '..', '..');

// Durable storage of uploaded documents. The local-disk store is the default (DOCUMENT_STORAGE_DIR);
// an object store (S3, GCS) implements the same interface.
import { copyFile, mkdir, open, readFile, rename, rm } from 'node:fs/promises';
import path from 'node:path';

export interface DocumentStore {
  /** Where uploads are streamed before they are stored (src/http/multipart.ts). */
  readonly stagingDir: string;
  /** Stores a staged file under a key (taking it over) and returns when it is durable. */
  putFile(key: string, stagedPath: string): Promise<void>;
  get(key: string): Promise<Buffer>;
  delete(key: string): Promise<void>;
}

export class LocalDiskDocumentStore implements DocumentStore {
  /** Inside the root: storing a staged file is a rename on the same file system. */
  readonly stagingDir: string;

  constructor(private readonly root: string) {
    this.stagingDir = path.join(root, '.staging');
  }

  private pathOf(key: string): string {
    if (!/^[A-Za-z0-9/_-]+$/.test(key) || key.includes('..')) throw new Error(`invalid storage key ${key}`);
    return path.join(this.root, key);
  }

  async putFile(key: string, stagedPath: string): Promise<void> {
    const target = this.pathOf(key);
    await mkdir(path.dirname(target), { recursive: true });
    // fsync, then rename: a crash never leaves a half-written document under its key.
    const handle = await open(stagedPath, 'r+');
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
    try {
      await rename(stagedPath, target);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EXDEV') throw error;
      const temporary = `${target}.${process.pid}.tmp`; // staged on another file system: copy, then rename
      await copyFile(stagedPath, temporary);
      const copy = await open(temporary, 'r+');
      await copy.sync().finally(() => copy.close());
      await rename(temporary, target);
    }
  }

  async get(key: string): Promise<Buffer> {
    return readFile(this.pathOf(key));
  }

  async delete(key: string): Promise<void> {
    await rm(this.pathOf(key), { force: true });
  }
}

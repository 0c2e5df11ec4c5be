// Reads a multipart/form-data body holding one file part and a few text fields, with limits. The file is
// streamed to a staging file on disk (hashed and measured on the way), never held in memory; the staging file is
// removed when the response is finished, unless the document store moved it into place before.
import Busboy from 'busboy';
import type { Context } from 'koa';
import { createHash, randomUUID } from 'node:crypto';
import { createWriteStream, mkdirSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { Transform } from 'node:stream';
import { ApiError } from './errors';

/** Bytes kept from the start of a file: enough to recognise its type (src/domain/file-types.ts). */
const HEAD_BYTES = 64;

/** An uploaded file on disk. Its path is private: idempotency fingerprints a file by name, size and hash only. */
export class StagedFile {
  readonly #path: string;

  constructor(
    stagedPath: string,
    readonly fileName: string | null,
    readonly sizeBytes: number,
    readonly sha256: string,
    readonly head: Buffer,
  ) {
    this.#path = stagedPath;
  }

  get path(): string {
    return this.#path;
  }
}

export interface SingleFileUpload {
  file?: StagedFile;
  fields: Record<string, string>;
}

export interface UploadLimits {
  fileField: string;
  textFields: string[];
  maxFileBytes: number;
  /** Folder of staging files; on the document store's file system, so that storing is a rename. */
  stagingDir: string;
}

const MAX_TEXT_FIELD_BYTES = 64 * 1024;

export async function readSingleFileUpload(ctx: Context, limits: UploadLimits): Promise<SingleFileUpload> {
  if (!ctx.is('multipart/form-data')) {
    throw new ApiError(
      'unsupported_media_type',
      'Send the document as multipart/form-data with a `file` part and a `metadata` part.',
    );
  }
  return new Promise<SingleFileUpload>((resolve, reject) => {
    let busboy: Busboy.Busboy;
    try {
      busboy = Busboy({
        headers: ctx.req.headers,
        limits: {
          fileSize: limits.maxFileBytes,
          files: 2,
          fields: limits.textFields.length + 2,
          fieldSize: MAX_TEXT_FIELD_BYTES,
        },
      });
    } catch {
      reject(ApiError.invalidParam('body', 'is not a valid multipart/form-data body (missing boundary?)'));
      return;
    }
    const upload: SingleFileUpload = { fields: {} };
    let fileRead: Promise<void> = Promise.resolve();
    let fileStarted = false;
    let failure: ApiError | null = null;
    const fail = (error: ApiError) => {
      failure ??= error;
    };

    busboy.on('file', (name, stream, info) => {
      if (name !== limits.fileField) {
        fail(ApiError.invalidParam(name, `is not a known part; send the document in \`${limits.fileField}\``));
        stream.resume();
        return;
      }
      if (fileStarted) {
        fail(ApiError.invalidParam(limits.fileField, 'only one document can be uploaded per call'));
        stream.resume();
        return;
      }
      fileStarted = true;
      mkdirSync(limits.stagingDir, { recursive: true, mode: 0o700 });
      const stagedPath = path.join(limits.stagingDir, `${randomUUID()}.part`);
      ctx.res.once('close', () => void rm(stagedPath, { force: true }));
      const hash = createHash('sha256');
      let size = 0;
      const heads: Buffer[] = [];
      const measure = new Transform({
        transform(chunk: Buffer, _encoding, done) {
          hash.update(chunk);
          if (size < HEAD_BYTES) heads.push(chunk.subarray(0, HEAD_BYTES - size));
          size += chunk.length;
          done(null, chunk);
        },
      });
      stream.on('limit', () =>
        fail(new ApiError('payload_too_large', `The file exceeds ${limits.maxFileBytes / (1024 * 1024)} MB.`)),
      );
      fileRead = pipeline(stream, measure, createWriteStream(stagedPath, { mode: 0o600 })).then(() => {
        // No text column can store NUL: drop it from the name rather than refuse a good document.
        const fileName = info.filename?.replace(/\u0000/g, '') ?? null;
        upload.file = new StagedFile(stagedPath, fileName, size, hash.digest('hex'), Buffer.concat(heads));
      });
      fileRead.catch(() => fail(ApiError.invalidParam('body', 'could not be read completely')));
    });
    busboy.on('field', (name, value, info) => {
      if (!limits.textFields.includes(name)) {
        fail(ApiError.invalidParam(name, 'is not a known part'));
      } else if (info.valueTruncated) {
        fail(ApiError.invalidParam(name, `exceeds ${MAX_TEXT_FIELD_BYTES} bytes`));
      } else if (value.includes('\u0000')) {
        fail(ApiError.invalidParam(name, 'must not contain the NUL character (\\u0000)'));
      } else if (name in upload.fields) {
        fail(ApiError.invalidParam(name, 'was sent more than once'));
      } else {
        upload.fields[name] = value;
      }
    });
    busboy.on('filesLimit', () =>
      fail(ApiError.invalidParam(limits.fileField, 'only one document can be uploaded per call')),
    );
    busboy.on('fieldsLimit', () => fail(ApiError.invalidParam('body', 'has too many parts')));
    busboy.on('error', () =>
      reject(failure ?? ApiError.invalidParam('body', 'is not a valid multipart/form-data body')),
    );
    busboy.on('close', () => {
      void fileRead.catch(() => undefined).then(() => (failure ? reject(failure) : resolve(upload)));
    });
    ctx.req.pipe(busboy);
  });
}

// Reads a multipart/form-data body holding one file part and a few text fields, with limits.
import Busboy from 'busboy';
import type { Context } from 'koa';
import { ApiError } from './errors';

export interface SingleFileUpload {
  file?: { bytes: Buffer; fileName: string | null };
  fields: Record<string, string>;
}

export interface UploadLimits {
  fileField: string;
  textFields: string[];
  maxFileBytes: number;
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
    let failure: ApiError | null = null;
    const fail = (error: ApiError) => {
      failure ??= error;
    };

    busboy.on('file', (name, stream, info) => {
      // A body cut short (no closing boundary) errors the file's stream as well as busboy: without a listener that
      // error would be thrown as an uncaught exception and stop the process. busboy's own 'error' answers 400.
      stream.on('error', () => fail(ApiError.invalidParam('body', 'is not a valid multipart/form-data body')));
      if (name !== limits.fileField) {
        fail(ApiError.invalidParam(name, `is not a known part; send the document in \`${limits.fileField}\``));
        stream.resume();
        return;
      }
      if (upload.file) {
        fail(ApiError.invalidParam(limits.fileField, 'only one document can be uploaded per call'));
        stream.resume();
        return;
      }
      const chunks: Buffer[] = [];
      // No text column can store NUL: drop it from the name rather than refuse a good document.
      upload.file = { bytes: Buffer.alloc(0), fileName: info.filename?.replace(/\u0000/g, '') ?? null };
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('limit', () =>
        fail(new ApiError('payload_too_large', `The file exceeds ${limits.maxFileBytes / (1024 * 1024)} MB.`)),
      );
      fileRead = new Promise((done) => {
        stream.on('end', () => {
          if (upload.file) upload.file.bytes = Buffer.concat(chunks);
          done();
        });
        stream.on('error', () => done());
      });
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
      void fileRead.then(() => (failure ? reject(failure) : resolve(upload)));
    });
    ctx.req.pipe(busboy);
  });
}

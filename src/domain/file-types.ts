// Uploaded files are recognised by their content (magic numbers), never by name or declared type.

export interface DetectedFileType {
  mime: string;
  extension: string;
}

const signatures: { mime: string; extension: string; matches: (bytes: Buffer) => boolean }[] = [
  { mime: 'application/pdf', extension: 'pdf', matches: (b) => b.subarray(0, 5).toString('latin1') === '%PDF-' },
  {
    mime: 'image/jpeg',
    extension: 'jpg',
    matches: (b) => b.length >= 3 && b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff,
  },
  {
    mime: 'image/png',
    extension: 'png',
    matches: (b) => b.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])),
  },
  {
    mime: 'image/webp',
    extension: 'webp',
    matches: (b) => b.subarray(0, 4).toString('latin1') === 'RIFF' && b.subarray(8, 12).toString('latin1') === 'WEBP',
  },
  {
    mime: 'image/heic',
    extension: 'heic',
    matches: (b) =>
      b.subarray(4, 8).toString('latin1') === 'ftyp' &&
      ['heic', 'heix', 'mif1'].includes(b.subarray(8, 12).toString('latin1')),
  },
];

export function detectFileType(bytes: Buffer): DetectedFileType | null {
  const found = signatures.find((signature) => signature.matches(bytes));
  return found ? { mime: found.mime, extension: found.extension } : null;
}

/** A file a partner or customer uploaded, staged on disk by the HTTP side (src/http/multipart.ts). */
export interface UploadedFile {
  readonly path: string;
  readonly fileName: string | null;
  readonly sizeBytes: number;
  readonly sha256: string;
  /** The first bytes, enough for detectFileType. */
  readonly head: Buffer;
}

/** One uploaded file (absent when the request had none) and the text fields sent with it. */
export interface SingleFileUpload {
  file?: UploadedFile;
  fields: Record<string, string>;
}

// Scenario 5, bad input: a property-based fuzzer (fast-check) sends malformed requests to every operation of the
// running API's GET /openapi.json: broken path ids (unknown, malformed, undecodable percent-escapes), garbage query
// strings and cursors, wrong or missing credentials and headers, broken JSON bodies (unknown fields, wrong types,
// non-objects, invalid or truncated JSON, wrong content types, oversize), abusive JSON bodies (nesting around and far
// beyond the depth limit, strings of up to a megabyte, thousands of keys, numbers a double cannot hold, exotic Unicode
// escaped and invalid UTF-8 sent raw) and broken multipart uploads, plus a few requests with broken HTTP framing. Every answer must be below 500, every error in the documented error shape,
// every response documented for its operation (status and body schema), every write refused, and nothing may change:
// the partner's rows (counted per table, and the content of the tables writes would touch) are the same afterwards.
import fc from 'fast-check';
import { WebhookReceiver } from '../../../test/support/webhook-receiver';
import { buildWorld, files, idsForPathParam, multipart, MultipartPart, PartnerWorld, validBody } from '../fixtures';
import { errorShapeProblem, HttpOutcome, HttpRequest } from '../http';
import { ApiDescription, describeApi, fillPath, Operation } from '../openapi';
import { RunSize, ScenarioReport } from '../report';
import { partnerState } from '../invariants';
import { ChaosSystem } from '../system';
import { MAX_JSON_DEPTH } from '../../../src/http/limits';
import { waitUntil } from '../../lib/wait';

const CONCURRENCY = 4;

interface FuzzCase {
  operation: Operation | null;
  /** What was broken, for the failure message. */
  description: string;
  request?: HttpRequest;
  /** Bytes written to the socket as they are (broken framing). */
  raw?: Buffer;
  /** A write that must be refused (4xx, or the hosted page's redirect with an error). */
  mustRefuse: boolean;
}

// ---- values ----

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** Header values node can send: latin1 without control characters. */
const latin1 = (maxLength: number) =>
  fc.string({
    unit: fc
      .integer({ min: 0x20, max: 0xff })
      .filter((code) => code !== 0x7f)
      .map((code) => String.fromCharCode(code)),
    maxLength,
  });

const oddStrings = fc.constantFrom(
  '',
  ' ',
  'null',
  'undefined',
  'NaN',
  '-1',
  '0',
  '1e309',
  '9'.repeat(400),
  '\u0000',
  'a'.repeat(5000),
  '<script>alert(1)</script>',
  "' OR 1=1 --",
  '${jndi:ldap://x}',
  '../../etc/passwd',
  '__proto__',
  'constructor',
  '\ud800',
  '🙂'.repeat(50),
);

const garbageString = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'grapheme', maxLength: 20 }),
  fc.string({ unit: 'binary', maxLength: 20 }),
  oddStrings,
);

/** Path segments sent as they are: undecodable or surprising escapes. */
const rawPathGarbage = fc.constantFrom(
  '%',
  '%zz',
  '%E0%A4%A',
  '%00',
  '%2F',
  '%2e%2e',
  '..',
  '%C0%AF',
  '%FF',
  '%u0041',
  '+',
  '%252F',
  '%0A',
  'a%20b',
);

/**
 * Percent-encodes every byte of the UTF-8 form except those `keep` matches (encodeURIComponent throws on lone
 * surrogates; these become U+FFFD, as a client would send them).
 */
function percentEncode(text: string, keep = /[A-Za-z0-9\-_.~]/): string {
  return [...Buffer.from(text, 'utf8')]
    .map((byte) => {
      const char = String.fromCharCode(byte);
      return byte < 0x80 && keep.test(char) ? char : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
    })
    .join('');
}

const jsonGarbage: fc.Arbitrary<Json> = fc.oneof(
  fc.jsonValue({ maxDepth: 3 }),
  garbageString,
  fc.integer(),
  fc.double(),
  // A fresh [] or {} each time: the same instance placed twice in one body (by the noise, then as a field's value)
  // could be put inside itself, a circle JSON.stringify refuses.
  fc
    .constantFrom<Json>(Number.MAX_SAFE_INTEGER * 10, -0, 1e300, true, false, null, [], {})
    .map((value) => structuredClone(value)),
) as fc.Arbitrary<Json>;

// ---- JSON bodies ----

type PathTo = Array<string | number>;

function pathsOf(
  value: Json,
  path: PathTo = [],
  into: { objects: PathTo[]; leaves: PathTo[] } = { objects: [], leaves: [] },
) {
  if (Array.isArray(value)) value.forEach((item, index) => pathsOf(item, [...path, index], into));
  else if (value !== null && typeof value === 'object') {
    into.objects.push(path);
    for (const [key, item] of Object.entries(value)) pathsOf(item, [...path, key], into);
  } else into.leaves.push(path);
  return into;
}

function at(value: Json, path: PathTo): Json {
  return path.reduce<Json>((current, key) => (current as Record<string, Json>)[key as string] as Json, value);
}

/** The value at `path` in `value`, or undefined where the path does not exist there. */
function expectedAt(value: Json, path: PathTo): Json | undefined {
  let current: Json | undefined = value;
  for (const key of path) {
    if (current === null || typeof current !== 'object') return undefined;
    current = (current as Record<string | number, Json>)[key as string];
  }
  return current;
}

function setAt(value: Json, path: PathTo, replacement: Json | undefined): void {
  const parent = at(value, path.slice(0, -1)) as Record<string | number, Json>;
  const key = path[path.length - 1] as string | number;
  if (replacement === undefined) {
    if (Array.isArray(parent)) parent.splice(key as number, 1);
    else delete parent[key];
  } else parent[key] = replacement;
}

/** A value of another JSON type than `value` (never null: optional fields may accept null). */
function otherType(value: Json, pick: number): Json {
  const candidates: Json[] =
    typeof value === 'string'
      ? [42, true, {}, [], [value]]
      : typeof value === 'number'
        ? [String(value), true, {}, []]
        : typeof value === 'boolean'
          ? [String(value), 1, {}, []]
          : ['x', 1, true];
  return candidates[pick % candidates.length] as Json;
}

interface BodyBreak {
  text: string;
  /** Sent instead of `text` when set: bytes that are not UTF-8 text. */
  bytes?: Buffer;
  contentType: string;
  description: string;
}

/** A JSON body that cannot be valid (one guaranteed breakage) plus random noise. */
function brokenJsonBody(valid: Json): fc.Arbitrary<BodyBreak> {
  const { leaves } = pathsOf(valid);
  const noise = fc.array(fc.tuple(fc.constantFrom('delete', 'replace', 'add'), fc.nat(), jsonGarbage, garbageString), {
    maxLength: 2,
  });
  const applyNoise = (body: Json, steps: Array<[string, number, Json, string]>): string[] => {
    const done: string[] = [];
    for (const [kind, index, value, key] of steps) {
      const { objects: objs, leaves: lvs } = pathsOf(body);
      if (kind === 'add' && objs.length > 0) {
        const target = at(body, objs[index % objs.length] as PathTo) as Record<string, Json>;
        Object.defineProperty(target, key, { value, enumerable: true, configurable: true, writable: true });
        done.push(`add ${JSON.stringify(key).slice(0, 30)}`);
      } else if (lvs.length > 0) {
        const path = lvs[index % lvs.length] as PathTo;
        setAt(body, path, kind === 'delete' ? undefined : value);
        done.push(`${kind} ${path.join('.')}`);
      }
    }
    return done;
  };
  const clone = () => structuredClone(valid);
  // Not a plain lower-case word: it could be a real (optional) field of the schema.
  const unknownKey = fc.oneof(
    garbageString.filter((key) => key !== '' && !/^[a-z_0-9]{1,40}$/.test(key)),
    fc.constantFrom('__proto__', 'constructor', 'prototype', 'id', 'partner_id', 'status', 'created_at', 'extra'),
  );
  return fc.oneof(
    // Noise first, then the breakage (noise applied after could undo it).
    fc.tuple(fc.nat(), unknownKey, jsonGarbage, noise).map(([index, key, value, steps]) => {
      const body = clone();
      const noisy = applyNoise(body, steps);
      const objectsNow = pathsOf(body).objects;
      const path = objectsNow[index % objectsNow.length] as PathTo;
      const target = at(body, path) as Record<string, Json>;
      // An own property even for __proto__ (JSON.parse on the server makes it one too).
      Object.defineProperty(target, key, { value, enumerable: true, configurable: true, writable: true });
      return {
        text: JSON.stringify(body),
        contentType: 'application/json',
        description: `unknown field ${[...path, key].join('.')}; ${noisy.join('; ')}`,
      };
    }),
    fc.tuple(fc.nat(), fc.nat(), noise).map(([index, pick, steps]) => {
      const body = clone();
      const noisy = applyNoise(body, steps);
      const leavesNow = pathsOf(body).leaves;
      const path = (leavesNow.length > 0 ? leavesNow : leaves)[index % Math.max(leavesNow.length, 1)] as PathTo;
      // The wrong type of what the operation expects there (the valid body's value), not of what a noise step put
      // there: a number's wrong type is a string, which would make a noisy field valid again.
      if (leavesNow.length > 0) setAt(body, path, otherType(expectedAt(valid, path) ?? at(body, path), pick));
      else Object.defineProperty(body, 'x', { value: 1, enumerable: true });
      return {
        text: JSON.stringify(body),
        contentType: 'application/json',
        description: `wrong type at ${path.join('.')}; ${noisy.join('; ')}`,
      };
    }),
    fc
      .oneof(fc.array(jsonGarbage, { maxLength: 3 }), garbageString, fc.integer(), fc.constantFrom(null, true, false))
      .map((value) => ({ text: JSON.stringify(value), contentType: 'application/json', description: 'not an object' })),
    fc.nat().map((cut) => {
      const text = JSON.stringify(valid);
      return {
        // Never empty: an empty body is an absent one, which the API rightly reads as {} (valid where every field is optional).
        text: text.slice(0, 1 + (cut % (text.length - 1))),
        contentType: 'application/json',
        description: 'truncated JSON',
      };
    }),
    fc
      .oneof(
        garbageString.filter((text) => text.trim() !== '' && text.trim() !== '{}'),
        fc.constantFrom(
          "{'a': 1}",
          '{"a": NaN}',
          '{"a": 1} trailing',
          '[1, 2',
          '{"a": 1,}',
          '// comment\n{}',
          '\ufeff{}',
          '{"a":"\\u00"}',
        ),
      )
      .filter((text) => {
        try {
          JSON.parse(text);
          return false;
        } catch {
          return true;
        }
      })
      .map((text) => ({ text, contentType: 'application/json', description: 'invalid JSON' })),
    fc
      .oneof(
        fc.constantFrom(
          'text/plain',
          'application/x-www-form-urlencoded',
          'multipart/form-data; boundary=x',
          'application/xml',
          'application/json-patch',
        ),
        latin1(40).filter((type) => !/json/i.test(type)),
      )
      .map((contentType) => ({ text: JSON.stringify(valid), contentType, description: `Content-Type ${contentType}` })),
    fc.constantFrom('utf-16', 'latin1', 'x-unknown').map((charset) => ({
      text: JSON.stringify(valid).replace(/^\{/, '{"extra_unknown_field": 1,'),
      contentType: `application/json; charset=${charset}`,
      description: `charset ${charset} and an unknown field`,
    })),
  );
}

/** Rarely: a body above the 1 MB limit. */
const oversizeBody: BodyBreak = {
  text: JSON.stringify({ padding: 'x'.repeat(1_100_000) }),
  contentType: 'application/json',
  description: 'body over 1 MB',
};

// ---- abusive payloads: deep, long, wide, huge numbers, exotic Unicode ----

/** Stands for a value written into the JSON text as raw bytes (see withRaw). */
const RAW_MARKER = 'FUZZ-RAW-VALUE-3f9c1d';
/** A top-level field no operation has: each abusive body carries it, so that a write is always refused. */
const UNKNOWN_FIELD = 'fuzz_unknown_field';

/**
 * `valid` with raw JSON text (bytes, possibly not UTF-8) in place of one of its leaves, plus the unknown top-level
 * field (holding the same raw value when `inField`, else `true`), so that the write must be refused whatever the
 * raw value is.
 */
function withRaw(valid: Json, leafIndex: number, raw: Buffer, inField: boolean): { bytes: Buffer; where: string } {
  const body = structuredClone(valid);
  const { leaves } = pathsOf(body);
  const path = leaves.length > 0 ? (leaves[leafIndex % leaves.length] as PathTo) : null;
  if (path) setAt(body, path, RAW_MARKER);
  if (body !== null && typeof body === 'object' && !Array.isArray(body))
    (body as Record<string, Json>)[UNKNOWN_FIELD] = inField ? RAW_MARKER : true;
  const pieces = JSON.stringify(body).split(JSON.stringify(RAW_MARKER));
  return {
    bytes: Buffer.concat(pieces.flatMap((piece, index) => (index === 0 ? [] : [raw]).concat(Buffer.from(piece)))),
    where: `${path ? path.join('.') : '(no leaf)'}${inField ? ` and ${UNKNOWN_FIELD}` : ''}`,
  };
}

const nestedText = (kind: 'arrays' | 'objects', levels: number) =>
  kind === 'arrays' ? `${'['.repeat(levels)}1${']'.repeat(levels)}` : `${'{"a":'.repeat(levels)}1${'}'.repeat(levels)}`;

/** Around the documented limit (32 levels, the body being level 1) and far beyond it. */
const nestingLevels = fc.oneof(
  fc.integer({ min: MAX_JSON_DEPTH - 3, max: MAX_JSON_DEPTH + 2 }),
  fc.constantFrom(100, 1000, 5000, 200_000),
);

/** Numbers JSON can write and a double cannot hold (or holds surprisingly). */
const hugeNumbers = fc.constantFrom(
  '1e400',
  '-1e400',
  '1E+308',
  '1234567890123456789012345678901234567890',
  '-1234567890123456789012345678901234567890.5',
  '9007199254740993',
  '-0',
  '-0.0e-0',
  '1e-400',
  '0.' + '0'.repeat(400) + '1',
  '1' + '0'.repeat(1000),
);

/** Strings that look like text but are not what they seem (written escaped by JSON.stringify where needed). */
const exoticStrings = fc.constantFrom(
  '\ud800', // lone high surrogate
  '\udfff', // lone low surrogate
  'Ana\ud83d', // an emoji cut in half
  '\udc00\ud800', // surrogates in the wrong order
  'Ana\u202eazuoS', // right-to-left override
  '\u202d\u2066Ana\u2069', // left-to-right override and isolates
  '👨\u200d👩\u200d👧\u200d👦', // zero-width joiners
  'A\u200bn\u200ca\u2060', // zero-width space, non-joiner, word joiner
  '\ufeffAna', // byte order mark
  'Ana\u0000', // NUL
  '\u0000',
  '🙂'.repeat(200),
  '𝔄𝔫𝔞', // outside the BMP
  'e\u0301'.repeat(500), // combining marks
  'Ａｎａ', // full-width letters
  '\uffff\ufffe',
  '\udbff\udfff', // U+10FFFF, the last code point
);

/** Bytes that are not UTF-8: overlong forms, encoded surrogates, beyond U+10FFFF, truncated, stray continuations. */
const invalidUtf8 = fc.constantFrom(
  Buffer.from([0xc0, 0xaf]), // overlong '/'
  Buffer.from([0xc0, 0x80]), // overlong NUL
  Buffer.from([0xe0, 0x80, 0xaf]), // overlong '/', 3 bytes
  Buffer.from([0xf0, 0x80, 0x80, 0xaf]), // overlong '/', 4 bytes
  Buffer.from([0xed, 0xa0, 0x80]), // U+D800 encoded (CESU-8)
  Buffer.from([0xf4, 0x90, 0x80, 0x80]), // above U+10FFFF
  Buffer.from([0xe2, 0x82]), // truncated sequence
  Buffer.from([0x80, 0xbf]), // continuation bytes alone
  Buffer.from([0xff, 0xfe, 0xfd]),
);

/**
 * Bodies that abuse the parser and every walk after it rather than the schema: deep nesting (at a leaf or as the
 * whole body), very long strings (over and under the 1 MB limit, also in multi-byte characters), very many keys,
 * numbers a double cannot hold, exotic Unicode escaped and invalid UTF-8 sent raw. Each keeps an unknown field (or
 * is no JSON object at all), so a write must be refused.
 */
function abusiveJsonBody(valid: Json): fc.Arbitrary<BodyBreak> {
  const json = 'application/json';
  const raw = (leaf: number, value: Buffer, inField: boolean, what: string): BodyBreak => {
    const { bytes, where } = withRaw(valid, leaf, value, inField);
    return { text: '', bytes, contentType: json, description: `${what} at ${where}` };
  };
  const text = (value: string) => Buffer.from(value, 'utf8');
  return fc.oneof(
    fc
      .tuple(fc.nat(), fc.constantFrom<'arrays' | 'objects'>('arrays', 'objects'), nestingLevels)
      .map(([leaf, kind, levels]) => raw(leaf, text(nestedText(kind, levels)), false, `${levels} nested ${kind}`)),
    fc.tuple(fc.constantFrom<'arrays' | 'objects'>('arrays', 'objects'), nestingLevels).map(([kind, levels]) => ({
      text: nestedText(kind, levels),
      contentType: json,
      description: `the whole body ${levels} nested ${kind}`,
    })),
    fc
      .tuple(fc.nat(), fc.constantFrom(1024 * 1024, 1_000_000, 100_000), fc.constantFrom('x', '€', '🙂'))
      .map(([leaf, length, char]) =>
        raw(
          leaf,
          text(JSON.stringify(char.repeat(length / char.length))),
          false,
          `a string of ${length} units of ${char}`,
        ),
      ),
    fc.tuple(fc.nat(), fc.constantFrom(10_000, 1000)).map(([leaf, count]) => {
      const keys = Array.from({ length: count }, (_, index) => `"k${index}":${index}`).join(',');
      return raw(leaf, text(`{${keys}}`), false, `an object of ${count} keys`);
    }),
    fc.constantFrom(10_000, 1000).map((count) => {
      const keys = Array.from({ length: count }, (_, index) => `,"unknown_${index}":${index}`).join('');
      return {
        text: JSON.stringify(valid).replace(/\}$/, `${keys}}`),
        contentType: json,
        description: `${count} unknown top-level keys`,
      };
    }),
    fc
      .tuple(fc.nat(), hugeNumbers)
      .map(([leaf, number]) => raw(leaf, text(number), true, `the number ${number.slice(0, 40)}`)),
    fc.tuple(fc.nat(), exoticStrings).map(([leaf, value]) =>
      // JSON.stringify escapes lone surrogates (\ud800) and NUL (\u0000); the rest goes as UTF-8.
      raw(leaf, text(JSON.stringify(value)), true, `the string ${JSON.stringify(value).slice(0, 40)}`),
    ),
    fc
      .tuple(fc.nat(), invalidUtf8, fc.boolean())
      .map(([leaf, bytes, inString]) =>
        inString
          ? raw(
              leaf,
              Buffer.concat([text('"Ana'), bytes, text('"')]),
              true,
              `raw bytes ${bytes.toString('hex')} in a string`,
            )
          : raw(leaf, bytes, false, `raw bytes ${bytes.toString('hex')} as a value`),
      ),
  );
}

// ---- multipart uploads ----

interface Upload {
  parts: readonly MultipartPart[];
  contentType?: string;
  mutateBody?: (body: Buffer) => Buffer;
  description: string;
}

function brokenUpload(hosted: boolean): fc.Arbitrary<Upload> {
  const goodFields: MultipartPart[] = hosted
    ? [{ name: 'document_type', value: 'PROOF_OF_ADDRESS' }]
    : [{ name: 'metadata', value: JSON.stringify({ document_type: 'PROOF_OF_ADDRESS' }) }];
  const goodFile: MultipartPart = {
    name: 'file',
    file: { fileName: 'document.pdf', contentType: 'application/pdf', data: files.pdf },
  };
  const fileOf = (data: Buffer, fileName = 'document.pdf'): MultipartPart => ({
    name: 'file',
    file: { fileName, contentType: 'application/octet-stream', data },
  });
  // Not a PDF, JPEG, PNG, WEBP or HEIC: a leading letter matches no signature.
  const notADocument = garbageString.map((text) => Buffer.from(`x${text}`, 'utf8'));
  const badFields = hosted
    ? fc.oneof(
        garbageString.filter((value) => value !== '').map((value) => [{ name: 'document_type', value }]),
        fc.constant([{ name: 'document_side', value: 'FRONT' }]),
        fc.constant([] as MultipartPart[]),
      )
    : fc.oneof(
        garbageString
          .filter((value) => {
            try {
              JSON.parse(value);
              return false;
            } catch {
              return true;
            }
          })
          .map((value) => [{ name: 'metadata', value }]),
        fc
          .tuple(
            garbageString.filter((key) => key !== ''),
            jsonGarbage,
          )
          .map(([key, value]) => [
            { name: 'metadata', value: JSON.stringify({ document_type: 'PROOF_OF_ADDRESS', [`x${key}`]: value }) },
          ]),
        jsonGarbage.map((value) => [{ name: 'metadata', value: JSON.stringify({ document_type: value }) }]),
        fc
          .tuple(fc.constantFrom<'arrays' | 'objects'>('arrays', 'objects'), nestingLevels)
          .map(([kind, levels]) => [
            { name: 'metadata', value: `{"document_type":"PROOF_OF_ADDRESS","country":${nestedText(kind, levels)}}` },
          ]),
        fc.constant([] as MultipartPart[]),
      );
  const fileName = fc.oneof(
    fc.constant('document.pdf'),
    latin1(60).map((name) => name.replace(/"/g, "'")),
  );
  return fc.oneof(
    badFields.map((fields) => ({
      parts: [...fields, goodFile],
      description: `bad fields ${JSON.stringify(fields).slice(0, 80)}`,
    })),
    fc
      .tuple(notADocument, fileName)
      .map(([data, name]) => ({ parts: [...goodFields, fileOf(data, name)], description: 'file is no document' })),
    fc.constant({ parts: [...goodFields, fileOf(Buffer.alloc(0))], description: 'empty file' }),
    fc.constant({ parts: goodFields, description: 'no file' }),
    fc.constant({ parts: [...goodFields, goodFile, goodFile], description: 'two files' }),
    garbageString
      .filter(
        // A name the Content-Disposition can carry as it is: busboy reads `\` in a quoted name as an escape, so
        // `name="a\"` is an unterminated header and the part is skipped as unreadable (docs/api-decisions.md, "Multipart uploads").
        // Checked as sent: the headers go out as latin1, where a character past U+00FF keeps its low byte only
        // (U+8922 becomes `"`).
        (name) => {
          const sent = Buffer.from(name, 'latin1').toString('latin1');
          return (
            sent !== '' &&
            !/["\\\r\n]/.test(sent) &&
            !['metadata', 'file', 'document_type', 'document_side', 'country', 'beneficiary_id'].includes(sent)
          );
        },
      )
      .map((name) => ({
        parts: [...goodFields, goodFile, { name, value: 'x' }],
        description: `unknown part ${JSON.stringify(name).slice(0, 30)}`,
      })),
    fc.constant({ parts: [...goodFields, goodFile], contentType: 'multipart/form-data', description: 'no boundary' }),
    fc.constant({
      parts: [...goodFields, goodFile],
      contentType: 'multipart/form-data; boundary=other',
      description: 'wrong boundary',
    }),
    fc.constant({
      parts: [...goodFields, goodFile],
      mutateBody: (body: Buffer) => body.subarray(0, body.lastIndexOf('--', body.length - 5)),
      description: 'no closing boundary',
    }),
    fc.uint8Array({ maxLength: 300 }).map((bytes) => ({
      parts: [],
      mutateBody: () => Buffer.from(bytes),
      description: 'random bytes',
    })),
    fc.constant({
      parts: [{ ...(goodFields[0] as MultipartPart), headers: ['Content-Disposition: garbage'] }, goodFile],
      description: 'field with a broken Content-Disposition',
    }),
    fc.constant({
      parts: [
        { ...(goodFields[0] as MultipartPart), value: `${(goodFields[0] as MultipartPart).value}\u0000` },
        goodFile,
      ],
      description: 'NUL in a field',
    }),
    fc.constant({
      parts: [...goodFields, goodFile],
      contentType: 'application/json',
      description: 'multipart sent as JSON',
    }),
  );
}

// ---- query strings and cursors ----

function cursorGarbage(realCursors: string[]): fc.Arbitrary<string> {
  const base64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
  return fc.oneof(
    fc
      .tuple(
        fc.constantFrom(...realCursors),
        fc.nat(),
        fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 1 }),
      )
      .map(([cursor, index, char]) => {
        const at = index % cursor.length;
        return cursor.slice(0, at) + char + cursor.slice(at + 1);
      }),
    fc.tuple(fc.constantFrom(...realCursors), fc.nat()).map(([cursor, cut]) => cursor.slice(0, cut % cursor.length)),
    fc.constantFrom(...realCursors).map((cursor) => `${cursor}==`),
    fc.tuple(garbageString, fc.uuid()).map(([date, id]) => base64([date, id])),
    fc.tuple(fc.date({ noInvalidDate: true }), garbageString).map(([date, id]) => base64([date.toISOString(), id])),
    jsonGarbage.map(base64),
    garbageString,
  );
}

function brokenQuery(operation: Operation, realCursors: string[]): fc.Arbitrary<string> {
  const value = fc.oneof(
    garbageString,
    fc.integer().map(String),
    fc.double().map(String),
    fc.constantFrom(
      '2026-13-45',
      '2026-02-30',
      '0000-00-00',
      '2026-01-01T25:00:00Z',
      'yesterday',
      '1e3',
      '101',
      '0',
      '-5',
      '10.5',
    ),
    cursorGarbage(realCursors),
    fc.uuid(),
  );
  const key = fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom(...operation.queryParams) },
    { weight: 1, arbitrary: garbageString.filter((k) => k !== '') },
  );
  return fc
    .array(fc.tuple(key, fc.oneof(value, fc.array(value, { minLength: 2, maxLength: 3 })), fc.boolean()), {
      minLength: 1,
      maxLength: 4,
    })
    .map((entries) =>
      entries
        .flatMap(([name, values, raw]) =>
          (Array.isArray(values) ? values : [values]).map((item) =>
            // Sometimes printable ASCII goes unencoded (a stray '%' included), apart from what would end it.
            raw
              ? `${percentEncode(name)}=${percentEncode(item, /[!-~]/).replace(/[&#]/g, (char) => percentEncode(char))}`
              : `${percentEncode(name)}=${percentEncode(item)}`,
          ),
        )
        .join('&'),
    );
}

// ---- whole requests ----

function caseFor(operation: Operation, world: PartnerWorld, realCursors: string[]): fc.Arbitrary<FuzzCase> {
  const writes = operation.method === 'POST' || operation.method === 'PUT';
  const pathValues = fc.tuple(
    ...operation.pathParams.map((param) => {
      const real = idsForPathParam(operation.template, param, world);
      if (!real) throw new Error(`no fixture id for {${param}} of ${operation.operationId}`);
      return fc.oneof(
        { weight: 4, arbitrary: fc.constantFrom(...real).map((value) => ({ value, garbage: false })) },
        { weight: 2, arbitrary: fc.uuid().map((value) => ({ value, garbage: true })) },
        {
          weight: 2,
          arbitrary: garbageString
            .filter((value) => value !== '')
            .map((value) => ({ value: percentEncode(value), garbage: true })),
        },
        { weight: 1, arbitrary: rawPathGarbage.map((value) => ({ value, garbage: true })) },
      );
    }),
  );
  const auth = operation.authenticated
    ? fc.oneof(
        {
          weight: 6,
          arbitrary: fc.constant({ headers: { Authorization: world.partner.apiKey }, broken: false, description: '' }),
        },
        {
          weight: 1,
          arbitrary: fc
            .oneof(
              fc.constant({ headers: {} as Record<string, string>, description: 'no key' }),
              latin1(80).map((key) => ({ headers: { Authorization: key }, description: 'garbage key' })),
              latin1(80).map((key) => ({ headers: { Authorization: `Bearer ${key}` }, description: 'garbage bearer' })),
              fc.constant({
                headers: { Authorization: world.partner.apiKey, 'api-key': `${world.partner.apiKey}x` },
                description: 'two different keys',
              }),
              fc.constant({
                headers: { Authorization: `bearer  ${world.partner.apiKey}x` },
                description: 'altered key',
              }),
            )
            .map((variant) => ({ ...variant, broken: true })),
        },
      )
    : fc.constant({ headers: {} as Record<string, string>, broken: false, description: '' });
  const extraHeaders = fc.dictionary(
    fc.constantFrom(
      'X-Request-Id',
      'Accept',
      'Accept-Encoding',
      'X-Forwarded-For',
      'X-Forwarded-Proto',
      'Origin',
      'Cookie',
      'Range',
      'Accept-Language',
    ),
    latin1(100),
    { maxKeys: 3 },
  );
  const idempotencyKey = writes
    ? fc.option(
        fc.oneof(
          fc.uuid().map((key) => ({ key, broken: false })),
          fc
            .oneof(
              latin1(40).filter((key) => !/^[\x21-\x7e]{1,255}$/.test(key)),
              fc.constant('k'.repeat(256)),
            )
            .map((key) => ({ key, broken: true })),
        ),
        { nil: undefined },
      )
    : fc.constant(undefined);
  const query =
    operation.queryParams.length > 0
      ? fc.option(brokenQuery(operation, realCursors), { nil: undefined, freq: 2 })
      : fc.constant(undefined);

  let body: fc.Arbitrary<{ payload?: Buffer; contentType?: string; description: string; broken: boolean }>;
  if (operation.bodyType === 'application/json') {
    const valid = validBody(operation.operationId, world);
    if (!valid) throw new Error(`no valid body template for ${operation.operationId}`);
    body = fc
      .oneof(
        { weight: 40, arbitrary: brokenJsonBody(valid as Json) },
        { weight: 10, arbitrary: abusiveJsonBody(valid as Json) },
        { weight: 1, arbitrary: fc.constant(oversizeBody) },
      )
      .map((broken) => ({
        payload: broken.bytes ?? Buffer.from(broken.text, 'utf8'),
        contentType: broken.contentType,
        description: broken.description,
        broken: true,
      }));
  } else if (operation.bodyType === 'multipart/form-data') {
    body = brokenUpload(operation.template.startsWith('/verify/')).map((upload) => {
      const built = multipart([...upload.parts]);
      return {
        payload: upload.mutateBody ? upload.mutateBody(built.body) : built.body,
        contentType: upload.contentType ?? built.contentType,
        description: upload.description,
        broken: true,
      };
    });
  } else if (writes) {
    // An operation that takes no body: anything but nothing (or `{}`) is refused.
    body = fc
      .tuple(
        fc.oneof(
          jsonGarbage.map((value) => JSON.stringify(value)),
          garbageString,
        ),
        fc.constantFrom('application/json', 'text/plain', 'application/octet-stream'),
      )
      .filter(([text]) => text.trim() !== '' && text.trim() !== '{}' && text.trim() !== '""')
      .map(([text, contentType]) => ({
        payload: Buffer.from(text, 'utf8'),
        contentType,
        description: `unexpected body ${text.slice(0, 30)}`,
        broken: true,
      }));
  } else {
    body = fc.constant({ description: '', broken: false });
  }

  return fc.record({ pathValues, auth, extraHeaders, idempotencyKey, query, body }).map((parts) => {
    const values = Object.fromEntries(
      operation.pathParams.map((param, index) => [param, (parts.pathValues[index] as { value: string }).value]),
    );
    const path = fillPath(operation.template, values) + (parts.query ? `?${parts.query}` : '');
    const headers: Record<string, string> = { ...parts.extraHeaders, ...parts.auth.headers };
    if (parts.idempotencyKey) headers['Idempotency-Key'] = parts.idempotencyKey.key;
    if (parts.body.contentType) headers['Content-Type'] = parts.body.contentType;
    const garbagePath = parts.pathValues.some((value) => (value as { garbage: boolean }).garbage);
    return {
      operation,
      description: [
        garbagePath ? `path ${path.slice(0, 120)}` : '',
        parts.query ? `query ${parts.query.slice(0, 120)}` : '',
        parts.auth.description,
        parts.idempotencyKey?.broken ? `Idempotency-Key ${JSON.stringify(parts.idempotencyKey.key).slice(0, 40)}` : '',
        parts.body.description,
        Object.keys(parts.extraHeaders).length ? `headers ${JSON.stringify(parts.extraHeaders).slice(0, 120)}` : '',
      ]
        .filter(Boolean)
        .join(' | '),
      request: {
        method: operation.method,
        path,
        headers,
        ...(parts.body.payload ? { body: parts.body.payload } : {}),
        timeoutMs: 20_000,
      },
      mustRefuse: writes,
    };
  });
}

/** Requests no HTTP client would send: the server must still answer in the error shape. */
function framingCases(port: number, apiKey: string): FuzzCase[] {
  const host = `Host: 127.0.0.1:${port}\r\n`;
  const json = 'Content-Type: application/json\r\n';
  const raw = (description: string, text: string): FuzzCase => ({
    operation: null,
    description,
    raw: Buffer.from(text, 'latin1'),
    mustRefuse: true,
  });
  return [
    raw(
      'Content-Length not a number',
      `POST /v1/customers HTTP/1.1\r\n${host}Authorization: ${apiKey}\r\n${json}Content-Length: abc\r\n\r\n{}`,
    ),
    raw(
      'two different Content-Lengths',
      `POST /v1/customers HTTP/1.1\r\n${host}Authorization: ${apiKey}\r\n${json}Content-Length: 2\r\nContent-Length: 3\r\n\r\n{}`,
    ),
    raw(
      'broken chunk size',
      `POST /v1/customers HTTP/1.1\r\n${host}Authorization: ${apiKey}\r\n${json}Transfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n`,
    ),
    raw('header line without colon', `GET /v1/customers HTTP/1.1\r\n${host}Authorization ${apiKey}\r\n\r\n`),
    raw('request line garbage', `FOO BAR BAZ QUX\r\n${host}\r\n`),
    raw('unknown HTTP version', `GET /v1/customers HTTP/9.9\r\n${host}\r\n`),
    raw('header too large', `GET /v1/customers HTTP/1.1\r\n${host}X-Big: ${'a'.repeat(20_000)}\r\n\r\n`),
    raw('NUL in the path', `GET /v1/customers/\u0000 HTTP/1.1\r\n${host}Authorization: ${apiKey}\r\n\r\n`),
    raw(
      'Content-Length and Transfer-Encoding',
      `POST /v1/customers HTTP/1.1\r\n${host}Authorization: ${apiKey}\r\n${json}Content-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n`,
    ),
  ];
}

// ---- judging ----

function problemOf(fuzzCase: FuzzCase, outcome: HttpOutcome, api: ApiDescription): string | null {
  if (outcome.kind === 'network') return `no answer (${outcome.code}: ${outcome.message.slice(0, 100)})`;
  if (outcome.status >= 500) return `${outcome.status} ${outcome.text.slice(0, 300)}`;
  const location = String(outcome.headers.location ?? '');
  const refused =
    outcome.status >= 400 ||
    (outcome.status === 303 &&
      fuzzCase.operation?.template.startsWith('/verify/') === true &&
      location.includes('?error='));
  if (fuzzCase.mustRefuse && !refused)
    return `a malformed write was accepted: ${outcome.status} ${location} ${outcome.text.slice(0, 200)}`;
  if (outcome.status >= 400) {
    const problem = errorShapeProblem(outcome);
    if (problem) return `${outcome.status}: ${problem}`;
  }
  if (fuzzCase.operation) {
    const { method, template } = fuzzCase.operation;
    const problem = api.conformance.problemOf(method, template, outcome.status, outcome.body);
    // An unknown route (a parameter that split the path) answers 404 not_found: the error shape was checked.
    if (problem && !(outcome.status === 404 && outcome.text.includes('No route')))
      return `not as documented: ${outcome.status} ${problem}`;
  }
  return null;
}

export async function fuzzScenario(system: ChaosSystem, report: ScenarioReport, size: RunSize): Promise<void> {
  const numRuns = size.quick ? 400 : 4000;
  const receiver = await WebhookReceiver.start();
  try {
    const world = await buildWorld(system, 'chaos fuzz', receiver.url);
    const api = await describeApi(system.http);
    const lists = await world.partner.api.send({ method: 'GET', path: '/v1/customers?limit=1' });
    const realCursors = [
      (lists.kind === 'response' && (lists.body as { cursor: { after: string | null } }).cursor.after) || 'W10',
    ];
    const operations = api.operations;
    // The world's own webhook deliveries settle first: they change rows by themselves.
    await waitUntil(
      async () =>
        (await system.prisma.webhookDelivery.count({
          where: { partnerId: world.partner.partnerId, status: 'pending' },
        })) === 0,
      30_000,
    );
    const before = await partnerState(system, world.partner.partnerId);

    // An operation the fuzzer has no fixture for is a failure (every operation must be covered), not a stop.
    const arbitraries = operations.flatMap((operation) => {
      try {
        return [caseFor(operation, world, realCursors)];
      } catch (error) {
        report.fail(`${operation.operationId}: ${(error as Error).message}`);
        return [];
      }
    });
    // Each operation gets its share of the runs: one draw over all operations left an operation unfuzzed
    // in about one run of twenty, a failure that said nothing about the service.
    const perArbitrary = Math.ceil(numRuns / Math.max(1, arbitraries.length));
    const samples = arbitraries.map((arbitrary, index) =>
      fc.sample(arbitrary, { numRuns: perArbitrary, seed: (size.seed + index) | 0 }),
    );
    const cases: FuzzCase[] = [
      ...Array.from({ length: perArbitrary }, (_, round) => samples.map((sample) => sample[round] as FuzzCase)).flat(),
      ...framingCases(system.http.port, world.partner.apiKey),
    ];
    const perOperation = new Map<string, number>();
    const statuses: Record<string, number> = {};
    let next = 0;
    const worker = async () => {
      while (next < cases.length) {
        const fuzzCase = cases[next++] as FuzzCase;
        const outcome = fuzzCase.raw
          ? await system.http.raw(fuzzCase.raw)
          : await system.http.send(fuzzCase.request as HttpRequest);
        const name = fuzzCase.operation?.operationId ?? 'framing';
        const status = outcome.kind === 'response' ? String(outcome.status) : 'none';
        statuses[status] = (statuses[status] ?? 0) + 1;
        perOperation.set(name, (perOperation.get(name) ?? 0) + 1);
        const problem = problemOf(fuzzCase, outcome, api);
        if (problem) {
          const target = fuzzCase.raw ? 'raw' : `${fuzzCase.request?.method} ${fuzzCase.request?.path.slice(0, 150)}`;
          report.fail(`${name} ${target} [${fuzzCase.description}] -> ${problem}`);
        }
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
    report.cases = cases.length;
    report.notes.operations = `${perOperation.size - 1}/${operations.length}`;
    report.notes.statuses = Object.entries(statuses)
      .map(([status, count]) => `${status}:${count}`)
      .join(',');
    for (const operation of operations)
      report.check(
        perOperation.has(operation.operationId),
        () => `operation ${operation.operationId} was never fuzzed`,
      );

    const after = await partnerState(system, world.partner.partnerId);
    report.notes.tables = Object.keys(before).length;
    for (const [table, value] of Object.entries(before))
      report.check(after[table] === value, () => `state changed: ${table} was ${value}, now ${after[table]}`);
  } finally {
    await receiver.close();
  }
}

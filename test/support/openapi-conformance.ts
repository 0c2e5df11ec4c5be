// Checks real responses against the OpenAPI document the API serves: every response of every API
// test goes through `check`, and the harness fails the test file if any did not match its schema
// (including error codes not documented for that operation).
import Ajv2020, { _, ValidateFunction } from 'ajv/dist/2020';
import standaloneCode from 'ajv/dist/standalone';
import addFormats from 'ajv-formats';
import type { Context } from 'koa';
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';

interface Violation {
  route: string;
  status: number;
  problem: string;
}

const pointerEscape = (segment: string) => segment.replace(/~/g, '~0').replace(/\//g, '~1');

export class OpenApiConformance {
  private ajvInstance: Ajv2020 | undefined;
  private readonly validators = new Map<string, ValidateFunction | null>();
  private readonly documentKey: string;
  readonly violations: Violation[] = [];
  checked = 0;

  /**
   * `cacheDir`: where each validator's code is kept for the run's other test files (ajv's standalone code, named by
   * the document and the response): generating it is most of a validator's cost, and every file checks the same
   * responses against the same document.
   */
  constructor(
    private readonly document: { paths: Record<string, Record<string, { responses: Record<string, unknown> }>> },
    private readonly cacheDir?: string,
  ) {
    this.documentKey = createHash('sha256').update(JSON.stringify(document)).digest('hex');
  }

  /** The document's validator compiler, made when a validator is not in the cache. */
  private get ajv(): Ajv2020 {
    if (!this.ajvInstance) {
      this.ajvInstance = new Ajv2020({
        strict: false,
        allErrors: true,
        code: { source: true, formats: _`require("ajv-formats/dist/formats").fullFormats` },
      });
      addFormats(this.ajvInstance);
      this.ajvInstance.addFormat('binary', true);
      this.ajvInstance.addSchema(this.document as object, 'openapi');
    }
    return this.ajvInstance;
  }

  private validatorFor(method: string, path: string, status: number): ValidateFunction | null | undefined {
    const cacheKey = `${method} ${path} ${status}`;
    if (!this.validators.has(cacheKey)) {
      const response = this.document.paths[path]?.[method]?.responses?.[String(status)] as
        { content?: Record<string, { schema?: unknown }> } | undefined;
      if (!response) return undefined;
      const schema = response.content?.['application/json']?.schema;
      this.validators.set(
        cacheKey,
        schema
          ? this.cachedValidator(
              cacheKey,
              `openapi#/paths/${pointerEscape(path)}/${method}/responses/${status}/content/application~1json/schema`,
            )
          : null,
      );
    }
    return this.validators.get(cacheKey);
  }

  /** The validator of the schema at `ref`: from the run's cache, or compiled and written there. */
  private cachedValidator(cacheKey: string, ref: string): ValidateFunction {
    const file =
      this.cacheDir &&
      path.join(
        this.cacheDir,
        `${createHash('sha256').update(`${this.documentKey} ${cacheKey}`).digest('hex').slice(0, 24)}.cjs`,
      );
    if (file) {
      try {
        return loadStandalone(readFileSync(file, 'utf8'));
      } catch {
        // Not written yet in this run.
      }
    }
    const validator = this.ajv.compile({ $ref: ref });
    if (file) {
      // Written whole under another name and renamed: a file reading it at the same time sees all of it or nothing.
      mkdirSync(this.cacheDir!, { recursive: true });
      const partial = `${file}.${process.pid}.partial`;
      writeFileSync(partial, standaloneCode(this.ajv, validator));
      renameSync(partial, file);
    }
    return validator;
  }

  /** Records a violation when the finished response does not match the document. */
  check(ctx: Context): void {
    const route: string | undefined = ctx.state.route;
    if (!route) return; // not an API operation (unknown path, /openapi.json, /docs)
    const [method, path] = route.split(' ') as [string, string];
    const problem = this.problemOf(method, path, ctx.status, ctx.body);
    if (problem) this.violations.push({ route, status: ctx.status, problem });
  }

  /**
   * What is wrong with a response of the operation `method path` (path as in the document), or null when it
   * matches: its status must be documented for the operation and a JSON body must match that status's schema.
   */
  problemOf(method: string, path: string, status: number, body: unknown): string | null {
    const validator = this.validatorFor(method.toLowerCase(), path, status);
    this.checked += 1;
    if (validator === undefined) return 'status not documented for this operation';
    if (validator === null) return null; // documented without a JSON body (204, 303, HTML)
    if (validator(body)) return null;
    return `${this.ajv.errorsText(validator.errors)}; body: ${JSON.stringify(body).slice(0, 500)}`;
  }
}

/** A validator from ajv's standalone code (a CommonJS module requiring ajv's runtime helpers and the formats). */
function loadStandalone(code: string): ValidateFunction {
  const module = { exports: {} as { default?: ValidateFunction } };
  new Function('module', 'exports', 'require', code)(module, module.exports, require);
  const validator = module.exports.default ?? (module.exports as unknown as ValidateFunction);
  if (typeof validator !== 'function') throw new Error('not a validator');
  return validator;
}

// Checks real responses against the OpenAPI document the API serves: every response of every API
// test goes through `check`, and the harness fails the test file if any did not match its schema
// (including error codes not documented for that operation).
import Ajv2020, { ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import type { Context } from 'koa';

interface Violation {
  route: string;
  status: number;
  problem: string;
}

const pointerEscape = (segment: string) => segment.replace(/~/g, '~0').replace(/\//g, '~1');

export class OpenApiConformance {
  private readonly ajv: Ajv2020;
  private readonly validators = new Map<string, ValidateFunction | null>();
  readonly violations: Violation[] = [];
  checked = 0;

  constructor(
    private readonly document: { paths: Record<string, Record<string, { responses: Record<string, unknown> }>> },
  ) {
    this.ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats(this.ajv);
    this.ajv.addFormat('binary', true);
    this.ajv.addSchema(document as object, 'openapi');
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
          ? this.ajv.compile({
              $ref: `openapi#/paths/${pointerEscape(path)}/${method}/responses/${status}/content/application~1json/schema`,
            })
          : null,
      );
    }
    return this.validators.get(cacheKey);
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

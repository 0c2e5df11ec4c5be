// Every HTTP operation is declared once with defineRoute: its zod schemas validate the request
// and describe it in the OpenAPI document, so the description cannot drift from the code.
import type { Context } from 'koa';
import { z } from 'zod';
import type { AppEnvironment } from '../config';
import type { Logger } from '../logger';
import type { ApiServices } from '../app-services';
import type { ErrorCode } from './error-codes';
import type { RequestCount } from '../persistence/api-keys';

export interface AuthenticatedPartner {
  id: string;
  name: string;
}

/** Who the request is, and its partner's requests in the current rate-limit window (counted with the key lookup). */
export interface Authentication {
  partner: AuthenticatedPartner;
  requests: RequestCount;
}

export interface RouteRequest<P, Q, B> {
  params: P;
  query: Q;
  body: B;
  /** Idempotency and logging use it; only authenticated routes have it. */
  partner: AuthenticatedPartner;
  services: ApiServices;
  log: Logger;
  koa: Context;
}

/** A request body read by the route itself (e.g. multipart uploads), documented by `schema`. */
export interface CustomBody<B> {
  contentType: string;
  schema: z.ZodType;
  read(ctx: Context, services: ApiServices): Promise<B>;
}

type Method = 'get' | 'post' | 'put' | 'delete';
type SuccessStatus = 200 | 201 | 202 | 204 | 303;

export interface RouteSpec<P extends z.ZodType, Q extends z.ZodType, B, R extends z.ZodType> {
  method: Method;
  /** OpenAPI-style template, e.g. `/v1/customers/{id}`. */
  path: string;
  operationId: string;
  tag: string;
  summary: string;
  description?: string;
  /** `partner` (default): requires an API key. `none`: public (documentation, hosted pages). */
  auth?: 'partner' | 'none';
  /**
   * Partner routes are rate-limited per partner. A public route opts in to the per-client-address limit with
   * `client-address` (health checks, docs and the description do not).
   */
  rateLimit?: 'client-address';
  /** Environments that have this operation (default: all); elsewhere it does not exist (404). */
  environments?: AppEnvironment[];
  params?: P;
  query?: Q;
  /** A JSON body schema, or a custom body reader. */
  body?: z.ZodType<B> | CustomBody<B>;
  response: { status: SuccessStatus; description: string; schema?: R; contentType?: string };
  /** Error codes this operation can answer beyond the common ones (auth, validation, internal). */
  errors?: ErrorCode[];
  handler(request: RouteRequest<z.output<P>, z.output<Q>, B>): Promise<R extends z.ZodType ? z.input<R> | void : void>;
}

/** The erased form kept in route tables. */
export interface RouteDefinition {
  method: Method;
  path: string;
  operationId: string;
  tag: string;
  summary: string;
  description?: string;
  auth: 'partner' | 'none';
  rateLimit?: 'client-address';
  environments?: AppEnvironment[];
  params?: z.ZodType;
  query?: z.ZodType;
  body?: z.ZodType | CustomBody<unknown>;
  response: { status: SuccessStatus; description: string; schema?: z.ZodType; contentType?: string };
  errors: ErrorCode[];
  handler(request: RouteRequest<unknown, unknown, unknown>): Promise<unknown>;
}

export function defineRoute<
  P extends z.ZodType = z.ZodObject<{}>,
  Q extends z.ZodType = z.ZodObject<{}>,
  B = undefined,
  R extends z.ZodType = z.ZodNever,
>(spec: RouteSpec<P, Q, B, R>): RouteDefinition {
  return { ...spec, auth: spec.auth ?? 'partner', errors: spec.errors ?? [] } as unknown as RouteDefinition;
}

export function isCustomBody(body: RouteDefinition['body']): body is CustomBody<unknown> {
  return body !== undefined && 'read' in body && typeof body.read === 'function';
}

/** `/v1/customers/{id}` -> `/v1/customers/:id` */
export function toKoaPath(path: string): string {
  return path.replace(/\{(\w+)\}/g, ':$1');
}

/** Path parameters that are resource ids: any string is accepted so that a malformed id answers 404 like an unknown one. */
export const idParam = (name: string, description: string) =>
  z.object({ [name]: z.string().meta({ description }) }).strict();

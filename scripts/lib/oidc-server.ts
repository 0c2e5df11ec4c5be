// The OpenID Provider itself (scripts/lib/oidc.ts has its settings and users): `oidc-provider` with the static users,
// a sign-in page of its own (the library's development pages are off) and no consent screen for the company's own
// client. Loaded only by its process, scripts/production/oidc-provider.ts.
import { generateKeyPairSync, randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import Provider, { type Configuration, type KoaContextWithOIDC } from 'oidc-provider';
import { developmentUsers, keptSecret, type OidcProviderSettings, rolePermissions, type StaticUser } from './oidc';

function signingKeys(stateDir: string): { keys: object[] } {
  const json = keptSecret(stateDir, 'jwks.json', () => {
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const jwk = privateKey.export({ format: 'jwk' });
    return JSON.stringify({ keys: [{ ...jwk, kid: randomBytes(8).toString('hex'), use: 'sig', alg: 'RS256' }] });
  });
  return JSON.parse(json) as { keys: object[] };
}

function claimsOf(user: StaticUser) {
  return {
    sub: user.sub,
    email: user.email,
    email_verified: true,
    name: user.name,
    groups: user.roles,
    permissions: [...new Set(user.roles.flatMap((role) => rolePermissions[role]))],
  };
}

export function oidcConfiguration(settings: OidcProviderSettings): Configuration {
  const cookieKey = keptSecret(settings.stateDir, 'cookie-key', () => randomBytes(32).toString('base64url'));
  return {
    clients: [
      {
        client_id: settings.clientId,
        client_secret: settings.clientSecret,
        redirect_uris: settings.redirectUris,
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_basic',
      },
    ],
    jwks: signingKeys(settings.stateDir) as Configuration['jwks'],
    cookies: { keys: [cookieKey] },
    scopes: ['openid', 'offline_access', 'profile', 'email', 'groups'],
    claims: {
      openid: ['sub'],
      email: ['email', 'email_verified'],
      profile: ['name'],
      groups: ['groups', 'permissions'],
    },
    // The Temporal server reads the roles from the ID token (the UI forwards it as the bearer), so the scopes'
    // claims go into the ID token, not only to the userinfo endpoint.
    conformIdTokenClaims: false,
    features: { devInteractions: { enabled: false } },
    findAccount: (_ctx, sub) => {
      const user = developmentUsers.find((candidate) => candidate.sub === sub);
      return user ? { accountId: user.sub, claims: () => claimsOf(user) } : undefined;
    },
    // The Temporal UI is the company's own client: no consent screen, its grant is made at sign-in.
    loadExistingGrant: async (ctx: KoaContextWithOIDC) => {
      const { client, session, provider } = ctx.oidc;
      if (!client || !session?.accountId) return undefined;
      const grantId = ctx.oidc.result?.consent?.grantId ?? session.grantIdFor(client.clientId);
      if (grantId) return provider.Grant.find(grantId);
      const grant = new provider.Grant({ clientId: client.clientId, accountId: session.accountId });
      grant.addOIDCScope('openid offline_access profile email groups');
      await grant.save();
      return grant;
    },
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
    ttl: { IdToken: 3600, AccessToken: 3600, Session: 8 * 3600, Interaction: 600, Grant: 8 * 3600 },
    renderError: (ctx, out) => {
      ctx.type = 'html';
      ctx.body = page('Sign-in failed', `<p>${escapeHtml(String(out.error_description ?? out.error))}</p>`);
    },
  };
}

function escapeHtml(text: string): string {
  return text.replace(
    /[&<>"']/g,
    (character) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[character]!,
  );
}

function page(title: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title>
<meta name="viewport" content="width=device-width, initial-scale=1"></head>
<body style="font-family: sans-serif; max-width: 28rem; margin: 4rem auto"><h1>${escapeHtml(title)}</h1>${body}</body></html>`;
}

function loginPage(uid: string, problem?: string): string {
  return page(
    'Operator sign-in',
    `${problem ? `<p role="alert">${escapeHtml(problem)}</p>` : ''}
<form method="post" action="/interaction/${escapeHtml(uid)}/login">
<p><label>Email <input name="login" type="email" autocomplete="username" required autofocus></label></p>
<p><label>Password <input name="password" type="password" autocomplete="current-password" required></label></p>
<p><button type="submit">Sign in</button></p>
</form>`,
  );
}

const MAX_FORM_BYTES = 4096;

async function formOf(request: IncomingMessage): Promise<URLSearchParams> {
  let body = '';
  for await (const chunk of request) {
    body += String(chunk);
    if (body.length > MAX_FORM_BYTES) throw new Error('form too large');
  }
  return new URLSearchParams(body);
}

function samePassword(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** The provider with its sign-in page (the only interaction: consent is implied, see loadExistingGrant). */
export function createOidcServer(settings: OidcProviderSettings): { provider: Provider; server: Server } {
  const provider = new Provider(settings.issuer, oidcConfiguration(settings));
  const callback = provider.callback();
  const interaction = async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    const details = await provider.interactionDetails(request, response);
    const html = (status: number, text: string) => {
      response.writeHead(status, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
      response.end(text);
    };
    if (request.method === 'GET') return html(200, loginPage(details.uid));
    if (request.method !== 'POST' || !request.url?.endsWith('/login')) return html(405, page('Not allowed', ''));
    const form = await formOf(request);
    const user = developmentUsers.find((candidate) => candidate.email === form.get('login')?.trim().toLowerCase());
    if (!user || !samePassword(form.get('password') ?? '', settings.userPassword))
      return html(401, loginPage(details.uid, 'Wrong email or password.'));
    await provider.interactionFinished(
      request,
      response,
      { login: { accountId: user.sub } },
      { mergeWithLastSubmission: false },
    );
  };
  const server = createServer((request, response) => {
    if (request.url?.startsWith('/interaction/')) {
      interaction(request, response).catch((error: unknown) => {
        if (!response.headersSent) response.writeHead(400, { 'content-type': 'text/plain; charset=utf-8' });
        response.end(`sign-in failed: ${(error as Error).message}`);
      });
      return;
    }
    if (request.url === '/health') {
      response.writeHead(200, { 'content-type': 'text/plain' });
      response.end('ok');
      return;
    }
    void callback(request, response);
  });
  return { provider, server };
}

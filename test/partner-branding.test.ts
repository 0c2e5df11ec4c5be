// A partner's brand on the hosted verification page, as the partner sets it and as the end user's browser gets
// it: the colour only ever as #rrggbb inside a generated stylesheet, the logo only as a PNG/JPEG/WEBP recognised by
// its bytes, served from our domain with its own type and nosniff; without a brand, the neutral design.
import { createCustomer, files, individualCustomer } from './support/fixtures';
import { Harness, startHarness, TestPartner } from './support/harness';

let harness: Harness;
let partner: TestPartner;

beforeAll(async () => {
  harness = await startHarness({}, { realTime: true });
  partner = await harness.createPartner('Branded partner');
});
afterAll(async () => {
  await harness?.teardown();
});

const pathOf = (link: string | null | undefined) => new URL(link as string).pathname;
const svg = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>');

describe('PUT /v1/partner/branding', () => {
  it('sets the display name and the accent colour (stored lower case); GET shows them', async () => {
    const before = await partner.api.get('/v1/partner/branding');
    expect(before.status).toBe(200);
    expect(before.body).toEqual({ display_name: null, accent_color: null, logo: null, updated_at: null });
    const set = await partner.api
      .put('/v1/partner/branding')
      .send({ display_name: ' Acme Pay ', accent_color: '#0A7D5A' });
    expect(set.status).toBe(200);
    expect(set.body).toMatchObject({ display_name: 'Acme Pay', accent_color: '#0a7d5a', logo: null });
    expect((await partner.api.get('/v1/partner/branding')).body).toEqual(set.body);
  });

  it('refuses any colour that is not #rrggbb, so nothing can break out of the stylesheet', async () => {
    for (const accent_color of [
      'red',
      '#fff',
      '#0a7d5a00',
      '0a7d5a',
      '#0a7d5a;}body{background:url(https://evil.example/x)}',
      '#0a7d5a\n',
      'var(--x)',
      'rgb(1,2,3)',
      '#0a7d5g',
    ]) {
      const response = await partner.api.put('/v1/partner/branding').send({ display_name: 'Acme', accent_color });
      expect({ accent_color, status: response.status, code: response.body.error?.code }).toEqual({
        accent_color,
        status: 400,
        code: 'validation_error',
      });
    }
    for (const display_name of ['', 'x'.repeat(81), 'Acme\u0000Pay', 'Acme\nPay']) {
      const response = await partner.api.put('/v1/partner/branding').send({ display_name, accent_color: null });
      expect({ display_name, status: response.status }).toEqual({ display_name, status: 400 });
    }
    expect((await partner.api.put('/v1/partner/branding').send({ accent_color: '#000000' })).status).toBe(400);
    expect((await partner.api.get('/v1/partner/branding')).body.accent_color).toBe('#0a7d5a');
  });

  it('needs an API key, and each partner sees only its own brand', async () => {
    expect((await harness.http.get('/v1/partner/branding')).status).toBe(401);
    const other = await harness.createPartner('Other partner');
    expect((await other.api.get('/v1/partner/branding')).body.display_name).toBeNull();
  });
});

describe('PUT /v1/partner/branding/logo', () => {
  it('accepts a PNG, JPEG or WEBP by its bytes, whatever its name or declared type', async () => {
    const jpeg = await partner.api
      .put('/v1/partner/branding/logo')
      .attach('file', files.jpeg, { filename: 'logo.svg', contentType: 'image/svg+xml' });
    expect(jpeg.status).toBe(200);
    expect(jpeg.body.logo).toEqual({ content_type: 'image/jpeg', size_bytes: files.jpeg.length });
    const png = await partner.api.put('/v1/partner/branding/logo').attach('file', files.png, 'logo.png');
    expect(png.status).toBe(200);
    expect(png.body.logo).toEqual({ content_type: 'image/png', size_bytes: files.png.length });
  });

  it('refuses SVG, PDF, text and empty files (422 logo_invalid), and over 256 KB (413); the logo stays', async () => {
    for (const [what, data, name] of [
      ['svg', svg, 'logo.png'],
      ['pdf', files.pdf, 'logo.pdf'],
      ['text', files.text, 'logo.png'],
      ['empty', Buffer.alloc(0), 'logo.png'],
    ] as const) {
      const response = await partner.api.put('/v1/partner/branding/logo').attach('file', data, name);
      expect({ what, status: response.status, code: response.body.error?.code }).toEqual({
        what,
        status: 422,
        code: 'logo_invalid',
      });
    }
    const large = await partner.api
      .put('/v1/partner/branding/logo')
      .attach('file', Buffer.concat([files.png, Buffer.alloc(256 * 1024)]), 'logo.png');
    expect(large.status).toBe(413);
    expect(large.body.error.code).toBe('payload_too_large');
    const missing = await partner.api.put('/v1/partner/branding/logo').field('other', 'x');
    expect(missing.status).toBe(400);
    expect((await partner.api.get('/v1/partner/branding')).body.logo.content_type).toBe('image/png');
  });
});

describe('the hosted page of a branded partner', () => {
  it('shows the name and the logo, served from our domain with its type and nosniff', async () => {
    const customer = await createCustomer(partner.api, individualCustomer());
    const link = pathOf(customer.verification.verification_link);
    const page = await harness.http.get(link);
    expect(page.text).toContain(`<img class="logo" src="${link}/logo" alt="Acme Pay" height="40">`);
    expect(page.text).toContain(`<link rel="stylesheet" href="${link}/theme.css">`);
    expect(page.text).toContain('<title>Identity verification · Acme Pay</title>');
    const logo = await harness.http.get(`${link}/logo`).buffer(true);
    expect(logo.status).toBe(200);
    expect(logo.headers['content-type']).toBe('image/png');
    expect(logo.headers['x-content-type-options']).toBe('nosniff');
    expect(logo.headers['content-security-policy']).toContain("default-src 'none'");
    expect(Buffer.compare(logo.body as Buffer, files.png)).toBe(0);
  });

  it('gets the accent colour only through a generated stylesheet of custom properties, readable text on it', async () => {
    const customer = await createCustomer(partner.api, individualCustomer());
    const link = pathOf(customer.verification.verification_link);
    const theme = await harness.http.get(`${link}/theme.css`);
    expect(theme.status).toBe(200);
    expect(theme.headers['content-type']).toBe('text/css; charset=utf-8');
    expect(theme.text).toBe(':root{--accent:#0a7d5a;--on-accent:#ffffff;--accent-text:#0a7d5a}\n');
    // A light accent: black text on it, and the neutral colour for links on white.
    await partner.api.put('/v1/partner/branding').send({ display_name: 'Acme Pay', accent_color: '#FFE14D' });
    expect((await harness.http.get(`${link}/theme.css`)).text).toBe(
      ':root{--accent:#ffe14d;--on-accent:#000000;--accent-text:#1d4ed8}\n',
    );
    await partner.api.put('/v1/partner/branding').send({ display_name: 'Acme Pay', accent_color: '#0a7d5a' });
  });

  it('of a partner without a brand is the neutral design: no logo, no theme, and both answer 404', async () => {
    const plain = await harness.createPartner('Plain partner');
    const customer = await createCustomer(plain.api, individualCustomer());
    const link = pathOf(customer.verification.verification_link);
    const page = await harness.http.get(link);
    expect(page.status).toBe(200);
    expect(page.text).not.toMatch(/class="logo"|theme\.css|Acme/);
    expect((await harness.http.get(`${link}/logo`)).status).toBe(404);
    expect((await harness.http.get(`${link}/theme.css`)).status).toBe(404);
    // A made-up token shows no partner's brand either.
    expect((await harness.http.get(`/verify/${'x'.repeat(43)}/logo`)).status).toBe(404);
  });

  it('speaks the language of Accept-Language, or the one chosen with ?lang= (remembered in a cookie)', async () => {
    const customer = await createCustomer(partner.api, individualCustomer());
    const link = pathOf(customer.verification.verification_link);
    const portuguese = await harness.http.get(link).set('Accept-Language', 'fr-FR,pt-BR;q=0.8,en;q=0.5');
    expect(portuguese.text).toContain('<html lang="pt-BR">');
    expect(portuguese.headers['content-language']).toBe('pt-BR');
    // (Before the choice below: harness.http keeps cookies, as a browser does.)
    const unknown = await harness.http.get(`${link}?lang=de`).set('Accept-Language', 'de');
    expect(unknown.text).toContain('<html lang="en">');
    expect(unknown.headers['set-cookie']).toBeUndefined();
    const spanish = await harness.http.get(`${link}?lang=es`).set('Accept-Language', 'pt-BR');
    expect(spanish.text).toContain('<h1>Verificación de identidad</h1>');
    const cookie = spanish.headers['set-cookie']?.[0] ?? '';
    expect(cookie).toMatch(/^hosted_lang=es; path=\/verify; .*samesite=lax; httponly/i);
    const later = await harness.http.get(`${link}?notice=document_uploaded`).set('Cookie', 'hosted_lang=es');
    expect(later.text).toContain('<p role="status">Documento subido.</p>');
  });
});

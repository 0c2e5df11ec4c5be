// The hosted verification page as an end user meets it, in headless Chromium (Debian's headless shell or
// CHROMIUM_PATH, driven by playwright-core; nothing is downloaded): on a 360 px phone screen, in Portuguese and in
// Spanish, under a partner's brand, through to under_review and approved, and a partially_rejected customer who
// replaces only the rejected item. Each page is checked with axe-core (WCAG 2.1 A and AA) and must load nothing
// from elsewhere nor break its Content-Security-Policy. Screenshots go to .data/artifacts/hosted/ (git-ignored);
// the four shown in docs are copied to docs/images/hosted/.
import { copyFileSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { Browser, BrowserContext, Page } from 'playwright-core';
import { verificationToken } from '../src/domain/verification-links';
import { createCustomer, CustomerBody, files, individualCustomer } from './support/fixtures';
import { launchChromium } from './support/browser';
import { Harness, startHarness, TestPartner } from './support/harness';
import { projectRoot } from './support/paths';

const artifactsDir = path.join(projectRoot, '.data', 'artifacts', 'hosted');
const docsImagesDir = path.join(projectRoot, 'docs', 'images', 'hosted');
const axeSource = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
const phone = { viewport: { width: 360, height: 780 }, deviceScaleFactor: 1, isMobile: true, hasTouch: true };

/**
 * Runs `action`, which makes the page navigate (a form posted, a link followed), and waits for the next document to
 * have loaded: the URL alone cannot tell, when the one before already matched (two uploads in a row).
 */
async function navigating(page: Page, url: RegExp, action: () => Promise<unknown>): Promise<void> {
  const loaded = page.waitForEvent('load');
  await Promise.all([page.waitForURL(url), action()]);
  await loaded;
}

let harness: Harness;
let server: Server;
let browser: Browser;
let baseUrl: string;
let branded: TestPartner;

beforeAll(async () => {
  // Reviews wait for the sandbox outcome the test sets (as in test/hosted-verification.test.ts).
  harness = await startHarness({ SANDBOX_VERIFICATION_DELAY_SECONDS: String(6 * 3600) }, { realTime: true });
  server = harness.createApp(harness.services).listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  browser = await launchChromium();
  mkdirSync(artifactsDir, { recursive: true });
  mkdirSync(docsImagesDir, { recursive: true });

  branded = await harness.createPartner('Acme Pay Ltda');
  const set = await branded.api.put('/v1/partner/branding').send({ display_name: 'Acme Pay', accent_color: '#0A7D5A' });
  expect(set.status).toBe(200);
  const logo = await branded.api.put('/v1/partner/branding/logo').attach('file', await drawPng(logoMarkup), 'logo.png');
  expect(logo.status).toBe(200);
  expect(logo.body.logo.content_type).toBe('image/png');
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
  await harness?.teardown();
});

const logoMarkup =
  '<div style="display:inline-flex;align-items:center;gap:8px;padding:6px 12px;font:700 26px system-ui;color:#0a7d5a">' +
  '<span style="display:inline-block;width:30px;height:30px;border-radius:50%;background:#0a7d5a"></span>Acme Pay</div>';

/** A PNG drawn by the browser itself: the partner's logo, or a phone's photo of a document. */
async function drawPng(html: string): Promise<Buffer> {
  const page = await browser.newPage({ viewport: { width: 400, height: 300 } });
  await page.setContent(`<body style="margin:0">${html}</body>`);
  const png = await page.locator('body > *').first().screenshot({ type: 'png' });
  await page.close();
  return png;
}

const documentPhoto = () =>
  drawPng(
    '<div style="width:320px;height:200px;border-radius:12px;background:#e8eef7;border:2px solid #345;padding:12px;' +
      'font:14px system-ui"><b>REPÚBLICA FEDERATIVA DO BRASIL</b><br>PASSAPORTE<br><br>Ana Souza<br>1990-05-17</div>',
  );

/** A context that records what the page breaks: requests elsewhere, policy violations, script errors. */
async function phoneContext(locale: string, options: { javaScriptEnabled?: boolean } = {}) {
  const context = await browser.newContext({
    ...phone,
    locale,
    extraHTTPHeaders: { 'Accept-Language': `${locale},${locale.split('-')[0]};q=0.9` },
    ...options,
  });
  const problems: string[] = [];
  context.on('request', (request) => {
    const url = request.url();
    if (!url.startsWith(baseUrl) && !url.startsWith('blob:') && !url.startsWith('data:'))
      problems.push(`request ${url}`);
  });
  context.on('page', (page) => watch(page, problems));
  return { context, problems };
}

function watch(page: Page, problems: string[]): void {
  page.on('console', (message) => {
    if (/Content Security Policy|Refused to/i.test(message.text())) problems.push(`policy: ${message.text()}`);
  });
  page.on('pageerror', (error) => problems.push(`script error: ${error.message}`));
}

/** axe-core in the page (evaluated over the DevTools protocol, so the page's policy need not allow it). */
async function axeViolations(page: Page, label: string): Promise<string[]> {
  await page.evaluate(`${axeSource}\n;void 0`);
  // Strings, not functions: the tests are compiled without the DOM's types.
  const result = (await page.evaluate(
    `axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] } })`,
  )) as { violations: { id: string; impact: string; nodes: { target: string[] }[] }[]; passes: unknown[] };
  const violations = result.violations.map(
    (v) => `${v.id} (${v.impact}): ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`,
  );
  console.log(
    `axe-core, WCAG 2.1 A/AA, ${label}: ${JSON.stringify(violations)} (${result.passes.length} rules passed)`,
  );
  return violations;
}

async function snap(page: Page, name: string, forDocs = false): Promise<void> {
  const file = path.join(artifactsDir, `${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  expect(existsSync(file)).toBe(true);
  if (forDocs) copyFileSync(file, path.join(docsImagesDir, `${name}.png`));
}

/** Nothing wider than the phone: no sideways scrolling at 360 px. */
async function expectFitsWidth(page: Page): Promise<void> {
  expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(360);
}

/** Every button and radio label is a large touch target (at least 44 px high). */
async function expectLargeTargets(page: Page): Promise<void> {
  const heights = (await page.evaluate(
    `[...document.querySelectorAll('button, label.choice, .languages a, input[type=file]')]
      .map((element) => element.getBoundingClientRect().height)`,
  )) as number[];
  expect(heights.length).toBeGreaterThan(0);
  for (const height of heights) expect(height).toBeGreaterThanOrEqual(44);
}

const pathOf = (link: string | null | undefined) => new URL(link as string).pathname;

async function customerNow(partner: TestPartner, id: string): Promise<CustomerBody> {
  return (await partner.api.get(`/v1/customers/${id}`)).body as CustomerBody;
}

/** The current link of a customer whose status no longer offers one (the page the submit redirect leads to). */
async function currentPagePath(id: string): Promise<string> {
  const row = await harness.prisma.customer.findUniqueOrThrow({ where: { id } });
  return `/verify/${verificationToken(harness.config.secrets.encryptionKey, id, row.verificationLinkVersion)}`;
}

it('a person completes verification on a 360 px phone, in Portuguese, under the partner’s brand', async () => {
  const customer = await createCustomer(branded.api, individualCustomer());
  const { context, problems } = await phoneContext('pt-BR');
  const page = await context.newPage();
  await page.goto(`${baseUrl}${pathOf(customer.verification.verification_link)}`);

  expect(await page.getAttribute('html', 'lang')).toBe('pt-BR');
  await expect(page.locator('h1').innerText()).resolves.toBe('Verificação de identidade');
  await expect(page.locator('#status').innerText()).resolves.toBe('Aguardando seus documentos');
  await expect(page.locator('.intro').innerText()).resolves.toContain('Acme Pay pede que você confirme');
  // The brand: the logo from our domain, drawn; the accent colour through the partner's stylesheet.
  const logo = page.locator('img.logo');
  expect(await logo.getAttribute('alt')).toBe('Acme Pay');
  expect(await logo.evaluate((img) => (img as unknown as { naturalWidth: number }).naturalWidth > 0)).toBe(true);
  expect(await page.evaluate(`getComputedStyle(document.querySelector('button.primary')).backgroundColor`)).toBe(
    'rgb(10, 125, 90)',
  );
  // What is still needed, and the date in Portuguese.
  expect(await page.locator('#todo-title').innerText()).toBe('Ainda falta');
  expect(await page.locator('#todo-title + ol > li h3').allInnerTexts()).toEqual([
    'Documento de identidade',
    'Comprovante de endereço',
    'Selfie Opcional',
  ]);
  await expect(page.locator('.progress p').innerText()).resolves.toBe('0 de 2 etapas obrigatórias concluídas');
  await expect(page.locator('.expiry').innerText()).resolves.toMatch(/^Este link é válido até \d+ de \w+ de \d{4}\.$/);
  // The camera: documents from the back camera, the selfie from the front one.
  expect(await page.getAttribute('#file-step-identity', 'capture')).toBe('environment');
  expect(await page.getAttribute('#file-step-selfie', 'capture')).toBe('user');
  await expectFitsWidth(page);
  await expectLargeTargets(page);
  expect(await axeViolations(page, 'Portuguese, pending, branded')).toEqual([]);
  await snap(page, 'pt-360-before-submission', true);

  // The script checks size and type before anything is sent.
  const identity = page.locator('#step-identity form');
  await identity.locator('input[type=file]').setInputFiles({
    name: 'enorme.pdf',
    mimeType: 'application/pdf',
    buffer: Buffer.concat([files.pdf, Buffer.alloc(10 * 1024 * 1024)]),
  });
  await expect(identity.locator('.preview [role=alert]').innerText()).resolves.toBe(
    'Este arquivo tem mais de 10 MB: escolha um menor.',
  );
  expect(await page.evaluate(`document.querySelector('#file-step-identity').validity.valid`)).toBe(false);
  // A photo of the passport: previewed, then sent.
  await identity.getByLabel('Passaporte').check();
  await identity.getByLabel('Frente').check();
  await identity.locator('input[type=file]').setInputFiles({
    name: 'passaporte.png',
    mimeType: 'image/png',
    buffer: await documentPhoto(),
  });
  await expect(identity.locator('.preview img').getAttribute('alt')).resolves.toBe('Prévia da imagem escolhida');
  await navigating(page, /notice=document_uploaded/, () => identity.locator('button[type=submit]').click());
  await expect(page.locator('[role=status]').innerText()).resolves.toBe('Documento enviado.');
  await expect(page.locator('#step-identity .badge').innerText()).resolves.toBe('Recebido');
  expect(await page.locator('#done-title').innerText()).toBe('Concluído');

  // The proof of address with the keyboard only: from the file field, Tab to its button and Enter.
  const address = page.locator('#step-proof-of-address form');
  await address
    .locator('input[type=file]')
    .setInputFiles({ name: 'conta.pdf', mimeType: 'application/pdf', buffer: files.pdf });
  await address.locator('input[type=file]').focus();
  await page.keyboard.press('Tab');
  expect(await page.evaluate('document.activeElement.textContent')).toBe('Enviar documento');
  await navigating(page, /notice=document_uploaded/, () => page.keyboard.press('Enter'));
  await expect(page.locator('.progress p').innerText()).resolves.toBe('2 de 2 etapas obrigatórias concluídas');

  // Submit, by keyboard too.
  await page.getByRole('button', { name: 'Enviar para verificação' }).focus();
  await navigating(page, /notice=submitted/, () => page.keyboard.press('Enter'));
  await expect(page.locator('[role=status]').innerText()).resolves.toBe('Enviado: seus documentos estão em análise.');
  await expect(page.locator('#status').innerText()).resolves.toBe('Em análise');
  await expect(page.locator('.next p').first().innerText()).resolves.toContain('Seus documentos estão em análise');
  expect(await page.locator('form').count()).toBe(0); // nothing more is asked for
  expect((await customerNow(branded, customer.id)).status).toBe('under_review');
  await expectFitsWidth(page);
  expect(await axeViolations(page, 'Portuguese, under review')).toEqual([]);
  await snap(page, 'pt-360-after-submission', true);

  // The review approves (the sandbox outcome); the page says so.
  const decided = await branded.api
    .post(`/v1/sandbox/customers/${customer.id}/verification-outcome`)
    .send({ outcome: 'approved', rejected_steps: [] });
  expect(decided.status).toBe(200);
  expect((await customerNow(branded, customer.id)).status).toBe('approved');
  await page.goto(`${baseUrl}${await currentPagePath(customer.id)}`);
  await expect(page.locator('#status').innerText()).resolves.toBe('Aprovada');
  await expect(page.locator('.next p').innerText()).resolves.toBe(
    'Sua identidade foi confirmada. Você pode fechar esta página.',
  );
  expect(await page.locator('#done-title + ol .badge').allInnerTexts()).toEqual(['Aceito', 'Aceito']);
  expect(await axeViolations(page, 'Portuguese, approved')).toEqual([]);
  await snap(page, 'pt-360-approved');
  expect(problems).toEqual([]);
  await context.close();
}, 120_000);

it('a partially rejected customer sees only the rejected item, with its reason, in Spanish, and replaces it', async () => {
  const customer = await createCustomer(branded.api, individualCustomer());
  const first = pathOf(customer.verification.verification_link);
  for (const [type, side] of [
    ['PASSPORT', 'FRONT'],
    ['PROOF_OF_ADDRESS', ''],
  ] as const) {
    const upload = await harness.http
      .post(`${first}/documents`)
      .field('document_type', type)
      .field('document_side', side)
      .attach('file', files.pdf, 'scan.pdf');
    expect(upload.headers.location).toBe(`${first}?notice=document_uploaded`);
  }
  expect((await harness.http.post(`${first}/submit`)).status).toBe(303);
  const decided = await branded.api.post(`/v1/sandbox/customers/${customer.id}/verification-outcome`).send({
    outcome: 'partially_rejected',
    rejected_steps: [
      { name: 'PROOF_OF_ADDRESS', rejection_code: ['EXPIRED'], rejection_description: 'Factura de 2023' },
    ],
  });
  expect(decided.status).toBe(200);
  const reopened = await customerNow(branded, customer.id);
  expect(reopened.status).toBe('partially_rejected');

  // The browser asks for Portuguese; the person switches to Spanish, and the choice holds across the forms.
  const { context, problems } = await phoneContext('pt-BR');
  const page = await context.newPage();
  await page.goto(`${baseUrl}${pathOf(reopened.verification.verification_link)}`);
  await expect(page.locator('h1').innerText()).resolves.toBe('Verificação de identidade');
  await navigating(page, /lang=es/, () => page.getByRole('link', { name: 'Español' }).click());
  expect(await page.getAttribute('html', 'lang')).toBe('es');
  await expect(page.locator('#status').innerText()).resolves.toBe('Hay que reemplazar algunos elementos');

  const todo = page.locator('#todo-title + ol > li');
  expect(await todo.count()).toBe(1);
  expect(await todo.getAttribute('id')).toBe('step-proof-of-address');
  await expect(todo.locator('h3').innerText()).resolves.toBe('Comprobante de domicilio');
  await expect(todo.locator('.badge').innerText()).resolves.toBe('No aceptado: envía otro');
  expect(await todo.locator('.reason p').allInnerTexts()).toEqual([
    'Por qué no se aceptó: el documento está vencido.',
    'Nota de la revisión: Factura de 2023',
  ]);
  // What was accepted is listed as done, and never asked for again.
  expect(await page.locator('#done-title + ol > li').allInnerTexts()).toEqual([
    expect.stringContaining('Documento de identidad'),
  ]);
  await expect(page.locator('#step-identity .badge').innerText()).resolves.toBe('Aceptado');
  expect(await page.locator('#step-identity form').count()).toBe(0);
  expect(await page.locator('#step-selfie').count()).toBe(0);
  await expectFitsWidth(page);
  await expectLargeTargets(page);
  expect(await axeViolations(page, 'Spanish, partially rejected')).toEqual([]);
  await snap(page, 'es-360-before-submission', true);

  await todo
    .locator('input[type=file]')
    .setInputFiles({ name: 'factura.pdf', mimeType: 'application/pdf', buffer: files.pdf });
  await expect(todo.locator('.preview p').innerText()).resolves.toMatch(/^factura\.pdf \(\d+ KB\)$/);
  await navigating(page, /notice=document_uploaded/, () => todo.locator('button[type=submit]').click());
  await expect(page.locator('[role=status]').innerText()).resolves.toBe('Documento subido.');
  await expect(page.locator('#step-proof-of-address .badge').innerText()).resolves.toBe('Recibido');
  await navigating(page, /notice=submitted/, () =>
    page.getByRole('button', { name: 'Enviar para verificación' }).click(),
  );
  await expect(page.locator('#status').innerText()).resolves.toBe('En revisión');
  await expect(page.locator('[role=status]').innerText()).resolves.toBe('Enviado: tus documentos están en revisión.');
  expect((await customerNow(branded, customer.id)).status).toBe('under_review');
  expect(await axeViolations(page, 'Spanish, resubmitted')).toEqual([]);
  await snap(page, 'es-360-after-submission', true);

  const approved = await branded.api
    .post(`/v1/sandbox/customers/${customer.id}/verification-outcome`)
    .send({ outcome: 'approved', rejected_steps: [] });
  expect(approved.status).toBe(200);
  expect((await customerNow(branded, customer.id)).status).toBe('approved');
  expect(problems).toEqual([]);
  await context.close();
}, 120_000);

it('works without JavaScript, in English and the neutral design of a partner without a brand', async () => {
  const plain = await harness.createPartner('Plain partner');
  const customer = await createCustomer(plain.api, individualCustomer());
  const { context, problems } = await phoneContext('en-US', { javaScriptEnabled: false });
  const page = await context.newPage();
  await page.goto(`${baseUrl}${pathOf(customer.verification.verification_link)}`);
  expect(await page.locator('img.logo').count()).toBe(0);
  expect(await page.locator('link[href$="theme.css"]').count()).toBe(0);
  await expect(page.locator('#status').innerText()).resolves.toBe('Waiting for your documents');

  const identity = page.locator('#step-identity form');
  await identity.getByLabel('National ID card').check();
  await identity.getByLabel('Front').check();
  await identity
    .locator('input[type=file]')
    .setInputFiles({ name: 'id-front.jpg', mimeType: 'image/jpeg', buffer: files.jpeg });
  await navigating(page, /notice=document_uploaded/, () => identity.locator('button[type=submit]').click());
  // Half of a national ID: the page says what arrived and preselects the missing side.
  await expect(page.locator('#step-identity .received').innerText()).resolves.toBe(
    'Received: National ID card (front).',
  );
  expect(await page.locator('#step-identity input[value=NATIONAL_ID]').isChecked()).toBe(true);
  expect(await page.locator('#step-identity input[value=BACK]').isChecked()).toBe(true);
  await page
    .locator('#step-identity input[type=file]')
    .setInputFiles({ name: 'id-back.jpg', mimeType: 'image/jpeg', buffer: files.jpeg });
  await navigating(page, /notice=document_uploaded/, () => page.locator('#step-identity form button').click());
  await expect(page.locator('#step-identity .badge').innerText()).resolves.toBe('Received');

  // Submitting too early names what is missing.
  await navigating(page, /error=documents_missing/, () =>
    page.getByRole('button', { name: 'Submit for verification' }).click(),
  );
  await expect(page.locator('[role=alert]').innerText()).resolves.toBe(
    'Upload the missing documents before submitting: Proof of address.',
  );
  const address = page.locator('#step-proof-of-address form');
  await address
    .locator('input[type=file]')
    .setInputFiles({ name: 'bill.pdf', mimeType: 'application/pdf', buffer: files.pdf });
  await navigating(page, /notice=document_uploaded/, () => address.locator('button[type=submit]').click());
  await navigating(page, /notice=submitted/, () =>
    page.getByRole('button', { name: 'Submit for verification' }).click(),
  );
  await expect(page.locator('#status').innerText()).resolves.toBe('Under review');
  expect((await customerNow(plain, customer.id)).status).toBe('under_review');
  // (axe-core needs script in the page: the same markup is checked with it in the tests above.)
  await snap(page, 'en-360-no-js-under-review');
  expect(problems).toEqual([]);
  await context.close();
}, 120_000);

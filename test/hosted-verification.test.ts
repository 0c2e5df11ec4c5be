// The hosted verification page as a security review sees it: the link's token is stored only hashed, expires and
// is replaced on every status change; it never reaches the request log; an upload is refused before its body is
// read when the token is not valid, and a valid upload is streamed to disk while it arrives; the page's headers.
import { createHash } from 'node:crypto';
import { readdirSync, statSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import pino from 'pino';
import request from 'supertest';
import {
  hostedErrorCodes,
  hostedNoticeCodes,
  hostedPageContentSecurityPolicy,
} from '../src/routes/hosted-verification';
import { eventually } from './support/eventually';
import { businessCustomer, createCustomer, CustomerBody, files, individualCustomer } from './support/fixtures';
import { Harness, startHarness, TestPartner } from './support/harness';

let harness: Harness;
let partner: TestPartner;

beforeAll(async () => {
  harness = await startHarness({ SANDBOX_VERIFICATION_DELAY_SECONDS: String(6 * 3600) }, { realTime: true });
  partner = await harness.createPartner();
});
afterAll(async () => {
  await harness?.teardown();
});

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const pathOf = (link: string | null | undefined) => new URL(link as string).pathname;
const tokenOf = (link: string | null | undefined) => pathOf(link).split('/')[2] as string;

async function customerNow(id: string): Promise<CustomerBody> {
  const response = await partner.api.get(`/v1/customers/${id}`);
  expect(response.status).toBe(200);
  return response.body as CustomerBody;
}

async function uploadPassportAndAddress(linkPath: string): Promise<void> {
  for (const [type, side] of [
    ['PASSPORT', 'FRONT'],
    ['PROOF_OF_ADDRESS', ''],
  ] as const) {
    const upload = await harness.http
      .post(`${linkPath}/documents`)
      .field('document_type', type)
      .field('document_side', side)
      .attach('file', Buffer.from(`%PDF-1.4 ${type}`), `${type}.pdf`);
    expect(upload.headers.location).toBe(`${linkPath}?notice=document_uploaded`);
  }
}

describe('the link token', () => {
  it('is stored only as its SHA-256: no table holds the token, not even the event or the idempotency row', async () => {
    const created = await partner.api
      .post('/v1/customers')
      .set('Idempotency-Key', `hashed-${Date.now()}`)
      .send(individualCustomer());
    expect(created.status).toBe(201);
    const token = tokenOf(created.body.verification.verification_link);
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);

    const row = await harness.prisma.customer.findUniqueOrThrow({ where: { id: created.body.id } });
    expect(row.verificationTokenHash).toBe(sha256(token));
    const everywhere = await harness.prisma.$queryRaw<{ dump: string }[]>`
      SELECT concat_ws(' ',
        (SELECT row_to_json(c)::text FROM customers c WHERE c.id = ${row.id}::uuid),
        (SELECT string_agg(row_to_json(e)::text, ' ') FROM events e WHERE e.resource_id = ${row.id}::uuid),
        (SELECT string_agg(row_to_json(i)::text, ' ') FROM idempotency_keys i
          WHERE i.partner_id = ${partner.partnerId}::uuid)) AS dump`;
    expect(everywhere[0]!.dump).toContain(row.id);
    expect(everywhere[0]!.dump).not.toContain(token);

    // The event keeps a placeholder and the API puts the link back; the partner sees what it saw at creation.
    const [event] = (await partner.api.get(`/v1/events?event_resource_id=${row.id}`)).body.items;
    expect(event.event_resource.verification.verification_link).toBe(created.body.verification.verification_link);
    expect((await harness.http.get(pathOf(created.body.verification.verification_link))).status).toBe(200);
  });

  it('expires after VERIFICATION_LINK_TTL_HOURS; the API then shows a new link, and the old one stays dead', async () => {
    const before = Date.now();
    const customer = await createCustomer(partner.api, individualCustomer());
    const row = await harness.prisma.customer.findUniqueOrThrow({ where: { id: customer.id } });
    const lifetime = row.verificationLinkExpiresAt.getTime() - before;
    expect(harness.config.verificationLinkTtlHours).toBe(168);
    expect(lifetime).toBeGreaterThanOrEqual(168 * 3_600_000 - 60_000);
    expect(lifetime).toBeLessThanOrEqual(168 * 3_600_000 + 60_000);

    const oldPath = pathOf(customer.verification.verification_link);
    // A week passes (the expiry is moved instead of the clock).
    await harness.prisma.customer.update({
      where: { id: customer.id },
      data: { verificationLinkExpiresAt: new Date(Date.now() - 1000), updatedAt: row.updatedAt },
    });
    const expired = await harness.http.get(oldPath);
    expect(expired.status).toBe(404);
    expect(expired.body.error).toEqual({
      code: 'not_found',
      message: expect.stringContaining('expired or been replaced'),
    });

    const renewed = await customerNow(customer.id);
    expect(renewed.verification.verification_link).not.toBe(customer.verification.verification_link);
    expect(renewed.updated_at).toBe(customer.updated_at); // a new link is not a change of the customer
    expect((await harness.http.get(pathOf(renewed.verification.verification_link))).status).toBe(200);
    expect((await harness.http.get(oldPath)).status).toBe(404);
    const listed = (await partner.api.get('/v1/customers?limit=100')).body.items.find(
      (item: { id: string }) => item.id === customer.id,
    );
    expect(listed.verification_link).toBe(renewed.verification.verification_link);
  });

  it('is replaced on every status change; the page follows the end user to the new link', async () => {
    const customer = await createCustomer(partner.api, individualCustomer());
    const first = pathOf(customer.verification.verification_link);
    await uploadPassportAndAddress(first);

    const submitted = await harness.http.post(`${first}/submit`);
    expect(submitted.status).toBe(303);
    const next = new URL(submitted.headers.location as string, 'http://localhost').pathname;
    expect(next).not.toBe(first);
    expect((await harness.http.get(first)).status).toBe(404);
    const underReview = await harness.http.get(next);
    expect(underReview.status).toBe(200);
    expect(underReview.text).toContain('<strong id="status" data-status="under_review">Under review</strong>');
    expect((await customerNow(customer.id)).verification.verification_link).toBeNull();

    const decided = await partner.api.post(`/v1/sandbox/customers/${customer.id}/verification-outcome`).send({
      outcome: 'partially_rejected',
      rejected_steps: [{ name: 'PROOF_OF_ADDRESS', rejection_code: ['EXPIRED'], rejection_description: 'Old bill' }],
    });
    expect(decided.status).toBe(200);
    expect((await harness.http.get(next)).status).toBe(404);
    const reopened = await customerNow(customer.id);
    expect(reopened.status).toBe('partially_rejected');
    const third = pathOf(reopened.verification.verification_link);
    expect([first, next]).not.toContain(third);
    expect((await harness.http.get(third)).status).toBe(200);
    // The event of the change carries the link it issued.
    const events = (
      await partner.api.get(`/v1/events?event_resource_id=${customer.id}&event_type=customer.partially_rejected`)
    ).body.items;
    expect(events[0].event_resource.verification.verification_link).toBe(reopened.verification.verification_link);
  });

  it('is never written to the request log: requests are logged by route template', async () => {
    const lines: string[] = [];
    const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(line) });
    const app = request.agent(harness.createApp({ ...harness.services, logger }).callback());
    const customer = await createCustomer(partner.api, individualCustomer());
    const linkPath = pathOf(customer.verification.verification_link);
    const token = tokenOf(customer.verification.verification_link);

    expect((await app.get(`${linkPath}?notice=document_uploaded`)).status).toBe(200);
    const upload = await app
      .post(`${linkPath}/documents`)
      .field('document_type', 'SELFIE')
      .attach('file', Buffer.from('not a document'), 'x.bin');
    expect(upload.status).toBe(303);
    expect((await app.post(`${linkPath}/submit`)).status).toBe(303);
    expect((await app.get(`${linkPath}/unknown`)).status).toBe(404);
    expect((await app.get(`/verify/${'x'.repeat(43)}`)).status).toBe(404);
    expect((await app.get(`${linkPath}/theme.css`)).status).toBe(404); // this partner has no brand
    expect((await app.get(`${linkPath}/logo`)).status).toBe(404);

    const requests = lines
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .filter((l) => l.msg === 'request');
    expect(requests.map((entry) => [entry.route, entry.status])).toEqual([
      ['GET /verify/{token}', 200],
      ['POST /verify/{token}/documents', 303],
      ['POST /verify/{token}/submit', 303],
      [null, 404],
      ['GET /verify/{token}', 404],
      ['GET /verify/{token}/theme.css', 404],
      ['GET /verify/{token}/logo', 404],
    ]);
    expect(requests[3]!.path).toBe('/verify/{token}/unknown');
    expect(lines.join('\n')).not.toContain(token);
  });
});

describe('uploads', () => {
  let server: http.Server;
  let port: number;
  beforeAll(async () => {
    server = harness.createApp(harness.services).listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  const boundary = 'x-boundary-7MA4YWxkTrZu0gW';
  function multipart(fields: Record<string, string>, file: Buffer): { head: Buffer; body: Buffer; tail: Buffer } {
    const parts = Object.entries(fields).map(
      ([name, value]) => `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`,
    );
    const head = Buffer.from(
      `${parts.join('')}--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="scan.pdf"\r\n` +
        'Content-Type: application/pdf\r\n\r\n',
    );
    return { head, body: file, tail: Buffer.from(`\r\n--${boundary}--\r\n`) };
  }

  /** Starts a POST declaring the whole length; the caller writes the body itself. */
  function startUpload(uploadPath: string, contentLength: number, toPort = port) {
    const outgoing = http.request({
      host: '127.0.0.1',
      port: toPort,
      method: 'POST',
      path: uploadPath,
      headers: { 'content-type': `multipart/form-data; boundary=${boundary}`, 'content-length': contentLength },
    });
    const response = new Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }>(
      (resolve, reject) => {
        outgoing.on('response', (incoming) => {
          const chunks: Buffer[] = [];
          incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
          incoming.on('end', () =>
            resolve({
              status: incoming.statusCode ?? 0,
              headers: incoming.headers,
              body: Buffer.concat(chunks).toString(),
            }),
          );
        });
        outgoing.on('error', reject);
      },
    );
    return { outgoing, response };
  }

  const stagedFiles = () => {
    try {
      return readdirSync(harness.services.documentStore.stagingDir).map((name) =>
        statSync(path.join(harness.services.documentStore.stagingDir, name)),
      );
    } catch {
      return [];
    }
  };

  it('with an invalid link are refused before their body is read', async () => {
    const declared = 10 * 1024 * 1024;
    const { outgoing, response } = startUpload(`/verify/${'A'.repeat(43)}/documents`, declared);
    outgoing.on('error', () => undefined); // the server may close the connection after answering
    outgoing.write(Buffer.alloc(64 * 1024, 0x41)); // 64 KB of the 10 MB announced, and nothing more
    const answer = await response;
    expect(answer.status).toBe(404);
    expect(JSON.parse(answer.body).error.code).toBe('not_found');
    outgoing.destroy();
    expect(stagedFiles()).toEqual([]);
  });

  it('over the per-customer cap are refused before their body is read, back to the page', async () => {
    const capped = harness
      .createApp({
        ...harness.services,
        config: { ...harness.config, hostedUploadsPerCustomer: 1 },
      })
      .listen(0, '127.0.0.1');
    try {
      await new Promise((resolve) => capped.once('listening', resolve));
      const customer = await createCustomer(partner.api, individualCustomer());
      const linkPath = pathOf(customer.verification.verification_link);
      const first = await request(capped)
        .post(`${linkPath}/documents`)
        .field('document_type', 'SELFIE')
        .attach('file', files.pdf, 'scan.pdf');
      expect(first.headers.location).toBe(`${linkPath}?notice=document_uploaded`);

      const declared = 10 * 1024 * 1024;
      const { outgoing, response } = startUpload(
        `${linkPath}/documents`,
        declared,
        (capped.address() as AddressInfo).port,
      );
      outgoing.on('error', () => undefined); // the server may close the connection after answering
      outgoing.write(Buffer.alloc(64 * 1024, 0x41)); // 64 KB of the 10 MB announced, and nothing more
      const answer = await response;
      expect(answer.status).toBe(303);
      expect(answer.headers.location).toBe(`${linkPath}?error=upload_limit_reached`);
      outgoing.destroy();
      expect(stagedFiles()).toEqual([]);
      expect(await harness.prisma.customerDocument.count({ where: { customerId: customer.id } })).toBe(1);
    } finally {
      capped.closeAllConnections();
      await new Promise((resolve) => capped.close(resolve));
    }
  });

  it('with a valid link are streamed to disk while they arrive, then stored with their hash', async () => {
    const customer = await createCustomer(partner.api, individualCustomer());
    const file = Buffer.concat([Buffer.from('%PDF-1.4\n'), Buffer.alloc(4 * 1024 * 1024, 0x20)]);
    const { head, body, tail } = multipart({ document_type: 'PASSPORT', document_side: 'FRONT' }, file);
    const linkPath = pathOf(customer.verification.verification_link);
    const { outgoing, response } = startUpload(`${linkPath}/documents`, head.length + body.length + tail.length);
    const firstPart = 1024 * 1024;
    outgoing.write(Buffer.concat([head, body.subarray(0, firstPart)]));
    // Half the request is still to come, yet the first megabyte is already on disk.
    const staged = await eventually(
      async () => stagedFiles(),
      (files) => files.some((stat) => stat.size >= firstPart - 64 * 1024),
    );
    expect(staged.some((stat) => stat.size >= firstPart - 64 * 1024)).toBe(true);
    expect(staged.every((stat) => stat.size < file.length)).toBe(true);
    outgoing.end(Buffer.concat([body.subarray(firstPart), tail]));

    const answer = await response;
    expect(answer.status).toBe(303);
    expect(answer.headers.location).toBe(`${linkPath}?notice=document_uploaded`);
    const [document] = await harness.prisma.customerDocument.findMany({ where: { customerId: customer.id } });
    expect(document).toMatchObject({
      sizeBytes: file.length,
      sha256: createHash('sha256').update(file).digest('hex'),
      contentType: 'application/pdf',
    });
    expect((await harness.services.documentStore.get(document!.storageKey)).equals(file)).toBe(true);
    await eventually(
      async () => stagedFiles(),
      (files) => files.length === 0,
    );
    expect(stagedFiles()).toEqual([]);
  });

  it('over 10 MB are sent back to the page with file_too_large and leave nothing behind', async () => {
    const customer = await createCustomer(partner.api, individualCustomer());
    const linkPath = pathOf(customer.verification.verification_link);
    const response = await harness.http
      .post(`${linkPath}/documents`)
      .field('document_type', 'SELFIE')
      .attach('file', Buffer.alloc(10 * 1024 * 1024 + 1, 0x25), 'big.pdf');
    expect(response.status).toBe(303);
    expect(response.headers.location).toBe(`${linkPath}?error=file_too_large`);
    expect((await harness.http.get(response.headers.location as string)).text).toContain(
      '<p role="alert" class="error">The file is larger than 10 MB.</p>',
    );
    await eventually(
      async () => stagedFiles(),
      (files) => files.length === 0,
    );
    expect(stagedFiles()).toEqual([]);
    expect(await harness.prisma.customerDocument.count({ where: { customerId: customer.id } })).toBe(0);
  });
});

describe('uploads per customer', () => {
  const cap = 2;
  /** The app with HOSTED_UPLOADS_PER_CUSTOMER = 2 (the harness's services, its config overridden). */
  const cappedApp = () =>
    harness.createApp({ ...harness.services, config: { ...harness.config, hostedUploadsPerCustomer: cap } });
  const storedFiles = (customerId: string) => {
    try {
      return readdirSync(path.join(harness.config.documentStorageDir, 'customers', customerId));
    } catch {
      return [];
    }
  };
  const uploadThrough = (api: ReturnType<typeof request>, linkPath: string, type = 'SELFIE') =>
    api.post(`${linkPath}/documents`).field('document_type', type).attach('file', files.pdf, 'scan.pdf');

  it('are capped by HOSTED_UPLOADS_PER_CUSTOMER: over it the page says so, nothing is stored, the form is gone', async () => {
    expect(harness.config.hostedUploadsPerCustomer).toBe(20); // the default
    const api = request(cappedApp().callback());
    const customer = await createCustomer(partner.api, individualCustomer());
    const linkPath = pathOf(customer.verification.verification_link);
    for (let upload = 0; upload < cap; upload += 1) {
      const stored = await uploadThrough(api, linkPath);
      expect(stored.status).toBe(303);
      expect(stored.headers.location).toBe(`${linkPath}?notice=document_uploaded`);
    }
    const refused = await uploadThrough(api, linkPath);
    expect(refused.status).toBe(303);
    expect(refused.headers.location).toBe(`${linkPath}?error=upload_limit_reached`);
    expect(await harness.prisma.customerDocument.count({ where: { customerId: customer.id } })).toBe(cap);
    expect(storedFiles(customer.id)).toHaveLength(cap);

    const page = await api.get(refused.headers.location as string);
    expect(page.status).toBe(200);
    expect(page.text).toContain(
      '<p role="alert" class="error">No more documents can be uploaded on this page (at most 2). ' +
        'Please contact the company that sent you this link.</p>',
    );
    expect(page.text).toContain('<p>No more documents can be uploaded on this page.</p>');
    expect(page.text).not.toContain('/documents"');
    expect(page.text).toContain(`action="${linkPath}/submit"`); // submitting is still possible

    // The partner's API is not capped, and its uploads do not count against the page's.
    const viaApi = await partner.api
      .post(`/v1/customers/${customer.id}/documents`)
      .field('metadata', JSON.stringify({ document_type: 'PROOF_OF_ADDRESS' }))
      .attach('file', files.pdf, 'bill.pdf');
    expect(viaApi.status).toBe(204);
    expect(
      await harness.prisma.customerDocument.groupBy({
        by: ['uploadedVia'],
        where: { customerId: customer.id },
        _count: true,
        orderBy: { uploadedVia: 'asc' },
      }),
    ).toEqual([
      { uploadedVia: 'api', _count: 1 },
      { uploadedVia: 'hosted_page', _count: cap },
    ]);
  });

  it('hold under concurrent uploads: exactly the cap is stored, the others are refused', async () => {
    const api = request(cappedApp().callback());
    const customer = await createCustomer(partner.api, individualCustomer());
    const linkPath = pathOf(customer.verification.verification_link);
    const answers = await Promise.all(Array.from({ length: 6 }, () => uploadThrough(api, linkPath)));
    expect(answers.map((answer) => answer.status)).toEqual(Array(6).fill(303));
    const locations = answers.map((answer) => answer.headers.location as string).sort();
    expect(locations).toEqual(
      [
        ...Array(6 - cap).fill(`${linkPath}?error=upload_limit_reached`),
        ...Array(cap).fill(`${linkPath}?notice=document_uploaded`),
      ].sort(),
    );
    expect(await harness.prisma.customerDocument.count({ where: { customerId: customer.id } })).toBe(cap);
    await eventually(
      async () => storedFiles(customer.id),
      (names) => names.length === cap,
    );
    expect(storedFiles(customer.id)).toHaveLength(cap);
  });
});

describe('messages on the page', () => {
  /** What the end user reads for each code; every code the page knows is here (checked below). */
  const texts = {
    notice: {
      document_uploaded: 'Document uploaded.',
      submitted: 'Submitted: your documents are under review.',
    },
    error: {
      file_missing: 'Choose a file to upload.',
      file_invalid: 'The file must be a PDF, JPEG, PNG, WEBP or HEIC document, and not empty.',
      file_too_large: 'The file is larger than 10 MB.',
      document_side_invalid:
        'Choose the side (front or back) of a passport, national ID card or driver’s license, and no side for other documents.',
      document_invalid: 'This document type, or the person chosen, does not fit this verification.',
      upload_limit_reached:
        'No more documents can be uploaded on this page (at most 20). Please contact the company that sent you this link.',
      documents_missing: 'Upload the missing documents before submitting: Identity document; Proof of address.',
      under_review: 'Your documents are under review: please wait for the result.',
      already_approved: 'Your verification is complete: there is nothing more to do.',
      rejected: 'Your verification was declined: no more documents are accepted.',
      request_invalid: 'The form could not be processed. Please try again.',
    },
  };
  const shown = (page: string, kind: 'notice' | 'error') =>
    (kind === 'notice' ? /<p role="status">([^<]*)<\/p>/ : /<p role="alert" class="error">([^<]*)<\/p>/).exec(
      page,
    )?.[1] ?? null;

  it('are the fixed text of each known code, and the page knows no other code', async () => {
    expect(Object.keys(texts.notice).sort()).toEqual([...hostedNoticeCodes].sort());
    expect(Object.keys(texts.error).sort()).toEqual([...hostedErrorCodes].sort());
    const customer = await createCustomer(partner.api, individualCustomer());
    const linkPath = pathOf(customer.verification.verification_link);
    for (const kind of ['notice', 'error'] as const) {
      for (const [code, text] of Object.entries(texts[kind])) {
        const page = await harness.http.get(`${linkPath}?${kind}=${code}`);
        expect(page.status).toBe(200);
        expect({ code, text: shown(page.text, kind) }).toEqual({ code, text });
      }
    }
  });

  it('never take text from the query string: unknown codes, markup and made-up wording show nothing', async () => {
    const customer = await createCustomer(partner.api, individualCustomer());
    const linkPath = pathOf(customer.verification.verification_link);
    const plain = await harness.http.get(linkPath);
    expect(plain.status).toBe(200);
    for (const [kind, value] of [
      ['error', '<script>alert(1)</script>'],
      ['error', '</p><a href="https://evil.example">Verify again here</a>'],
      ['notice', 'Your account is suspended, call +1 555 0100 to restore it'],
      ['notice', 'Document uploaded.'], // the old wording: a code is expected now
      ['notice', 'file_too_large'], // an error's code as a notice
      ['error', 'document_uploaded'],
      ['error', 'constructor'],
      ['notice', '__proto__'],
      ['error', 'toString'],
      ['notice', 'hasOwnProperty'],
      ['error', 'FILE_TOO_LARGE'],
    ]) {
      const page = await harness.http.get(`${linkPath}?${kind}=${encodeURIComponent(value as string)}`);
      expect({ value, status: page.status }).toEqual({ value, status: 200 });
      expect(page.text).toBe(plain.text); // exactly the page without a message
    }
    for (const fragment of ['<script>', 'alert(1)', 'evil.example', 'suspended', '555 0100', 'function']) {
      expect(plain.text).not.toContain(fragment);
    }
  });

  it('are what the form actions send the browser back with', async () => {
    const customer = await createCustomer(partner.api, individualCustomer());
    const linkPath = pathOf(customer.verification.verification_link);
    const upload = (fields: Record<string, string>, file: Buffer | null = files.pdf) => {
      let post = harness.http.post(`${linkPath}/documents`);
      for (const [name, value] of Object.entries(fields)) post = post.field(name, value);
      return file ? post.attach('file', file, 'scan.pdf') : post;
    };
    const cases: Array<[string, Promise<request.Response>, string]> = [
      [
        'a business document for an individual',
        upload({ document_type: 'SHAREHOLDER_REGISTRY' }),
        'error=document_invalid',
      ],
      ['a passport without its side', upload({ document_type: 'PASSPORT' }), 'error=document_side_invalid'],
      [
        'a side for a proof of address',
        upload({ document_type: 'PROOF_OF_ADDRESS', document_side: 'FRONT' }),
        'error=document_side_invalid',
      ],
      ['no file', upload({ document_type: 'SELFIE' }, null), 'error=file_missing'],
      ['not a document', upload({ document_type: 'SELFIE' }, files.text), 'error=file_invalid'],
      ['an empty file', upload({ document_type: 'SELFIE' }, Buffer.alloc(0)), 'error=file_invalid'],
    ];
    for (const [what, answer, query] of cases) {
      const response = await answer;
      expect({ what, status: response.status, location: response.headers.location }).toEqual({
        what,
        status: 303,
        location: `${linkPath}?${query}`,
      });
    }
    expect(await harness.prisma.customerDocument.count({ where: { customerId: customer.id } })).toBe(0);

    const early = await harness.http.post(`${linkPath}/submit`);
    expect(early.headers.location).toBe(`${linkPath}?error=documents_missing`);
    await uploadPassportAndAddress(linkPath);
    const submitted = await harness.http.post(`${linkPath}/submit`);
    expect(submitted.status).toBe(303);
    const next = new URL(submitted.headers.location as string, 'http://localhost');
    expect(next.search).toBe('?notice=submitted');
    const late = await harness.http
      .post(`${next.pathname}/documents`)
      .field('document_type', 'SELFIE')
      .attach('file', files.pdf, 'selfie.pdf');
    expect(late.headers.location).toBe(`${next.pathname}?error=under_review`);
  });
});

describe('the page', () => {
  it('answers with a strict Content-Security-Policy: its own files only, no inline code, and no caching', async () => {
    const customer = await createCustomer(partner.api, individualCustomer());
    const page = await harness.http.get(pathOf(customer.verification.verification_link));
    expect(page.status).toBe(200);
    expect(page.headers['content-security-policy']).toBe(hostedPageContentSecurityPolicy);
    expect(page.headers['content-security-policy']).toContain("frame-ancestors 'none'");
    expect(page.headers['content-security-policy']).toContain("default-src 'none'");
    expect(page.headers['content-security-policy']).toContain("script-src 'self'");
    expect(page.headers['content-security-policy']).toContain("style-src 'self'");
    expect(page.headers['content-security-policy']).not.toMatch(/unsafe-inline|unsafe-eval|https?:|\*/);
    expect(page.text).not.toMatch(/style="|<style|<script>|\son[a-z]+=/i);
    expect(page.text).toContain('<link rel="stylesheet" href="/hosted-assets/hosted.css">');
    expect(page.text).toContain('<script src="/hosted-assets/hosted.js" defer></script>');
    // Every resource the page names is on our origin.
    for (const [, url] of page.text.matchAll(/(?:src|href)="([^"]*)"/g)) expect(url).toMatch(/^(\/|\?lang=)/);
    for (const [asset, type] of [
      ['/hosted-assets/hosted.css', 'text/css; charset=utf-8'],
      ['/hosted-assets/hosted.js', 'application/javascript; charset=utf-8'],
    ] as const) {
      const file = await harness.http.get(asset);
      expect({ asset, status: file.status, type: file.headers['content-type'] }).toEqual({ asset, status: 200, type });
      expect(file.headers['x-content-type-options']).toBe('nosniff');
    }
    expect(page.headers).toMatchObject({
      'x-frame-options': 'DENY',
      'cache-control': 'no-store',
      'referrer-policy': 'no-referrer',
      'x-content-type-options': 'nosniff',
    });
  });

  it("of a business lists the company's documents and each owner above 25% by name, in Portuguese", async () => {
    const customer = await createCustomer(partner.api, businessCustomer());
    const page = await harness.http
      .get(pathOf(customer.verification.verification_link))
      .set('Accept-Language', 'pt-BR');
    expect(page.status).toBe(200);
    const titles = [...page.text.matchAll(/<h3>([^<]*)/g)].map((match) => match[1]);
    expect(titles).toEqual([
      'Certidão de constituição',
      'Contrato social',
      'Quadro de sócios',
      'Documento de identidade de Carlos Lima',
    ]);
    const owner = customer.beneficiaries![0]!.id;
    expect(page.text).toContain(`<input type="hidden" name="beneficiary_id" value="${owner}">`);
    expect(page.text).not.toContain('Beatriz'); // 20.5%: no document needed
  });
});

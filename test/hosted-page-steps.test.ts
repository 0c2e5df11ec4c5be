// The hosted page's steps and language, as pure rules (src/domain/hosted-page.ts): what a customer still has to
// provide, what is done, and which language the page speaks. No database, no browser.
import { HostedPageInput, hostedSteps, missingSteps, negotiateLocale, progressOf } from '../src/domain/hosted-page';
import { hostedTexts } from '../src/domain/hosted-texts';
import { documentTypes, rejectionCodes } from '../src/domain/verification';

const step = (name: string, state = 'pending', extra: Partial<HostedPageInput['steps'][number]> = {}) => ({
  name,
  state,
  rejectionCodes: [],
  rejectionDescription: null,
  awaitingDocument: false,
  ...extra,
});
const doc = (documentType: string, documentSide: string | null = null, beneficiaryId: string | null = null) => ({
  documentType,
  documentSide,
  beneficiaryId,
});
const view = (steps: ReturnType<typeof hostedSteps>) => steps.map((s) => `${s.id}:${s.state}`);

describe('steps of a business', () => {
  const business = (documents: HostedPageInput['documents'], steps: HostedPageInput['steps']): HostedPageInput => ({
    type: 'business',
    status: 'pending',
    beneficiaries: [
      { id: 'b1', name: 'Ana Souza', shareSize: '60' },
      { id: 'b2', name: 'Beatriz Lima', shareSize: '20.5' },
    ],
    documents,
    steps,
  });
  const pendingSteps = [
    'CUSTOMER_DATA',
    'INCORPORATION_CERT',
    'INCORPORATION_ARTICLES',
    'SHAREHOLDER_REGISTRY',
    'CUSTOMER_BENEFICIARIES',
  ].map((name) => step(name));

  it('lists the company documents and the identity of each owner above 25%, by name', () => {
    const steps = hostedSteps(
      business([doc('INCORPORATION_CERTIFICATE'), doc('NATIONAL_ID', 'FRONT', 'b1')], pendingSteps),
    );
    expect(view(steps)).toEqual([
      'step-incorporation-certificate:uploaded',
      'step-incorporation-articles:todo',
      'step-shareholder-registry:todo',
      'step-owner-b1:todo',
    ]);
    expect(steps[3]!.beneficiary).toEqual({ id: 'b1', name: 'Ana Souza' });
    expect(steps[3]!.sidesReceived).toEqual({ NATIONAL_ID: ['FRONT'] });
    expect(progressOf(steps)).toEqual({ done: 1, total: 4 });
    expect(missingSteps(steps).map((s) => s.id)).toEqual([
      'step-incorporation-articles',
      'step-shareholder-registry',
      'step-owner-b1',
    ]);
  });

  it('after a partial rejection asks only for the rejected step, with its reason', () => {
    const steps = hostedSteps({
      ...business(
        [doc('INCORPORATION_CERTIFICATE'), doc('INCORPORATION_ARTICLES'), doc('SHAREHOLDER_REGISTRY')],
        [
          step('CUSTOMER_DATA', 'approved'),
          step('INCORPORATION_CERT', 'approved'),
          step('INCORPORATION_ARTICLES', 'approved'),
          step('SHAREHOLDER_REGISTRY', 'partially_rejected', {
            rejectionCodes: ['ILLEGIBLE'],
            rejectionDescription: 'Página 2 cortada',
            awaitingDocument: true,
          }),
          step('CUSTOMER_BENEFICIARIES', 'approved'),
        ],
      ),
      status: 'partially_rejected',
    });
    expect(missingSteps(steps).map((s) => s.id)).toEqual(['step-shareholder-registry']);
    expect(steps.find((s) => s.id === 'step-shareholder-registry')!.rejection).toEqual({
      codes: ['ILLEGIBLE'],
      description: 'Página 2 cortada',
    });
    expect(steps.filter((s) => s.state === 'accepted').map((s) => s.id)).toEqual([
      'step-incorporation-certificate',
      'step-incorporation-articles',
      'step-owner-b1',
    ]);
  });
});

describe('steps of an individual', () => {
  it('a rejected step with a new document is ready again; a rejected CUSTOMER_DATA asks for no upload', () => {
    const steps = hostedSteps({
      type: 'individual',
      status: 'partially_rejected',
      beneficiaries: [],
      documents: [doc('PASSPORT', 'FRONT'), doc('PROOF_OF_ADDRESS'), doc('PROOF_OF_ADDRESS')],
      steps: [
        step('CUSTOMER_DATA', 'partially_rejected', { rejectionCodes: ['DATA_MISMATCH'] }),
        step('IDENTITY_DOCUMENT', 'approved'),
        step('PROOF_OF_ADDRESS', 'partially_rejected', { rejectionCodes: ['EXPIRED'], awaitingDocument: false }),
      ],
    });
    expect(view(steps)).toEqual(['step-data:rejected', 'step-identity:accepted', 'step-proof-of-address:uploaded']);
    expect(missingSteps(steps)).toEqual([]); // no selfie after the first review, and data needs no upload
  });
});

describe('the language', () => {
  it.each([
    [{ acceptLanguage: 'pt-BR,pt;q=0.9,en;q=0.8' }, 'pt'],
    [{ acceptLanguage: 'es-MX' }, 'es'],
    [{ acceptLanguage: 'fr-FR, es;q=0.4, pt;q=0.6' }, 'pt'],
    [{ acceptLanguage: 'de, *;q=0.1' }, 'en'],
    [{ acceptLanguage: 'pt;q=0, es' }, 'es'],
    [{ acceptLanguage: '' }, 'en'],
    [{ query: 'es', cookie: 'pt', acceptLanguage: 'en' }, 'es'],
    [{ query: 'xx', cookie: 'pt', acceptLanguage: 'en' }, 'pt'],
    [{ cookie: '<script>', acceptLanguage: 'es' }, 'es'],
  ])('%j speaks %s', (choice, locale) => {
    expect(negotiateLocale(choice)).toBe(locale);
  });

  it('every language names every document type and rejection code', () => {
    for (const texts of Object.values(hostedTexts)) {
      for (const type of documentTypes) expect(texts.documents[type]).toMatch(/\S/);
      for (const code of rejectionCodes) expect(texts.rejectionCodes[code]).toMatch(/\S/);
    }
  });
});

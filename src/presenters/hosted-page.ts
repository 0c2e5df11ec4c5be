// The hosted verification page as HTML: pure, from the page's steps (src/domain/hosted-page.ts) and texts
// (src/domain/hosted-texts.ts). No inline script or style: the page links /hosted-assets/hosted.css and .js, and
// the partner's theme as a stylesheet of its own. Every value from storage is escaped; nothing comes from the query.
import {
  hostedAssetPaths,
  hostedLocales,
  HostedLocale,
  HostedStep,
  missingSteps,
  needsUpload,
  progressOf,
} from '../domain/hosted-page';
import { formatDate, hostedTexts, HostedTexts } from '../domain/hosted-texts';
import type { DocumentType, RejectionCode } from '../domain/verification';

export interface HostedPageView {
  locale: HostedLocale;
  token: string;
  status: 'pending' | 'under_review' | 'approved' | 'partially_rejected' | 'rejected';
  customerName: string;
  steps: HostedStep[];
  brand: { displayName: string | null; hasLogo: boolean; hasAccent: boolean };
  notice: string | null;
  error: string | null;
  uploadsLeft: boolean;
  expiresAt: Date;
  maxFileBytes: number;
}

/** What the file inputs accept; the server decides by the bytes (src/domain/file-types.ts). */
const documentAccept = 'image/*,application/pdf';
const acceptedMimes = 'application/pdf,image/jpeg,image/png,image/webp,image/heic,image/heif';

export const escapeHtml = (value: string) =>
  value.replace(
    /[&<>"']/g,
    (char) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[char] ?? char,
  );

/** The step's title, in the page's words. */
export function stepTitle(t: HostedTexts, step: HostedStep): string {
  switch (step.kind) {
    case 'identity':
      return step.beneficiary ? t.identityOf(step.beneficiary.name) : t.identityTitle;
    case 'selfie':
      return t.selfieTitle;
    case 'data':
      return t.dataTitle;
    default:
      return t.documents[step.documentTypes[0] as DocumentType];
  }
}

function hintOf(t: HostedTexts, step: HostedStep): string {
  if (step.kind === 'identity') return t.identityHint;
  if (step.kind === 'selfie') return t.selfieHint;
  if (step.kind === 'data') return t.dataHelp;
  return step.documentTypes[0] === 'PROOF_OF_ADDRESS' ? t.proofOfAddressHint : t.companyHint;
}

function receivedOf(t: HostedTexts, step: HostedStep): string {
  const parts = Object.entries(step.sidesReceived).map(
    ([type, sides]) =>
      `${t.documents[type as DocumentType]} (${sides.map((side) => t.sides[side].toLowerCase()).join(', ')})`,
  );
  return parts.length > 0 && step.state === 'todo' ? `<p class="received">${escapeHtml(t.received(parts))}</p>` : '';
}

function rejectionOf(t: HostedTexts, step: HostedStep): string {
  if (!step.rejection || step.state !== 'rejected') return '';
  const reasons = step.rejection.codes
    .map((code) => t.rejectionCodes[code as RejectionCode])
    .filter((text): text is string => text !== undefined);
  return `<div class="reason"><p><strong>${escapeHtml(t.whyRejected)}</strong> ${escapeHtml(reasons.join('; ') || '—')}.</p>${
    step.rejection.description
      ? `<p>${escapeHtml(t.reviewerNote)} <q>${escapeHtml(step.rejection.description)}</q></p>`
      : ''
  }</div>`;
}

/** The identity choice: preselects the document of which one side already arrived, and its missing side. */
function identityFields(t: HostedTexts, step: HostedStep): string {
  const started = (Object.keys(step.sidesReceived) as DocumentType[])[0];
  const chosenType = started ?? 'PASSPORT';
  const chosenSide = step.sidesReceived[chosenType]?.includes('FRONT') ? 'BACK' : 'FRONT';
  const radio = (name: string, value: string, label: string, checked: boolean) =>
    `<label class="choice"><input type="radio" name="${name}" value="${value}"${checked ? ' checked' : ''} required> ${escapeHtml(label)}</label>`;
  return `<fieldset><legend>${escapeHtml(t.documentTypeLegend)}</legend>${step.documentTypes
    .map((type) => radio('document_type', type, t.documents[type], type === chosenType))
    .join('')}</fieldset>
<fieldset><legend>${escapeHtml(t.sideLegend)}</legend>${(['FRONT', 'BACK'] as const)
    .map((side) => radio('document_side', side, t.sides[side], side === chosenSide))
    .join('')}</fieldset>`;
}

function uploadForm(view: HostedPageView, t: HostedTexts, step: HostedStep): string {
  const mb = view.maxFileBytes / (1024 * 1024);
  const selfie = step.kind === 'selfie';
  const inputId = `file-${step.id}`;
  const fields =
    step.kind === 'identity'
      ? identityFields(t, step)
      : `<input type="hidden" name="document_type" value="${step.documentTypes[0]}">`;
  return `<form method="post" action="/verify/${view.token}/documents" enctype="multipart/form-data" class="upload" data-max-bytes="${view.maxFileBytes}" data-types="${
    selfie ? 'image/jpeg,image/png,image/webp,image/heic,image/heif' : acceptedMimes
  }" data-msg-too-large="${escapeHtml(t.jsTooLarge(mb))}" data-msg-type="${escapeHtml(t.jsWrongType)}" data-msg-preview="${escapeHtml(
    t.previewAlt,
  )}" data-msg-sending="${escapeHtml(t.sending)}">
${fields}${step.beneficiary ? `<input type="hidden" name="beneficiary_id" value="${escapeHtml(step.beneficiary.id)}">` : ''}
<label class="file" for="${inputId}">${escapeHtml(selfie ? t.photoLabel : t.fileLabel)}</label>
<input type="file" id="${inputId}" name="file" required accept="${selfie ? 'image/*' : documentAccept}" capture="${
    selfie ? 'user' : 'environment'
  }" aria-describedby="${inputId}-help">
<p class="help" id="${inputId}-help">${escapeHtml(selfie ? t.photoHelp(mb) : t.fileHelp(mb))}</p>
<div class="preview" hidden></div>
<button type="submit" class="primary">${escapeHtml(t.uploadButton)}</button>
</form>`;
}

function stepItem(view: HostedPageView, t: HostedTexts, step: HostedStep, open: boolean): string {
  const action = open && needsUpload(step) && view.uploadsLeft ? uploadForm(view, t, step) : '';
  const hint = needsUpload(step) || step.kind === 'data' ? `<p class="hint">${escapeHtml(hintOf(t, step))}</p>` : '';
  return `<li class="step state-${step.state}" id="${escapeHtml(step.id)}" data-state="${step.state}">
<h3>${escapeHtml(stepTitle(t, step))}${step.optional ? ` <span class="tag">${escapeHtml(t.optional)}</span>` : ''}</h3>
<p class="state"><span class="badge">${escapeHtml(t.stepStates[step.state])}</span></p>
${rejectionOf(t, step)}${hint}${receivedOf(t, step)}${action}
</li>`;
}

function brandHeader(view: HostedPageView, t: HostedTexts): string {
  const name = view.brand.displayName;
  const logo = view.brand.hasLogo
    ? `<img class="logo" src="/verify/${view.token}/logo" alt="${escapeHtml(name ?? '')}" height="40">`
    : '';
  const languages = hostedLocales
    .map((locale) => {
      const other = hostedTexts[locale];
      return `<a href="?lang=${locale}" hreflang="${other.tag}" lang="${other.tag}"${
        locale === view.locale ? ' aria-current="true"' : ''
      }>${escapeHtml(other.languageName)}</a>`;
    })
    .join('');
  return `<header class="brand">${logo}${name && !view.brand.hasLogo ? `<span class="brand-name">${escapeHtml(name)}</span>` : ''}
<nav class="languages" aria-label="${escapeHtml(t.languageNav)}">${languages}</nav></header>`;
}

export function renderHostedPage(view: HostedPageView): string {
  const t = hostedTexts[view.locale];
  const open = view.status === 'pending' || view.status === 'partially_rejected';
  const todo = view.steps.filter((step) => needsUpload(step) || step.state === 'rejected');
  const done = view.steps.filter((step) => !todo.includes(step));
  const progress = progressOf(view.steps);
  const themeLink = view.brand.hasAccent ? `\n<link rel="stylesheet" href="/verify/${view.token}/theme.css">` : '';
  const list = (title: string, id: string, steps: HostedStep[]) =>
    steps.length > 0
      ? `<section aria-labelledby="${id}"><h2 id="${id}">${escapeHtml(title)}</h2><ol class="steps">${steps
          .map((step) => stepItem(view, t, step, open))
          .join('')}</ol></section>`
      : '';
  return `<!doctype html>
<html lang="${t.tag}"><head><meta charset="utf-8"><title>${escapeHtml(
    view.brand.displayName ? `${t.title} · ${view.brand.displayName}` : t.title,
  )}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="stylesheet" href="${hostedAssetPaths.css}">${themeLink}
<script src="${hostedAssetPaths.js}" defer></script></head>
<body>
${brandHeader(view, t)}
<main>
<h1>${escapeHtml(t.title)}</h1>
<p class="who">${escapeHtml(view.customerName)} · ${escapeHtml(t.statusLabel)}: <strong id="status" data-status="${view.status}">${escapeHtml(
    t.statuses[view.status],
  )}</strong></p>
${view.notice ? `<p role="status">${escapeHtml(view.notice)}</p>` : ''}
${view.error ? `<p role="alert" class="error">${escapeHtml(view.error)}</p>` : ''}
${open ? `<p class="intro">${escapeHtml(t.intro(view.brand.displayName))}</p>` : ''}
${
  open && progress.total > 0
    ? `<div class="progress"><label for="progress">${escapeHtml(t.progressLabel)}</label>
<progress id="progress" max="${progress.total}" value="${progress.done}">${progress.done}/${progress.total}</progress>
<p>${escapeHtml(t.progress(progress.done, progress.total))}</p></div>`
    : ''
}
${open ? list(t.todoTitle, 'todo-title', todo) : ''}
${list(t.doneTitle, 'done-title', done)}
${
  open
    ? `${view.uploadsLeft ? '' : `<p>${escapeHtml(t.uploadsExhausted)}</p>`}
<section aria-labelledby="submit-title" class="submit"><h2 id="submit-title">${escapeHtml(t.submitTitle)}</h2>
<p>${escapeHtml(t.submitHelp)}</p>
<form method="post" action="/verify/${view.token}/submit"><button type="submit" class="primary">${escapeHtml(t.submitButton)}</button></form></section>`
    : ''
}
<section aria-labelledby="next-title" class="next"><h2 id="next-title">${escapeHtml(t.nextTitle)}</h2><p>${escapeHtml(
    t.next[view.status],
  )}</p>${open ? `<p class="expiry">${escapeHtml(t.validUntil(formatDate(view.locale, view.expiresAt)))}</p>` : ''}</section>
</main>
</body></html>`;
}

/** The names of the required steps still missing, for the documents_missing message. */
export function missingNames(locale: HostedLocale, steps: HostedStep[]): string[] {
  const t = hostedTexts[locale];
  return missingSteps(steps).map((step) => stepTitle(t, step));
}

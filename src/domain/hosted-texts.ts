// Every word of the hosted verification page in Portuguese, Spanish and English: labels, statuses, document
// names, review reasons, notices and errors. Texts are fixed here; the page escapes them and the few values they
// name (a person's or the partner's name) when it renders. Dates are formatted with Intl in the page's locale.
import type { DocumentType, RejectionCode } from './verification';
import type { HostedLocale, HostedStepState } from './hosted-page';

export const noticeCodes = ['document_uploaded', 'submitted'] as const;
export type NoticeCode = (typeof noticeCodes)[number];
export const errorCodes = [
  'file_missing',
  'file_invalid',
  'file_too_large',
  'document_side_invalid',
  'document_invalid',
  'upload_limit_reached',
  'documents_missing',
  'under_review',
  'already_approved',
  'rejected',
  'request_invalid',
] as const;
export type ErrorCode = (typeof errorCodes)[number];

/** What error texts may name: the service's own state, never the request's. */
export interface ErrorContext {
  uploadLimit: number;
  maxMegabytes: number;
  /** Names of the steps still missing (for documents_missing). */
  missing: string[];
}

export interface HostedTexts {
  /** BCP 47 tag for `lang` and Intl. */
  tag: string;
  languageName: string;
  title: string;
  languageNav: string;
  statusLabel: string;
  statuses: Record<'pending' | 'under_review' | 'approved' | 'partially_rejected' | 'rejected', string>;
  intro: (partner: string | null) => string;
  stepStates: Record<HostedStepState, string>;
  optional: string;
  documents: Record<DocumentType, string>;
  sides: { FRONT: string; BACK: string };
  identityTitle: string;
  identityOf: (name: string) => string;
  identityHint: string;
  proofOfAddressHint: string;
  selfieTitle: string;
  selfieHint: string;
  companyHint: string;
  dataTitle: string;
  dataHelp: string;
  received: (parts: string[]) => string;
  documentTypeLegend: string;
  sideLegend: string;
  fileLabel: string;
  photoLabel: string;
  fileHelp: (maxMegabytes: number) => string;
  photoHelp: (maxMegabytes: number) => string;
  uploadButton: string;
  sending: string;
  previewAlt: string;
  jsTooLarge: (maxMegabytes: number) => string;
  jsWrongType: string;
  whyRejected: string;
  reviewerNote: string;
  rejectionCodes: Record<RejectionCode, string>;
  todoTitle: string;
  doneTitle: string;
  progress: (done: number, total: number) => string;
  progressLabel: string;
  submitTitle: string;
  submitButton: string;
  submitHelp: string;
  uploadsExhausted: string;
  nextTitle: string;
  next: Record<'pending' | 'under_review' | 'approved' | 'partially_rejected' | 'rejected', string>;
  validUntil: (date: string) => string;
  notices: Record<NoticeCode, string>;
  errors: Record<ErrorCode, (context: ErrorContext) => string>;
}

const en: HostedTexts = {
  tag: 'en',
  languageName: 'English',
  title: 'Identity verification',
  languageNav: 'Language',
  statusLabel: 'Status',
  statuses: {
    pending: 'Waiting for your documents',
    under_review: 'Under review',
    approved: 'Approved',
    partially_rejected: 'Some items need to be replaced',
    rejected: 'Declined',
  },
  intro: (partner) =>
    partner
      ? `${partner} asks you to confirm your identity. It takes a few minutes: have your documents at hand.`
      : 'Please confirm your identity. It takes a few minutes: have your documents at hand.',
  stepStates: {
    todo: 'To do',
    uploaded: 'Received',
    in_review: 'Under review',
    accepted: 'Accepted',
    rejected: 'Not accepted: please replace it',
  },
  optional: 'Optional',
  documents: {
    PASSPORT: 'Passport',
    NATIONAL_ID: 'National ID card',
    DRIVER_LICENSE: "Driver's license",
    PROOF_OF_ADDRESS: 'Proof of address',
    SELFIE: 'Selfie',
    INCORPORATION_ARTICLES: 'Articles of incorporation',
    INCORPORATION_CERTIFICATE: 'Certificate of incorporation',
    INCUMBENCY_CERTIFICATE: 'Certificate of incumbency',
    SHAREHOLDER_REGISTRY: 'Shareholder registry',
    STATE_COMPANY_REGISTRY: 'State company registry extract',
  },
  sides: { FRONT: 'Front', BACK: 'Back' },
  identityTitle: 'Identity document',
  identityOf: (name) => `Identity document of ${name}`,
  identityHint: 'The photo page of a passport, or both sides of a national ID card or driver’s license.',
  proofOfAddressHint: 'A recent utility bill or bank statement showing your name and address.',
  selfieTitle: 'Selfie',
  selfieHint: 'A clear photo of your face, without glasses or hat. It can speed up the review.',
  companyHint: 'A scan or a clear photo of every page.',
  dataTitle: 'Your personal details',
  dataHelp:
    'No document is needed here: the company that sent you this link will correct your details. Then submit again.',
  received: (parts) => `Received: ${parts.join(', ')}.`,
  documentTypeLegend: 'Which document?',
  sideLegend: 'Which side?',
  fileLabel: 'Photo or file of the document',
  photoLabel: 'Photo of your face',
  fileHelp: (mb) => `Take a photo or choose a PDF, JPEG, PNG, WEBP or HEIC file, up to ${mb} MB.`,
  photoHelp: (mb) => `Take a photo with the front camera, or choose a JPEG, PNG, WEBP or HEIC picture, up to ${mb} MB.`,
  uploadButton: 'Upload',
  sending: 'Sending…',
  previewAlt: 'Preview of the chosen picture',
  jsTooLarge: (mb) => `This file is larger than ${mb} MB: choose a smaller one.`,
  jsWrongType: 'This file is not a PDF, JPEG, PNG, WEBP or HEIC document.',
  whyRejected: 'Why it was not accepted:',
  reviewerNote: 'Reviewer’s note:',
  rejectionCodes: {
    WRONG_ADDRESS: 'the address does not match the one we have',
    EXPIRED: 'the document has expired',
    FRAUDULENT: 'the document could not be confirmed as genuine',
    ILLEGIBLE: 'the picture is not readable (blurred, dark or cut off)',
    INCOMPLETE: 'part of the document is missing',
    DATA_MISMATCH: 'the details do not match the ones we have',
    UNSUPPORTED_DOCUMENT: 'this kind of document is not accepted',
    SANCTIONS_MATCH: 'it needs a manual check by our team',
    UNSUPPORTED_JURISDICTION: 'documents from this country are not accepted',
  },
  todoTitle: 'Still needed',
  doneTitle: 'Done',
  progress: (done, total) => `${done} of ${total} required steps done`,
  progressLabel: 'Progress',
  submitTitle: 'Send for review',
  submitButton: 'Submit for verification',
  submitHelp: 'Submit once every required step is done. You cannot change your documents while they are reviewed.',
  uploadsExhausted: 'No more documents can be uploaded on this page.',
  nextTitle: 'What happens next',
  next: {
    pending:
      'After you submit, your documents are reviewed. This page and the company that sent you the link show the result.',
    under_review:
      'Your documents are being reviewed. You do not need to do anything now: come back to this page later for the result.',
    approved: 'Your identity is confirmed. You can close this page.',
    partially_rejected: 'Replace the items that were not accepted and submit again; everything else is already done.',
    rejected: 'Your verification was declined. Please contact the company that sent you this link.',
  },
  validUntil: (date) => `This link is valid until ${date}.`,
  notices: {
    document_uploaded: 'Document uploaded.',
    submitted: 'Submitted: your documents are under review.',
  },
  errors: {
    file_missing: () => 'Choose a file to upload.',
    file_invalid: () => 'The file must be a PDF, JPEG, PNG, WEBP or HEIC document, and not empty.',
    file_too_large: (c) => `The file is larger than ${c.maxMegabytes} MB.`,
    document_side_invalid: () =>
      'Choose the side (front or back) of a passport, national ID card or driver’s license, and no side for other documents.',
    document_invalid: () => 'This document type, or the person chosen, does not fit this verification.',
    upload_limit_reached: (c) =>
      `No more documents can be uploaded on this page (at most ${c.uploadLimit}). ` +
      'Please contact the company that sent you this link.',
    documents_missing: (c) =>
      c.missing.length > 0
        ? `Upload the missing documents before submitting: ${c.missing.join('; ')}.`
        : 'Upload the missing documents before submitting.',
    under_review: () => 'Your documents are under review: please wait for the result.',
    already_approved: () => 'Your verification is complete: there is nothing more to do.',
    rejected: () => 'Your verification was declined: no more documents are accepted.',
    request_invalid: () => 'The form could not be processed. Please try again.',
  },
};

const pt: HostedTexts = {
  tag: 'pt-BR',
  languageName: 'Português',
  title: 'Verificação de identidade',
  languageNav: 'Idioma',
  statusLabel: 'Situação',
  statuses: {
    pending: 'Aguardando seus documentos',
    under_review: 'Em análise',
    approved: 'Aprovada',
    partially_rejected: 'Alguns itens precisam ser substituídos',
    rejected: 'Recusada',
  },
  intro: (partner) =>
    partner
      ? `${partner} pede que você confirme sua identidade. Leva poucos minutos: tenha seus documentos em mãos.`
      : 'Confirme sua identidade. Leva poucos minutos: tenha seus documentos em mãos.',
  stepStates: {
    todo: 'A fazer',
    uploaded: 'Recebido',
    in_review: 'Em análise',
    accepted: 'Aceito',
    rejected: 'Não aceito: envie outro',
  },
  optional: 'Opcional',
  documents: {
    PASSPORT: 'Passaporte',
    NATIONAL_ID: 'Carteira de identidade (RG)',
    DRIVER_LICENSE: 'Carteira de motorista (CNH)',
    PROOF_OF_ADDRESS: 'Comprovante de endereço',
    SELFIE: 'Selfie',
    INCORPORATION_ARTICLES: 'Contrato social',
    INCORPORATION_CERTIFICATE: 'Certidão de constituição',
    INCUMBENCY_CERTIFICATE: 'Certidão de administradores',
    SHAREHOLDER_REGISTRY: 'Quadro de sócios',
    STATE_COMPANY_REGISTRY: 'Certidão da junta comercial',
  },
  sides: { FRONT: 'Frente', BACK: 'Verso' },
  identityTitle: 'Documento de identidade',
  identityOf: (name) => `Documento de identidade de ${name}`,
  identityHint: 'A página com foto do passaporte, ou a frente e o verso do RG ou da CNH.',
  proofOfAddressHint: 'Uma conta de consumo ou extrato bancário recente com seu nome e endereço.',
  selfieTitle: 'Selfie',
  selfieHint: 'Uma foto nítida do seu rosto, sem óculos nem chapéu. Pode agilizar a análise.',
  companyHint: 'Uma digitalização ou foto nítida de todas as páginas.',
  dataTitle: 'Seus dados pessoais',
  dataHelp:
    'Nenhum documento é necessário aqui: a empresa que enviou este link vai corrigir seus dados. Depois, envie novamente.',
  received: (parts) => `Recebido: ${parts.join(', ')}.`,
  documentTypeLegend: 'Qual documento?',
  sideLegend: 'Qual lado?',
  fileLabel: 'Foto ou arquivo do documento',
  photoLabel: 'Foto do seu rosto',
  fileHelp: (mb) => `Tire uma foto ou escolha um arquivo PDF, JPEG, PNG, WEBP ou HEIC de até ${mb} MB.`,
  photoHelp: (mb) =>
    `Tire uma foto com a câmera frontal ou escolha uma imagem JPEG, PNG, WEBP ou HEIC de até ${mb} MB.`,
  uploadButton: 'Enviar documento',
  sending: 'Enviando…',
  previewAlt: 'Prévia da imagem escolhida',
  jsTooLarge: (mb) => `Este arquivo tem mais de ${mb} MB: escolha um menor.`,
  jsWrongType: 'Este arquivo não é um documento PDF, JPEG, PNG, WEBP ou HEIC.',
  whyRejected: 'Por que não foi aceito:',
  reviewerNote: 'Observação da análise:',
  rejectionCodes: {
    WRONG_ADDRESS: 'o endereço não confere com o que temos',
    EXPIRED: 'o documento está vencido',
    FRAUDULENT: 'não foi possível confirmar que o documento é autêntico',
    ILLEGIBLE: 'a imagem não está legível (desfocada, escura ou cortada)',
    INCOMPLETE: 'falta uma parte do documento',
    DATA_MISMATCH: 'os dados não conferem com os que temos',
    UNSUPPORTED_DOCUMENT: 'este tipo de documento não é aceito',
    SANCTIONS_MATCH: 'é preciso uma verificação manual da nossa equipe',
    UNSUPPORTED_JURISDICTION: 'documentos deste país não são aceitos',
  },
  todoTitle: 'Ainda falta',
  doneTitle: 'Concluído',
  progress: (done, total) => `${done} de ${total} etapas obrigatórias concluídas`,
  progressLabel: 'Progresso',
  submitTitle: 'Enviar para análise',
  submitButton: 'Enviar para verificação',
  submitHelp:
    'Envie quando todas as etapas obrigatórias estiverem concluídas. Durante a análise não é possível trocar os documentos.',
  uploadsExhausted: 'Não é possível enviar mais documentos por esta página.',
  nextTitle: 'O que acontece depois',
  next: {
    pending:
      'Depois do envio, seus documentos são analisados. Esta página e a empresa que enviou o link mostram o resultado.',
    under_review:
      'Seus documentos estão em análise. Você não precisa fazer nada agora: volte a esta página mais tarde para ver o resultado.',
    approved: 'Sua identidade foi confirmada. Você pode fechar esta página.',
    partially_rejected: 'Substitua os itens não aceitos e envie novamente; todo o resto já está concluído.',
    rejected: 'Sua verificação foi recusada. Entre em contato com a empresa que enviou este link.',
  },
  validUntil: (date) => `Este link é válido até ${date}.`,
  notices: {
    document_uploaded: 'Documento enviado.',
    submitted: 'Enviado: seus documentos estão em análise.',
  },
  errors: {
    file_missing: () => 'Escolha um arquivo para enviar.',
    file_invalid: () => 'O arquivo deve ser um documento PDF, JPEG, PNG, WEBP ou HEIC, e não pode estar vazio.',
    file_too_large: (c) => `O arquivo tem mais de ${c.maxMegabytes} MB.`,
    document_side_invalid: () =>
      'Escolha o lado (frente ou verso) do passaporte, RG ou CNH, e nenhum lado para os outros documentos.',
    document_invalid: () => 'Este tipo de documento, ou a pessoa escolhida, não corresponde a esta verificação.',
    upload_limit_reached: (c) =>
      `Não é possível enviar mais documentos por esta página (no máximo ${c.uploadLimit}). ` +
      'Entre em contato com a empresa que enviou este link.',
    documents_missing: (c) =>
      c.missing.length > 0
        ? `Envie os documentos que faltam antes de concluir: ${c.missing.join('; ')}.`
        : 'Envie os documentos que faltam antes de concluir.',
    under_review: () => 'Seus documentos estão em análise: aguarde o resultado.',
    already_approved: () => 'Sua verificação está concluída: não há mais nada a fazer.',
    rejected: () => 'Sua verificação foi recusada: nenhum documento novo é aceito.',
    request_invalid: () => 'Não foi possível processar o formulário. Tente novamente.',
  },
};

const es: HostedTexts = {
  tag: 'es',
  languageName: 'Español',
  title: 'Verificación de identidad',
  languageNav: 'Idioma',
  statusLabel: 'Estado',
  statuses: {
    pending: 'Esperando tus documentos',
    under_review: 'En revisión',
    approved: 'Aprobada',
    partially_rejected: 'Hay que reemplazar algunos elementos',
    rejected: 'Rechazada',
  },
  intro: (partner) =>
    partner
      ? `${partner} te pide que confirmes tu identidad. Son pocos minutos: ten tus documentos a mano.`
      : 'Confirma tu identidad. Son pocos minutos: ten tus documentos a mano.',
  stepStates: {
    todo: 'Pendiente',
    uploaded: 'Recibido',
    in_review: 'En revisión',
    accepted: 'Aceptado',
    rejected: 'No aceptado: envía otro',
  },
  optional: 'Opcional',
  documents: {
    PASSPORT: 'Pasaporte',
    NATIONAL_ID: 'Documento nacional de identidad',
    DRIVER_LICENSE: 'Licencia de conducir',
    PROOF_OF_ADDRESS: 'Comprobante de domicilio',
    SELFIE: 'Selfi',
    INCORPORATION_ARTICLES: 'Estatutos sociales',
    INCORPORATION_CERTIFICATE: 'Acta constitutiva',
    INCUMBENCY_CERTIFICATE: 'Certificado de administradores',
    SHAREHOLDER_REGISTRY: 'Registro de accionistas',
    STATE_COMPANY_REGISTRY: 'Certificado del registro mercantil',
  },
  sides: { FRONT: 'Frente', BACK: 'Reverso' },
  identityTitle: 'Documento de identidad',
  identityOf: (name) => `Documento de identidad de ${name}`,
  identityHint: 'La página con foto del pasaporte, o el frente y el reverso del documento de identidad o la licencia.',
  proofOfAddressHint: 'Una factura de servicios o un extracto bancario reciente con tu nombre y domicilio.',
  selfieTitle: 'Selfi',
  selfieHint: 'Una foto nítida de tu cara, sin lentes ni sombrero. Puede agilizar la revisión.',
  companyHint: 'Un escaneo o una foto nítida de todas las páginas.',
  dataTitle: 'Tus datos personales',
  dataHelp:
    'Aquí no hace falta ningún documento: la empresa que te envió este enlace corregirá tus datos. Después, envía de nuevo.',
  received: (parts) => `Recibido: ${parts.join(', ')}.`,
  documentTypeLegend: '¿Qué documento?',
  sideLegend: '¿Qué lado?',
  fileLabel: 'Foto o archivo del documento',
  photoLabel: 'Foto de tu cara',
  fileHelp: (mb) => `Toma una foto o elige un archivo PDF, JPEG, PNG, WEBP o HEIC de hasta ${mb} MB.`,
  photoHelp: (mb) => `Toma una foto con la cámara frontal o elige una imagen JPEG, PNG, WEBP o HEIC de hasta ${mb} MB.`,
  uploadButton: 'Subir documento',
  sending: 'Enviando…',
  previewAlt: 'Vista previa de la imagen elegida',
  jsTooLarge: (mb) => `Este archivo pesa más de ${mb} MB: elige uno más pequeño.`,
  jsWrongType: 'Este archivo no es un documento PDF, JPEG, PNG, WEBP o HEIC.',
  whyRejected: 'Por qué no se aceptó:',
  reviewerNote: 'Nota de la revisión:',
  rejectionCodes: {
    WRONG_ADDRESS: 'el domicilio no coincide con el que tenemos',
    EXPIRED: 'el documento está vencido',
    FRAUDULENT: 'no se pudo confirmar que el documento sea auténtico',
    ILLEGIBLE: 'la imagen no se puede leer (borrosa, oscura o cortada)',
    INCOMPLETE: 'falta una parte del documento',
    DATA_MISMATCH: 'los datos no coinciden con los que tenemos',
    UNSUPPORTED_DOCUMENT: 'este tipo de documento no se acepta',
    SANCTIONS_MATCH: 'requiere una revisión manual de nuestro equipo',
    UNSUPPORTED_JURISDICTION: 'no se aceptan documentos de este país',
  },
  todoTitle: 'Falta',
  doneTitle: 'Listo',
  progress: (done, total) => `${done} de ${total} pasos obligatorios listos`,
  progressLabel: 'Progreso',
  submitTitle: 'Enviar a revisión',
  submitButton: 'Enviar para verificación',
  submitHelp:
    'Envía cuando todos los pasos obligatorios estén listos. Durante la revisión no podrás cambiar los documentos.',
  uploadsExhausted: 'No se pueden subir más documentos en esta página.',
  nextTitle: 'Qué pasa después',
  next: {
    pending:
      'Después del envío, revisamos tus documentos. Esta página y la empresa que te envió el enlace muestran el resultado.',
    under_review:
      'Tus documentos están en revisión. No tienes que hacer nada ahora: vuelve a esta página más tarde para ver el resultado.',
    approved: 'Tu identidad está confirmada. Puedes cerrar esta página.',
    partially_rejected: 'Reemplaza los elementos no aceptados y envía de nuevo; todo lo demás ya está listo.',
    rejected: 'Tu verificación fue rechazada. Contacta a la empresa que te envió este enlace.',
  },
  validUntil: (date) => `Este enlace es válido hasta el ${date}.`,
  notices: {
    document_uploaded: 'Documento subido.',
    submitted: 'Enviado: tus documentos están en revisión.',
  },
  errors: {
    file_missing: () => 'Elige un archivo para subir.',
    file_invalid: () => 'El archivo debe ser un documento PDF, JPEG, PNG, WEBP o HEIC, y no puede estar vacío.',
    file_too_large: (c) => `El archivo pesa más de ${c.maxMegabytes} MB.`,
    document_side_invalid: () =>
      'Elige el lado (frente o reverso) del pasaporte, documento de identidad o licencia, y ningún lado para los demás documentos.',
    document_invalid: () => 'Este tipo de documento, o la persona elegida, no corresponde a esta verificación.',
    upload_limit_reached: (c) =>
      `No se pueden subir más documentos en esta página (como máximo ${c.uploadLimit}). ` +
      'Contacta a la empresa que te envió este enlace.',
    documents_missing: (c) =>
      c.missing.length > 0
        ? `Sube los documentos que faltan antes de enviar: ${c.missing.join('; ')}.`
        : 'Sube los documentos que faltan antes de enviar.',
    under_review: () => 'Tus documentos están en revisión: espera el resultado.',
    already_approved: () => 'Tu verificación está completa: no hay nada más que hacer.',
    rejected: () => 'Tu verificación fue rechazada: no se aceptan más documentos.',
    request_invalid: () => 'No se pudo procesar el formulario. Inténtalo de nuevo.',
  },
};

export const hostedTexts: Record<HostedLocale, HostedTexts> = { pt, es, en };

/** A date as the locale writes it (Intl), in UTC so the page is the same wherever it is rendered. */
export function formatDate(locale: HostedLocale, date: Date): string {
  return new Intl.DateTimeFormat(hostedTexts[locale].tag, { dateStyle: 'long', timeZone: 'UTC' }).format(date);
}

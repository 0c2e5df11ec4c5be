// A development certificate authority and the certificates of the production topology's mutual TLS to Temporal
// (docs/operations.md "Temporal behind mutual TLS"), made with openssl: the CA, the Temporal server's certificate
// (its frontend and its services between themselves; it also serves as their client certificate) and one client
// certificate for each kind of caller, so the server's log and the audit trail tell them apart. Files are PEM, keys
// 0600, in one folder; present files are kept (delete the folder, or one client's pair, to make new ones).
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/** The callers of the frontend that get a certificate (its subject's common name is `payments-<name>`). */
export const temporalClientNames = ['api', 'worker', 'ui', 'admin'] as const;
export type TemporalClientName = (typeof temporalClientNames)[number];

/** The name the server's certificate carries and clients check (TEMPORAL_TLS_SERVER_NAME). */
export const TEMPORAL_SERVER_NAME = 'temporal';

export interface TemporalCertificates {
  dir: string;
  caCert: string;
  serverCert: string;
  serverKey: string;
  client: Record<TemporalClientName, { cert: string; key: string }>;
}

/** Where the files are (whether or not they exist yet). */
export function temporalCertificatePaths(dir: string): TemporalCertificates {
  const file = (name: string) => path.join(dir, name);
  return {
    dir,
    caCert: file('ca.pem'),
    serverCert: file('server.pem'),
    serverKey: file('server-key.pem'),
    client: Object.fromEntries(
      temporalClientNames.map((name) => [name, { cert: file(`${name}.pem`), key: file(`${name}-key.pem`) }]),
    ) as TemporalCertificates['client'],
  };
}

const DAYS = '825';

function openssl(args: string[], cwd: string): void {
  execFileSync('openssl', args, { cwd, stdio: ['ignore', 'ignore', 'pipe'] });
}

/** A P-256 key in PKCS#8 (what both Go's and the SDK's TLS read), readable by its owner only. */
function newKey(file: string, cwd: string): void {
  openssl(['genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256', '-out', file], cwd);
  chmodSync(file, 0o600);
}

/** A P-256 key and a certificate signed by the CA, with the given extensions (v3, as rustls requires). */
function issue(dir: string, cert: string, key: string, subject: string, extensions: string[]): void {
  const csr = path.join(dir, 'request.csr');
  const ext = path.join(dir, 'request.ext');
  newKey(key, dir);
  openssl(['req', '-new', '-key', key, '-subj', subject, '-out', csr], dir);
  writeFileSync(ext, extensions.join('\n') + '\n');
  openssl(
    [
      'x509',
      '-req',
      '-in',
      csr,
      '-CA',
      'ca.pem',
      '-CAkey',
      'ca-key.pem',
      '-CAcreateserial',
      '-days',
      DAYS,
      '-sha256',
      '-extfile',
      ext,
      '-out',
      cert,
    ],
    dir,
  );
  rmSync(csr);
  rmSync(ext);
}

/**
 * Makes what is missing in `dir`: the CA first (a new CA means new certificates for everyone), then the server's
 * and the clients' certificates. `serverHosts`: the names and addresses the server is reached at.
 */
export function ensureTemporalCertificates(
  dir: string,
  serverHosts: string[] = [TEMPORAL_SERVER_NAME, 'localhost', '127.0.0.1'],
): TemporalCertificates {
  const files = temporalCertificatePaths(dir);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const caKey = path.join(dir, 'ca-key.pem');
  if (!existsSync(files.caCert) || !existsSync(caKey)) {
    for (const name of [files.serverCert, ...Object.values(files.client).map((pair) => pair.cert)])
      rmSync(name, { force: true });
    newKey(caKey, dir);
    openssl(
      [
        'req',
        '-x509',
        '-new',
        '-key',
        caKey,
        '-sha256',
        '-days',
        DAYS,
        '-subj',
        '/CN=payments development CA',
        '-addext',
        'basicConstraints=critical,CA:TRUE',
        '-addext',
        'keyUsage=critical,keyCertSign,cRLSign',
        '-out',
        files.caCert,
      ],
      dir,
    );
  }
  const altNames = serverHosts.map((host) => (/^[\d.]+$|:/.test(host) ? `IP:${host}` : `DNS:${host}`)).join(',');
  if (!existsSync(files.serverCert))
    issue(dir, files.serverCert, files.serverKey, `/CN=${TEMPORAL_SERVER_NAME}`, [
      'basicConstraints=CA:FALSE',
      'keyUsage=critical,digitalSignature',
      // The server's services present it to each other as clients too.
      'extendedKeyUsage=serverAuth,clientAuth',
      `subjectAltName=${altNames}`,
    ]);
  for (const name of temporalClientNames) {
    const pair = files.client[name];
    if (!existsSync(pair.cert))
      issue(dir, pair.cert, pair.key, `/CN=payments-${name}`, [
        'basicConstraints=CA:FALSE',
        'keyUsage=critical,digitalSignature',
        'extendedKeyUsage=clientAuth',
      ]);
  }
  return files;
}

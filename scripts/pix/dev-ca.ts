// A development CA for API Pix's mutual TLS: one CA, the bank simulator's server certificate (127.0.0.1 and
// localhost) and the service's client certificate, all signed by it. Development and tests only: production uses the
// certificates the bank issues (PIX_CLIENT_CERT_FILE, PIX_CLIENT_KEY_FILE, PIX_CA_FILE; docs/pix.md).
//   npx tsx scripts/pix/dev-ca.ts [dir]        (default .data/pix-tls; existing files are kept)
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';

export interface DevPixTls {
  dir: string;
  caCert: string;
  serverCert: string;
  serverKey: string;
  clientCert: string;
  clientKey: string;
}

function openssl(args: string[], cwd: string): void {
  execFileSync('openssl', args, { cwd, stdio: ['ignore', 'ignore', 'pipe'] });
}

/** Makes (once) the CA and both certificates under `dir`; returns their paths. */
export function ensureDevPixTls(dir: string): DevPixTls {
  mkdirSync(dir, { recursive: true });
  const files: DevPixTls = {
    dir,
    caCert: path.join(dir, 'ca.crt'),
    serverCert: path.join(dir, 'server.crt'),
    serverKey: path.join(dir, 'server.key'),
    clientCert: path.join(dir, 'client.crt'),
    clientKey: path.join(dir, 'client.key'),
  };
  if (existsSync(files.clientCert) && existsSync(files.serverCert)) return files;
  const days = '825';
  openssl(
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:P-256',
      '-nodes',
      '-keyout',
      'ca.key',
      '-out',
      'ca.crt',
      '-days',
      days,
      '-subj',
      '/CN=payments-api dev Pix CA',
    ],
    dir,
  );
  writeFileSync(
    path.join(dir, 'server.ext'),
    'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n',
  );
  writeFileSync(path.join(dir, 'client.ext'), 'extendedKeyUsage=clientAuth\n');
  for (const [name, subject] of [
    ['server', '/CN=bank-simulator'],
    ['client', '/CN=payments-api'],
  ] as const) {
    openssl(
      [
        'req',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:P-256',
        '-nodes',
        '-keyout',
        `${name}.key`,
        '-out',
        `${name}.csr`,
        '-subj',
        subject,
      ],
      dir,
    );
    openssl(
      [
        'x509',
        '-req',
        '-in',
        `${name}.csr`,
        '-CA',
        'ca.crt',
        '-CAkey',
        'ca.key',
        '-CAcreateserial',
        '-out',
        `${name}.crt`,
        '-days',
        days,
        '-extfile',
        `${name}.ext`,
      ],
      dir,
    );
  }
  return files;
}

if (require.main === module) {
  const files = ensureDevPixTls(path.resolve(process.argv[2] ?? '.data/pix-tls'));
  console.log(JSON.stringify(files, null, 2));
}

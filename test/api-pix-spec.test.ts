// The adapter and the simulator against the excerpt of the published API Pix OpenAPI (test/fixtures/api-pix/): the
// txid pattern our txids match, the statuses we read, the scopes we ask for, the paths we call, the webhook callback.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import { API_PIX_SCOPES } from '../src/providers/pix/api-pix';
import { pixTxidFor } from '../src/providers/pix/collections';
import { pixScopes } from '../simulators/bank/pix/channel';

const spec = YAML.parse(
  readFileSync(path.join(__dirname, 'fixtures', 'api-pix', 'api-pix-2.9.0-excerpt.yaml'), 'utf8'),
) as Record<string, any>;
const schemas = spec.components.schemas as Record<string, any>;

describe('API Pix 2.9.0 (excerpt)', () => {
  it('is the version the fixture names', () => {
    expect(spec.info).toEqual({ title: 'API Pix', version: '2.9.0' });
  });

  it('takes our txid (a deposit reference padded to 26) under the TxId pattern', () => {
    const pattern = new RegExp(`^${schemas.TxId.pattern as string}$`);
    expect(pattern.test(pixTxidFor('TX7K2M9QH4RD'))).toBe(true);
    expect(pattern.test('TX7K2M9QH4RD')).toBe(false);
  });

  it('has the paths the adapter calls, with the scopes it asks for', () => {
    expect(Object.keys(spec.paths)).toEqual(
      expect.arrayContaining(['/cob/{txid}', '/webhook/{chave}', '/pix/{e2eid}', '/pix/{e2eid}/devolucao/{id}']),
    );
    const scopes = Object.keys(spec.components.securitySchemes.OAuth2.flows.clientCredentials.scopes);
    for (const scope of API_PIX_SCOPES.split(' ')) expect(scopes).toContain(scope);
    for (const scope of pixScopes) expect(scopes).toContain(scope);
    expect(spec.paths['/cob/{txid}'].put.security).toEqual([{ OAuth2: ['cob.write'] }]);
    expect(spec.paths['/pix/{e2eid}/devolucao/{id}'].put.security).toEqual([{ OAuth2: ['pix.write'] }]);
  });

  it('notifies payments at <webhookUrl>/pix', () => {
    expect(Object.keys(spec.paths['/webhook/{chave}'].put.callbacks.listaPix)).toEqual([
      '{$request.body#/webhookUrl}/pix',
    ]);
  });

  it('names the return statuses the adapter maps', () => {
    expect(schemas.Devolucao.properties.status.enum).toEqual(['EM_PROCESSAMENTO', 'DEVOLVIDO', 'NAO_REALIZADO']);
    expect(schemas.Devolucao.properties.rtrId.pattern).toBe('[a-zA-Z0-9]{32}');
    expect(schemas.CobrancaStatus.enum).toEqual([
      'ATIVA',
      'CONCLUIDA',
      'REMOVIDA_PELO_USUARIO_RECEBEDOR',
      'REMOVIDA_PELO_PSP',
    ]);
  });
});

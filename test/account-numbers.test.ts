// Check-digit and format rules of bank identifiers, with published test numbers. Pure functions:
// no harness needed.
import { checkAbaRoutingNumber, isValidAbaChecksum } from '../src/domain/aba';
import { parseBrazilianTaxId, parsePixKey } from '../src/domain/brazil';
import { checkArgentineAccount, hasValidCbuCheckDigits } from '../src/domain/cbu';
import { checkClabe, clabeCheckDigit } from '../src/domain/clabe';
import { accountIdentityOf } from '../src/domain/external-accounts';
import { checkBic, checkIban } from '../src/domain/iban';
import { SimulatedPixDirectory } from '../src/providers/pix-directory';
import { DenyListScreening, normaliseName } from '../src/providers/screening';
import { normaliseMexicanPhone } from '../src/schemas/external-accounts';

describe('CPF and CNPJ', () => {
  it.each([
    ['52998224725', 'cpf', '52998224725'],
    ['529.982.247-25', 'cpf', '52998224725'],
    ['11144477735', 'cpf', '11144477735'],
    ['00000000191', 'cpf', '00000000191'],
    ['11222333000181', 'cnpj', '11222333000181'],
    ['11.222.333/0001-81', 'cnpj', '11222333000181'],
    ['00000000000191', 'cnpj', '00000000000191'],
    ['12ABC34501DE35', 'cnpj', '12ABC34501DE35'],
  ])('accepts %s as a %s', (raw, type, value) => {
    expect(parseBrazilianTaxId(raw)).toEqual({ type, value });
  });

  it.each([
    '52998224724', // last check digit wrong
    '52998224715', // first check digit wrong
    '11111111111', // repeated digits pass mod 11 but are never issued
    '00000000000',
    '11222333000182',
    '11222333000191',
    '12abc34501de35', // alphanumeric CNPJs are upper case
    '5299822472', // 10 digits
    '529.982.24725', // half a mask
    '',
  ])('refuses %j', (raw) => {
    expect(parseBrazilianTaxId(raw)).toBeNull();
  });
});

describe('pix keys', () => {
  it.each([
    ['52998224725', { type: 'cpf', value: '52998224725' }],
    ['11.222.333/0001-81', { type: 'cnpj', value: '11222333000181' }],
    [' Ana@Example.COM ', { type: 'email', value: 'ana@example.com' }],
    ['+55 11 98765-4321', { type: 'phone', value: '+5511987654321' }],
    ['+551133334444', { type: 'phone', value: '+551133334444' }],
    ['123E4567-E89B-42D3-A456-426614174000', { type: 'random', value: '123e4567-e89b-42d3-a456-426614174000' }],
  ])('reads %j', (raw, key) => {
    expect(parsePixKey(raw)).toEqual({ ok: true, key });
  });

  it.each([
    ['11987654321', 'is not a valid CPF'], // a phone without +55 is read as a CPF
    ['+15551234567', 'Brazilian number in E.164'],
    ['+5511', 'Brazilian number in E.164'],
    ['ana@', 'is not a valid email address'],
    ['ana@example', 'is not a valid email address'],
    [`${'a'.repeat(66)}@example.com`, 'at most 77 characters'],
    ['123e4567-e89b-42d3-a456-42661417400', 'is not a pix key'],
    ['chave aleatória', 'is not a pix key'],
  ])('refuses %j', (raw, reason) => {
    const parsed = parsePixKey(raw);
    expect(parsed.ok).toBe(false);
    expect(parsed.ok === false && parsed.reason).toContain(reason);
  });
});

describe('CLABE', () => {
  it.each([
    ['002010077777777771', '002'], // Banamex
    ['032180000118359719', '032'], // IXE
    ['646180157000000004', '646'], // STP
    ['012180004683927566', '012'], // BBVA,
  ])('accepts %s (bank %s)', (clabe, bankCode) => {
    expect(checkClabe(clabe)).toEqual({ ok: true, bankCode });
  });

  it('computes the check digit with weights 3, 7, 1', () => {
    expect(clabeCheckDigit('00201007777777777')).toBe(1);
    expect(clabeCheckDigit('03218000011835971')).toBe(9);
  });

  it.each([
    ['002010077777777772', 'check digit'],
    ['032180000118359710', 'check digit'],
    ['00201007777777777', '18 digits'],
    ['0020100777777777711', '18 digits'],
    ['00201007777777777A', '18 digits'],
  ])('refuses %s', (clabe, reason) => {
    const check = checkClabe(clabe);
    expect(check.ok === false && check.reason).toContain(reason);
  });
});

describe('ABA routing numbers', () => {
  it.each(['011000015', '021000021', '026009593', '121000248', '111000025', '322271627', '011401533', '061000104'])(
    'accepts %s',
    (routing) => {
      expect(checkAbaRoutingNumber(routing)).toEqual({ ok: true });
    },
  );

  it.each([
    ['021000022', 'checksum'],
    ['121000249', 'checksum'],
    ['000000000', 'must start with'], // passes the checksum, but 00 is the US government
    ['800000000', 'must start with'], // traveller's cheques
    ['131000000', 'must start with'],
    ['02100002', '9 digits'],
    ['02100002a', '9 digits'],
  ])('refuses %s', (routing, reason) => {
    const check = checkAbaRoutingNumber(routing);
    expect(check.ok === false && check.reason).toContain(reason);
  });

  it('checks 3-7-1 weights', () => {
    expect(isValidAbaChecksum('000000000')).toBe(true);
    expect(isValidAbaChecksum('123456780')).toBe(true);
    expect(isValidAbaChecksum('123456789')).toBe(false);
  });
});

describe('IBAN and BIC', () => {
  it.each([
    'DE89370400440532013000',
    'GB82WEST12345698765432',
    'FR1420041010050500013M02606',
    'NL91ABNA0417164300',
    'ES9121000418450200051332',
    'IT60X0542811101000000123456',
    'BE68539007547034',
    'AT611904300234573201',
    'CH9300762011623852957',
    'NO9386011117947',
    'PL61109010140000071219812874',
    'PT50000201231234567890154',
    'IE29AIBK93115212345678',
    'FI2112345600000785',
    'SE4550000000058398257466',
    'MT84MALT011000012345MTLCAST001S',
  ])('accepts %s', (iban) => {
    expect(checkIban(iban)).toEqual({ ok: true, iban, countryAlpha2: iban.slice(0, 2) });
  });

  it('accepts spaces and lower case, and returns the electronic form', () => {
    expect(checkIban(' gb82 west 1234 5698 7654 32 ')).toEqual({
      ok: true,
      iban: 'GB82WEST12345698765432',
      countryAlpha2: 'GB',
    });
  });

  it.each([
    ['DE89370400440532013001', 'check digits do not match'],
    ['GB82WEST12345698765433', 'check digits do not match'],
    ['DE8937040044053201300', 'wrong length for an IBAN of DE'],
    ['NL91ABNA04171643001', 'wrong length for an IBAN of NL'],
    ['NL911234041716430A', 'account format of NL'],
    ['XX89370400440532013000', 'XX is not a country that uses IBANs'],
    ['CH4431999123000889012', 'QR-IBAN'],
    ['12345', 'must be an IBAN'],
  ])('refuses %s', (iban, reason) => {
    const check = checkIban(iban);
    expect(check.ok === false && check.reason).toContain(reason);
  });

  it.each(['DEUTDEFF', 'DEUTDEFF500', 'COBADEFFXXX', 'bnpafrpp', 'NWBKGB2L'])('accepts the BIC %s', (bic) => {
    expect(checkBic(bic)).toEqual({ ok: true, bic: bic.toUpperCase() });
  });

  it.each(['DEUTDEF', 'DEUTDEFF5', 'DEUTDEFF50', 'DEUTDEFF5000', 'DEU1DEFF', 'DEUTXXFF'])(
    'refuses the BIC %s',
    (bic) => {
      expect(checkBic(bic).ok).toBe(false);
    },
  );
});

describe('CBU and CVU', () => {
  it.each(['2850590940090418135201', '0110599520000012345678', '0170329820000000123453', '0720000778000000012349'])(
    'accepts the CBU %s',
    (cbu) => {
      expect(checkArgentineAccount(cbu, 'cbu')).toEqual({ ok: true });
    },
  );

  it.each(['0000003110001234567898', '0000079600000000000420'])('accepts the CVU %s', (cvu) => {
    expect(checkArgentineAccount(cvu, 'cvu')).toEqual({ ok: true });
  });

  it('checks both blocks', () => {
    expect(hasValidCbuCheckDigits('2850590940090418135201')).toBe(true);
    expect(hasValidCbuCheckDigits('2850590840090418135201')).toBe(false); // first block
    expect(hasValidCbuCheckDigits('2850590940090418135202')).toBe(false); // second block
  });

  it.each([
    ['2850590940090418135201', 'cvu', 'is a CBU'],
    ['0000003110001234567898', 'cbu', 'is a CVU'],
    ['285059094009041813520', 'cbu', '22 digits'],
    ['285059094009041813520A', 'cbu', '22 digits'],
    ['2850590940090418135200', 'cbu', 'check digits'],
  ] as const)('refuses %s as %s', (value, kind, reason) => {
    const check = checkArgentineAccount(value, kind);
    expect(check.ok === false && check.reason).toContain(reason);
  });
});

describe('Mexican phone numbers', () => {
  it.each([
    ['5512345678', '+525512345678'],
    ['+52 55 1234 5678', '+525512345678'],
    ['(81) 1234-5678', '+528112345678'],
  ])('normalises %s', (raw, e164) => {
    expect(normaliseMexicanPhone(raw)).toBe(e164);
  });

  it.each(['+5511987654321', '12345', '+521234'])('refuses %s', (raw) => {
    expect(normaliseMexicanPhone(raw)).toBeNull();
  });
});

describe('account identity', () => {
  it('ignores everything but what identifies the account', () => {
    expect(accountIdentityOf('sepa', { iban: 'DE89370400440532013000' })).toBe('sepa:DE89370400440532013000');
    expect(accountIdentityOf('cvu', { cbu: '2850590940090418135201' })).toBe('cvu:cbu:2850590940090418135201');
    expect(
      accountIdentityOf('spei', {
        protocol: 'phonenumber',
        bank_code: '012',
        phone_number: '+525512345678',
        beneficiary_name: 'x',
      }),
    ).toBe('spei:phonenumber:012:+525512345678');
  });
});

describe('sandbox providers', () => {
  it('the pix directory gives the same owner for the same key and knows nothing of the documented unknown keys', async () => {
    const directory = new SimulatedPixDirectory();
    const key = { type: 'email' as const, value: 'ana@example.com' };
    const first = await directory.lookup(key);
    expect(first).toEqual({ found: true, bankName: expect.any(String), beneficiaryName: expect.any(String) });
    expect(await directory.lookup(key)).toEqual(first);
    expect(await directory.lookup({ type: 'cpf', value: '00000000191' })).toEqual({ found: false });
    expect(await directory.lookup({ type: 'email', value: 'x@unknown.example' })).toEqual({ found: false });
    const company = await directory.lookup({ type: 'cnpj', value: '11222333000181' });
    expect(company.found && company.beneficiaryName).toMatch(/(Ltda|S\.A\.)$/);
  });

  it('the deny list ignores case, accents and spaces', async () => {
    expect(normaliseName('  Dénied   CÓMPANY ltd ')).toBe('denied company ltd');
    const screening = new DenyListScreening(['Denied Company Ltd']);
    const subject = { paymentRail: 'wire' as const, country: 'USA' };
    expect(await screening.screen({ ...subject, name: 'denied company LTD' })).toEqual({
      outcome: 'rejected',
      reason: 'beneficiary name is on the deny list',
    });
    expect(await screening.screen({ ...subject, name: 'Denied Company' })).toEqual({ outcome: 'approved' });
  });
});

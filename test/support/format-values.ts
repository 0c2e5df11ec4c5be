// Valid values of the formats the description names beyond JSON Schema's own (listed in its info.description),
// for the contract test's generator: a partner's property-based tester is given values (or strategies) per custom
// format the same way. Published test numbers with valid check digits; test/contract.test.ts checks each with the
// server's own rules, so a wrong entry fails loudly instead of showing up as a 400.
export const contractFormatValues: Record<string, readonly string[]> = {
  binary: ['pdf', 'png', 'jpeg'],
  phone: ['+5511987654321', '5511987654321', '+551133334444', '+5521987654321', '+14155552671', '+4915123456789'],
  'mx-phone': ['+525512345678', '5512345678'],
  cpf: ['52998224725', '529.982.247-25', '11144477735', '39053344705'],
  cnpj: ['11222333000181', '11.222.333/0001-81'],
  'cpf-cnpj': ['52998224725', '529.982.247-25', '11222333000181', '11.222.333/0001-81'],
  iban: [
    'DE89370400440532013000',
    'DE89 3704 0044 0532 0130 00',
    'de89370400440532013000',
    'GB82WEST12345698765432',
    'FR1420041010050500013M02606',
    'NL91ABNA0417164300',
    'ES9121000418450200051332',
    'BE68539007547034',
    'AT611904300234573201',
  ],
  bic: ['COBADEFFXXX', 'DEUTDEFF', 'BNPAFRPP', 'deutdeff500'],
  'aba-routing-number': ['021000021', '011000015', '121000358'],
  clabe: ['002010077777777771'],
  cvu: ['0000003110001234567898'],
  cbu: ['2850590940090418135201'],
  'blockchain-address': [
    '0x52908400098527886E0F7030069857D2E4169EE7',
    '0xde0b295669a9fd93d5f28d9ec85e40f4cb697bae',
    '0xDE0B295669A9FD93D5F28D9EC85E40F4CB697BAE',
    'So11111111111111111111111111111111111111112',
    '4Nd1mBQtrMJVYVfKf2PJy9NZUZdTAsp7D4xWLs4gDB4T',
  ],
};

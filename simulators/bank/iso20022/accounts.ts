// The service's accounts at the bank simulator: what dev, the tests, chaos and bench set ISO20022_ACCOUNTS to
// (src/providers/iso20022/accounts.ts), and the accounts the simulator's reports name.
import type { Iso20022AccountsSetting } from '../../../src/providers/iso20022/accounts';

export const simulatorServiceAccounts: Iso20022AccountsSetting = {
  bank_name: 'ISO 20022 Simulated Bank',
  bank_address: { street_line_1: '1 Simulator Street', city: 'Frankfurt', postal_code: '60311', country: 'DEU' },
  EUR: { holder: 'Payments Service', iban: 'DE89370400440532013000', bic: 'COBADEFFXXX' },
  USD: { holder: 'Payments Service', account_number: '000111222333', routing_number: '021000021' },
};

/** ISO20022_ACCOUNTS for a service that talks to the simulator. */
export const SIMULATOR_ACCOUNTS_SETTING = JSON.stringify(simulatorServiceAccounts);

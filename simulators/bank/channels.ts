// The channels the bank simulator serves. Each issue that adds a channel adds one line here.
import type { BankChannel, BankSimulatorOptions } from './channel';

export function bankChannels(_options: BankSimulatorOptions): BankChannel[] {
  return [];
}

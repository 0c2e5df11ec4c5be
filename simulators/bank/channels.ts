// The channels the bank simulator serves. Each issue that adds a channel adds one line here.
import type { BankChannel, BankSimulatorOptions } from './channel';
import { iso20022Channel } from './iso20022/channel';

export function bankChannels(options: BankSimulatorOptions): BankChannel[] {
  return [iso20022Channel(options)];
}

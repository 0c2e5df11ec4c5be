// The channels the bank simulator serves. Each issue that adds a channel adds one line here.
import type { BankChannel, BankSimulatorOptions } from './channel';
import { iso20022Channel } from './iso20022/channel';
import { createLiquidityChannel } from './liquidity/channel';
import { createPixChannel } from './pix/channel';

export function bankChannels(options: BankSimulatorOptions): BankChannel[] {
  return [iso20022Channel(options), createPixChannel(options), createLiquidityChannel(options)];
}

// The channels the bank simulator serves. Each issue that adds a channel adds one line here.
import type { BankChannel, BankSimulatorOptions } from './channel';
import { createLiquidityChannel } from './liquidity/channel';
import { createPixChannel } from './pix/channel';

export function bankChannels(options: BankSimulatorOptions): BankChannel[] {
  return [createPixChannel(options), createLiquidityChannel(options)];
}

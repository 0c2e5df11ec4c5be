// The one way the browser tests start Chromium: Debian's headless shell (scripts/lib/chromium.ts; npm test installs
// it as root), driven by playwright-core, nothing downloaded. The flags keep it from reaching for the network this
// machine does not have (background updates, sync, QUIC) and let it run as root without a GPU.
import { existsSync } from 'node:fs';
import { type Browser, chromium } from 'playwright-core';
import { CHROMIUM_PACKAGE, chromiumPath } from '../../scripts/lib/chromium';

export async function launchChromium(): Promise<Browser> {
  if (!existsSync(chromiumPath)) {
    throw new Error(
      `Chromium not found at ${chromiumPath}: install Debian's ${CHROMIUM_PACKAGE} package (npm test does it as root) or set CHROMIUM_PATH`,
    );
  }
  return chromium.launch({
    executablePath: chromiumPath,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

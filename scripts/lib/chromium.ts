// The Chromium of the browser tests: Debian's headless shell (the package chromium-headless-shell, which npm test
// installs as root when missing), or CHROMIUM_PATH. The shell is the same engine without the full browser's
// windowing layer: a suite's pages render in about a third less CPU than with /usr/bin/chromium.
export const CHROMIUM_PACKAGE = 'chromium-headless-shell';

export const chromiumPath = process.env.CHROMIUM_PATH ?? `/usr/bin/${CHROMIUM_PACKAGE}`;

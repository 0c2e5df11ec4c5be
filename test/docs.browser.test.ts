// The API reference page in a real browser: headless Chromium from Debian (its headless shell, or
// CHROMIUM_PATH) driven by playwright-core; nothing is downloaded. Saves a screenshot to test-artifacts/.
import { existsSync, mkdirSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { Browser } from 'playwright-core';
import { allRoutes } from '../src/routes';
import { launchChromium } from './support/browser';
import { Harness, startHarness } from './support/harness';
import { testArtifactsDir } from './support/paths';

let harness: Harness;
let server: Server;
let browser: Browser;
let baseUrl: string;

beforeAll(async () => {
  harness = await startHarness({}, { realTime: true });
  server = harness.createApp(harness.services).listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
  await harness?.teardown();
});

it('renders every endpoint of the API reference at /docs', async () => {
  const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
  const failedRequests: string[] = [];
  page.on('requestfailed', (request) => failedRequests.push(request.url()));
  // The page's Content-Security-Policy must allow everything Redoc does here. Redoc's footer logo from its CDN is
  // blocked on purpose (the page loads nothing from elsewhere).
  const blockedByPolicy: string[] = [];
  page.on('console', (message) => {
    const text = message.text();
    if (/Content Security Policy/i.test(text) && !text.includes("'https://cdn.redoc.ly/")) blockedByPolicy.push(text);
  });
  await page.goto(`${baseUrl}/docs`);
  await page.waitForSelector('.api-content h2', { timeout: 30_000 });

  const text = await page.locator('body').innerText();
  const sandboxRoutes = allRoutes.filter((route) => !route.environments || route.environments.includes('sandbox'));
  for (const route of sandboxRoutes) expect(text).toContain(route.summary);
  for (const route of sandboxRoutes) {
    expect(await page.locator(`[id$="operation/${route.operationId}"]`).count()).toBeGreaterThan(0);
  }
  expect(failedRequests.filter((url) => url.startsWith(baseUrl))).toEqual([]);
  expect(blockedByPolicy).toEqual([]);

  mkdirSync(testArtifactsDir, { recursive: true });
  const screenshot = path.join(testArtifactsDir, 'api-reference.png');
  await page.screenshot({ path: screenshot, fullPage: false });
  expect(existsSync(screenshot)).toBe(true);
  await page.close();
});

// The shared Playwright fixtures every spec imports `test` from.
//
// 1. offlineGuard (auto, every test): records every request the browser context makes and
//    fails the test if any leaves the loopback (only http://127.0.0.1:*, http://localhost:*, the
//    desktop app's app://holdfast, data: and blob: are allowed). Holdfast works on air-gapped
//    sites: no remote font, icon or script, no telemetry, no update check.
// 2. holdfast: opens the UI the same way whatever the transport. In the `chromium` project it
//    serves the built renderer with the given handlers over loopback HTTP (the browser UI of
//    `holdfast serve`) and opens it; in the `electron` project it launches the desktop app
//    (preload + IPC) with HOLDFAST_HOME pointing at the handlers' home. Specs only see a Page.
import { _electron, expect, test as base, type Locator, type Page, type Request } from '@playwright/test';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { startServer, type RunningServer } from '../src/server/http';
import type { Handlers } from '../src/shared/handlers';
import { electronBinary } from './electron-binary';

export { electronBinary };

export { expect };
export type { Page };

export const rendererDir = path.resolve(import.meta.dirname, '..', 'out', 'renderer');
const mainEntry = path.resolve(import.meta.dirname, '..', 'out', 'main', 'index.js');

/** Allowed destinations: the loopback server, inline data and object URLs. */
export function isLocalUrl(url: string): boolean {
  if (url.startsWith('data:') || url.startsWith('blob:') || url === 'about:blank') return true;
  try {
    const u = new URL(url);
    if (u.protocol === 'app:' && u.host === 'holdfast') return true; // the desktop app's own files (src/main/appProtocol.ts)
    return (u.protocol === 'http:' || u.protocol === 'ws:') && (u.hostname === '127.0.0.1' || u.hostname === 'localhost');
  } catch {
    return false;
  }
}

/**
 * Opens a node from the fleet overview and waits until `ready` shows. The overview fills in live
 * (counts, banners pushing rows down), so a click can land while the row moves: retried, but a
 * click that did open the node is not repeated (the overview's row is gone then), however long
 * the node's first answer takes on a loaded machine.
 */
export async function openFromOverview(page: Page, node: string, ready: Locator): Promise<void> {
  await expect(async () => {
    const open = page.getByTestId(`fleet-row-${node}`).getByTestId('fleet-open');
    if (!(await ready.isVisible()) && (await open.isVisible())) await open.click({ timeout: 2_000 });
    await expect(ready).toBeVisible({ timeout: 3_000 });
  }).toPass({ timeout: 30_000 });
}

export interface OpenOptions {
  /** Handlers to serve (chromium). In Electron the app runs its own service over `home`. */
  handlers: Handlers;
  /** HOLDFAST_HOME of those handlers (Electron only: the app runs its own service over it). */
  home?: string;
}

export interface HoldfastFixture {
  /** Open the UI on `page` (chromium) or launch the app (electron); returns the page to drive. */
  open(opts: OpenOptions): Promise<Page>;
  /** The loopback server (chromium only), e.g. for its URL or token. */
  server(): RunningServer | undefined;
  readonly transport: 'http' | 'electron';
}

export const test = base.extend<{ offlineGuard: void; holdfast: HoldfastFixture }>({
  offlineGuard: [
    async ({ context }, use) => {
      const offending: string[] = [];
      const check = (r: Request) => {
        if (!isLocalUrl(r.url())) offending.push(`${r.method()} ${r.url()}`);
      };
      context.on('request', check);
      await use();
      context.off('request', check);
      expect(offending, 'requests that left the loopback').toEqual([]);
    },
    { auto: true },
  ],

  holdfast: async ({ page }, use, testInfo) => {
    const electron = testInfo.project.name === 'electron';
    let server: RunningServer | undefined;
    let app: Awaited<ReturnType<typeof _electron.launch>> | undefined;
    const appOffending: string[] = [];
    await use({
      transport: electron ? 'electron' : 'http',
      server: () => server,
      async open(opts) {
        if (!electron) {
          server = await startServer({ handlers: opts.handlers, rendererDir });
          await page.goto(server.url);
          return page;
        }
        if (!opts.home) testInfo.skip(true, 'the fake nodes live in the test process; the Electron app runs its own service');
        app = await _electron.launch({
          executablePath: electronBinary()!,
          args: [mainEntry],
          env: { ...process.env, HOLDFAST_HOME: opts.home! },
        });
        const win = await app.firstWindow();
        // Same offline rule inside the desktop window.
        app.context().on('request', (r) => {
          if (!isLocalUrl(r.url())) appOffending.push(`${r.method()} ${r.url()}`);
        });
        return win;
      },
    });
    await server?.close();
    await app?.close();
    expect(appOffending, 'requests from the desktop app that left the loopback').toEqual([]);
  },
});

/** A screenshot of the page into `dir` (created): no caret blinking or animation mid-turn. */
export async function screenshotTo(dir: string, page: Page, name: string): Promise<void> {
  await mkdir(dir, { recursive: true });
  await page.screenshot({ path: path.join(dir, name), animations: 'disabled', caret: 'hide' });
}

import { describe, expect, it, vi } from 'vitest';
import { guardContents, isSafeExternalUrl, windowOptions } from '../../../src/main/window';
import { menuTemplate } from '../../../src/main/menu';

describe('windowOptions', () => {
  const prefs = windowOptions('/app/out/preload/index.cjs', { packaged: true }).webPreferences!;

  it('isolates and sandboxes the renderer', () => {
    expect(prefs.contextIsolation).toBe(true);
    expect(prefs.sandbox).toBe(true);
    expect(prefs.nodeIntegration).toBe(false);
    expect(prefs.nodeIntegrationInWorker).toBe(false);
    expect(prefs.nodeIntegrationInSubFrames).toBe(false);
    expect(prefs.webSecurity).toBe(true);
    expect(prefs.allowRunningInsecureContent).toBe(false);
    expect(prefs.webviewTag).toBe(false);
  });

  it('uses the given preload', () => {
    expect(prefs.preload).toBe('/app/out/preload/index.cjs');
  });

  it('has DevTools only when not packaged', () => {
    expect(prefs.devTools).toBe(false);
    expect(windowOptions('/p', { packaged: false }).webPreferences?.devTools).toBe(true);
  });

  it('keeps the given bounds, or opens at 1280×820', () => {
    expect(windowOptions('/p', { packaged: true, bounds: { x: 5, y: 6, width: 1000, height: 700 } })).toMatchObject({ x: 5, y: 6, width: 1000, height: 700 });
    expect(windowOptions('/p', { packaged: true })).toMatchObject({ width: 1280, height: 820 });
  });
});

describe('guardContents', () => {
  function fakeContents() {
    const listeners = new Map<string, (event: { preventDefault(): void }, url?: string) => void>();
    let openHandler: ((d: { url: string }) => { action: string }) | undefined;
    return {
      on: (name: string, fn: (event: { preventDefault(): void }, url?: string) => void) => listeners.set(name, fn),
      setWindowOpenHandler: (fn: (d: { url: string }) => { action: string }) => {
        openHandler = fn;
      },
      listeners,
      open: (url: string) => openHandler!({ url }),
    };
  }

  it('blocks navigation and webviews', () => {
    const c = fakeContents();
    guardContents(c as never);
    for (const name of ['will-navigate', 'will-attach-webview']) {
      const preventDefault = vi.fn();
      c.listeners.get(name)!({ preventDefault }, 'https://evil.example/');
      expect(preventDefault).toHaveBeenCalledOnce();
    }
  });

  it('denies every new window; only https links go to the system browser', () => {
    const c = fakeContents();
    const openExternal = vi.fn();
    guardContents(c as never, openExternal);
    expect(c.open('https://docs.k3s.io/')).toEqual({ action: 'deny' });
    expect(c.open('file:///etc/passwd')).toEqual({ action: 'deny' });
    expect(c.open('javascript:alert(1)')).toEqual({ action: 'deny' });
    expect(openExternal.mock.calls).toEqual([['https://docs.k3s.io/']]);
  });

  it('isSafeExternalUrl accepts only https', () => {
    expect(isSafeExternalUrl('https://a.example/')).toBe(true);
    expect(isSafeExternalUrl('http://a.example/')).toBe(false);
    expect(isSafeExternalUrl('smb://share/x')).toBe(false);
    expect(isSafeExternalUrl('not a url')).toBe(false);
  });
});

describe('menuTemplate', () => {
  it('has an app menu on macOS only and devtools only in dev', () => {
    const labels = (t: ReturnType<typeof menuTemplate>) => t.map((m) => m.label ?? m.role);
    expect(labels(menuTemplate({ appName: 'Holdfast', isMac: true }))[0]).toBe('Holdfast');
    expect(labels(menuTemplate({ appName: 'Holdfast', isMac: false }))[0]).toBe('File');
    const json = (dev: boolean) => JSON.stringify(menuTemplate({ appName: 'H', isMac: false, isDev: dev }));
    expect(json(false)).not.toContain('toggleDevTools');
    expect(json(true)).toContain('toggleDevTools');
  });
});

describe('main process wiring (static checks: index.ts needs the Electron runtime)', () => {
  it('is single-instance, sets a native menu, remembers bounds and forwards live events on one channel', async () => {
    const { readFile } = await import('node:fs/promises');
    const src = await readFile(new URL('../../../src/main/index.ts', import.meta.url), 'utf8');
    expect(src).toContain('app.requestSingleInstanceLock()');
    expect(src).toContain('Menu.setApplicationMenu(');
    expect(src).toContain('saveWindowState(');
    expect(src).toContain('restoreBounds(');
    expect(src).toContain('forwardEvents(');
    expect(src).not.toMatch(/webContents\.send\(/); // only through forwardEvents' fixed channel
    expect(src).not.toMatch(/autoUpdater|crashReporter/); // no update checks, no telemetry
  });

  it('serves the renderer from app:// with DevTools off when packaged', async () => {
    const { readFile } = await import('node:fs/promises');
    const src = await readFile(new URL('../../../src/main/index.ts', import.meta.url), 'utf8');
    expect(src).toContain('windowOptions(preloadPath, { packaged: app.isPackaged');
    expect(src).toContain('protocol.registerSchemesAsPrivileged([APP_SCHEME_PRIVILEGES])');
    expect(src).toContain('protocol.handle(APP_SCHEME,');
    expect(src).toContain('win.loadURL(APP_ENTRY_URL)');
    expect(src).not.toMatch(/loadFile\(|pathToFileURL/); // no renderer page on file://
    // Registered before 'ready' (Electron ignores it after), i.e. outside the whenReady callback.
    expect(src.indexOf('protocol.registerSchemesAsPrivileged(')).toBeLessThan(src.indexOf('app.whenReady()'));
  });
});

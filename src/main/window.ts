// BrowserWindow settings and web-contents guards, kept free of any runtime electron import
// so unit tests can assert them without an Electron binary.
import type { BrowserWindowConstructorOptions, Event, HandlerDetails, WindowOpenHandlerResponse } from 'electron';
import { logger } from '../core/log';

const log = logger('main');

export interface WindowOptionsInput {
  /** app.isPackaged: a packaged app has no DevTools (nor the menu item, src/main/menu.ts). */
  packaged: boolean;
  bounds?: { x?: number; y?: number; width: number; height: number };
}

/** The one place the renderer's security posture is decided. */
export function windowOptions(preloadPath: string, { packaged, bounds = { width: 1280, height: 820 } }: WindowOptionsInput): BrowserWindowConstructorOptions {
  return {
    ...bounds,
    minWidth: 900,
    minHeight: 560,
    show: false,
    title: 'Holdfast',
    backgroundColor: '#f6f7f9',
    autoHideMenuBar: false,
    webPreferences: {
      preload: preloadPath,
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      nodeIntegrationInWorker: false,
      nodeIntegrationInSubFrames: false,
      webSecurity: true,
      allowRunningInsecureContent: false,
      webviewTag: false,
      experimentalFeatures: false,
      navigateOnDragDrop: false,
      spellcheck: false,
      devTools: !packaged,
    },
  };
}

/** The subset of WebContents the guards need (structural, so tests can pass a fake). */
export interface GuardableContents {
  on(event: 'will-navigate', listener: (event: Event, url: string) => void): unknown;
  on(event: 'will-attach-webview', listener: (event: Event) => void): unknown;
  setWindowOpenHandler(handler: (details: HandlerDetails) => WindowOpenHandlerResponse): void;
}

/**
 * Block every navigation away from the loaded renderer, every new window and every webview.
 * `openExternal` (optional) receives http(s) links the user clicked so they open in the system
 * browser instead of inside the privileged window.
 */
export function guardContents(contents: GuardableContents, openExternal?: (url: string) => void): void {
  contents.on('will-navigate', (event) => {
    event.preventDefault();
  });
  contents.on('will-attach-webview', (event) => {
    event.preventDefault();
  });
  contents.setWindowOpenHandler(({ url }) => {
    if (openExternal && isSafeExternalUrl(url)) openExternal(url);
    return { action: 'deny' };
  });
}

export function isSafeExternalUrl(url: string): boolean {
  try {
    const u = new URL(url);
    return u.protocol === 'https:';
  } catch (err) {
    log.debug('link not opened: not a URL', { url, err });
    return false;
  }
}

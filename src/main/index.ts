// Thin Electron shell: one sandboxed window, one IPC handler per contract channel, nothing else.
// All node work happens in the core behind `createHandlers()`.
import { app, BrowserWindow, dialog, ipcMain, Menu, protocol, screen, session, shell } from 'electron';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { logger } from '../core/log';
import { createHandlers } from '../core/service';
import { remedyCommand } from '../cli/remedyText';
import { APP_ENTRY_URL, APP_SCHEME, APP_SCHEME_PRIVILEGES, isAppEntryUrl, serveAppRequest } from './appProtocol';
import { forwardEvents } from './events';
import { registerIpc, type IpcInvokeEventLike } from './ipc';
import { catchProcessErrors, startFileLog } from './logging';
import { menuTemplate } from './menu';
import { guardContents, windowOptions } from './window';
import { loadWindowState, restoreBounds, saveWindowState } from './windowState';

const here = path.dirname(fileURLToPath(import.meta.url));
const preloadPath = path.join(here, '../preload/index.cjs');
const rendererDir = path.join(here, '../renderer');
const devUrl = !app.isPackaged ? process.env['ELECTRON_RENDERER_URL'] : undefined;

// The log file first, so even a failure while starting up is written down (see src/main/logging.ts).
// setAppLogsPath() with no argument picks the platform's place (~/Library/Logs/<name> on macOS,
// <userData>/logs elsewhere), which getPath('logs') does not always know before it is called.
app.setAppLogsPath();
const logFile = startFileLog({ dir: app.getPath('logs'), console: !app.isPackaged });
const log = logger('main');
// Before 'ready', as Electron requires: the renderer's own origin, app://holdfast (src/main/appProtocol.ts).
protocol.registerSchemesAsPrivileged([APP_SCHEME_PRIVILEGES]);
catchProcessErrors((err) => {
  if (!app.isReady()) return;
  dialog.showErrorBox('Holdfast: unexpected error', `${err instanceof Error ? err.message : String(err)}\n\nDetails are in ${logFile}.`);
});

/** Only our own top-level renderer document may call the IPC handlers. */
function isTrustedRendererUrl(url: string): boolean {
  try {
    const u = new URL(url);
    if (devUrl) return u.origin === new URL(devUrl).origin;
    return isAppEntryUrl(url);
  } catch (err) {
    log.debug('refused an IPC call from an unparsable URL', { url, err });
    return false;
  }
}

let mainWindow: BrowserWindow | null = null;

/** Every suffix k3s imports (.tar, .tar.gz, .tgz, .tar.zst, .tzst, .tar.bz2, .tbz, .tar.lz4), by last extension. */
const ARCHIVE_DIALOG_FILTERS = [{ name: 'Image archives', extensions: ['tar', 'gz', 'tgz', 'zst', 'tzst', 'bz2', 'tbz', 'lz4'] }];

/** The native "open files" dialog behind 'local.pickArchives'; cancelling picks nothing. */
async function pickArchives(): Promise<string[]> {
  const options: Electron.OpenDialogOptions = {
    title: 'Choose image archives to import',
    buttonLabel: 'Choose',
    properties: ['openFile', 'multiSelections'],
    filters: ARCHIVE_DIALOG_FILTERS,
  };
  const win = mainWindow && !mainWindow.isDestroyed() ? mainWindow : null;
  const r = win ? await dialog.showOpenDialog(win, options) : await dialog.showOpenDialog(options);
  return r.canceled ? [] : r.filePaths;
}

/** The native "save file" dialog behind 'pinset.save': writes `content` where the user chose; null when cancelled. */
async function saveFile(file: { title: string; filename: string; content: string }): Promise<string | null> {
  const options: Electron.SaveDialogOptions = { title: file.title, defaultPath: file.filename, filters: [{ name: 'YAML', extensions: ['yaml', 'yml'] }] };
  const win = mainWindow && !mainWindow.isDestroyed() ? mainWindow : null;
  const r = win ? await dialog.showSaveDialog(win, options) : await dialog.showSaveDialog(options);
  if (r.canceled || !r.filePath) return null;
  await writeFile(r.filePath, file.content, { mode: 0o644 });
  return r.filePath;
}

/** The dialog behind 'local.pickSignatureFiles': cosign public keys (.pub) or bundles; paths only. */
async function pickSignatureFiles(kind: 'keys' | 'bundles'): Promise<string[]> {
  const options: Electron.OpenDialogOptions = {
    title: kind === 'keys' ? 'Choose the public keys the images were signed with' : 'Choose signature bundles',
    buttonLabel: 'Choose',
    properties: ['openFile', 'multiSelections'],
    filters: kind === 'keys' ? [{ name: 'Public keys', extensions: ['pub', 'pem', 'key'] }, { name: 'All files', extensions: ['*'] }] : [{ name: 'Sigstore bundles', extensions: ['json', 'bundle'] }, { name: 'All files', extensions: ['*'] }],
  };
  const win = mainWindow && !mainWindow.isDestroyed() ? mainWindow : null;
  const r = win ? await dialog.showOpenDialog(win, options) : await dialog.showOpenDialog(options);
  return r.canceled ? [] : r.filePaths;
}

async function createWindow(events: Parameters<typeof forwardEvents>[0]): Promise<BrowserWindow> {
  const stateDir = app.getPath('userData');
  const saved = await loadWindowState(stateDir);
  const restored = restoreBounds(
    saved,
    screen.getAllDisplays().map((d) => d.workArea),
  );
  // Its web contents get guardContents from the app-wide 'web-contents-created' hook below.
  const win = new BrowserWindow(windowOptions(preloadPath, { packaged: app.isPackaged, bounds: restored.bounds }));
  win.once('ready-to-show', () => {
    if (restored.maximized) win.maximize();
    win.show();
  });
  // Live events on the one fixed channel, for as long as this window lives.
  forwardEvents(events, win.webContents);
  let saveTimer: ReturnType<typeof setTimeout> | null = null;
  const save = () => {
    if (win.isDestroyed()) return;
    const state = { bounds: win.getNormalBounds(), maximized: win.isMaximized() };
    void saveWindowState(stateDir, state).catch((err: unknown) => log.debug('window state not saved', { stateDir, err }));
  };
  const saveSoon = () => {
    if (saveTimer) clearTimeout(saveTimer);
    saveTimer = setTimeout(save, 500);
  };
  for (const ev of ['resize', 'move', 'maximize', 'unmaximize'] as const) win.on(ev as 'resize', saveSoon);
  win.on('close', () => {
    if (saveTimer) clearTimeout(saveTimer);
    save();
  });
  win.on('closed', () => {
    mainWindow = null;
  });
  if (devUrl) void win.loadURL(devUrl);
  else void win.loadURL(APP_ENTRY_URL);
  return win;
}

if (!app.requestSingleInstanceLock()) {
  app.quit();
} else {
  // The HTML report the app exports names the CLI's commands, as `inspect --html` writes it.
  const handlers = createHandlers({ pickArchives, pickSignatureFiles, saveFile, remedyCommand });
  let unregister: (() => void) | null = null;

  app.on('second-instance', () => {
    if (!mainWindow) return;
    if (mainWindow.isMinimized()) mainWindow.restore();
    mainWindow.focus();
  });

  // Every web contents (the main window's included) is guarded as soon as it exists.
  app.on('web-contents-created', (_event, contents) => {
    guardContents(contents, (url) => void shell.openExternal(url));
  });

  void app.whenReady().then(() => {
    log.info('started', { version: app.getVersion(), electron: process.versions.electron, platform: process.platform, packaged: app.isPackaged });
    // The app needs no camera, notifications, geolocation, …: deny every permission request.
    session.defaultSession.setPermissionRequestHandler((_wc, _permission, callback) => callback(false));
    session.defaultSession.setPermissionCheckHandler(() => false);
    // out/renderer, and nothing else, under the CSP header (src/shared/webSecurity.ts).
    protocol.handle(APP_SCHEME, async (request) => {
      const r = await serveAppRequest(rendererDir, request);
      return new Response(r.body ?? null, { status: r.status, headers: r.headers });
    });

    Menu.setApplicationMenu(
      Menu.buildFromTemplate(menuTemplate({ appName: app.name, isMac: process.platform === 'darwin', isDev: !app.isPackaged })),
    );
    unregister = registerIpc(ipcMain, handlers, {
      isTrustedSender: (event: IpcInvokeEventLike) => isTrustedRendererUrl(event.senderFrame?.url ?? ''),
    });
    void createWindow(handlers.events).then((w) => (mainWindow = w));

    app.on('activate', () => {
      if (BrowserWindow.getAllWindows().length === 0) void createWindow(handlers.events).then((w) => (mainWindow = w));
    });
  });

  app.on('window-all-closed', () => {
    if (process.platform !== 'darwin') app.quit();
  });

  let disposed = false;
  app.on('will-quit', (event) => {
    if (disposed) return;
    event.preventDefault();
    disposed = true;
    unregister?.();
    void handlers
      .dispose()
      .catch((err: unknown) => log.debug('dispose at quit failed', { err }))
      .finally(() => app.quit());
  });
}

// Window bounds remembered between runs: saved atomically (temp file + rename) in the user data
// dir, restored only when they still land on a visible display (a monitor unplugged since must
// not leave the window off-screen). No electron runtime import: tests pass plain data.
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { logger } from '../core/log';

const log = logger('main');

export interface Rect {
  x: number;
  y: number;
  width: number;
  height: number;
}

export interface WindowState {
  bounds: Rect;
  maximized: boolean;
}

export const WINDOW_STATE_FILE = 'window-state.json';
export const DEFAULT_SIZE = { width: 1280, height: 820 };
export const MIN_SIZE = { width: 900, height: 560 };

const isNum = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);

/** Parse what was saved; anything malformed or absurd is ignored (null). */
export function parseWindowState(text: string): WindowState | null {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    log.debug('saved window state unparsable; default bounds', { err });
    return null;
  }
  if (!raw || typeof raw !== 'object') return null;
  const r = raw as { bounds?: Record<string, unknown>; maximized?: unknown };
  const b = r.bounds;
  if (!b || !isNum(b['x']) || !isNum(b['y']) || !isNum(b['width']) || !isNum(b['height'])) return null;
  if (b['width'] < 100 || b['height'] < 100 || b['width'] > 20_000 || b['height'] > 20_000) return null;
  return {
    bounds: { x: Math.round(b['x']), y: Math.round(b['y']), width: Math.round(b['width']), height: Math.round(b['height']) },
    maximized: r.maximized === true,
  };
}

function overlap(a: Rect, b: Rect): number {
  const w = Math.min(a.x + a.width, b.x + b.width) - Math.max(a.x, b.x);
  const h = Math.min(a.y + a.height, b.y + b.height) - Math.max(a.y, b.y);
  return w > 0 && h > 0 ? w * h : 0;
}

/**
 * The bounds to open with: the saved ones if their title-bar area is on some display's work
 * area (at least 120×40 px of the top of the window), shrunk to fit that display; otherwise
 * the default size, centred by the OS (no x/y).
 */
export function restoreBounds(saved: WindowState | null, workAreas: Rect[]): { bounds: Partial<Rect> & { width: number; height: number }; maximized: boolean } {
  const fallback = { bounds: { ...DEFAULT_SIZE }, maximized: false };
  if (!saved) return fallback;
  const b = saved.bounds;
  const titleBar: Rect = { x: b.x, y: b.y, width: b.width, height: 40 };
  const area = workAreas
    .filter((a) => overlap(titleBar, a) >= Math.min(120, b.width) * 40)
    .sort((p, q) => overlap(b, q) - overlap(b, p))[0];
  if (!area) return { ...fallback, maximized: saved.maximized };
  const width = Math.max(MIN_SIZE.width, Math.min(b.width, area.width));
  const height = Math.max(MIN_SIZE.height, Math.min(b.height, area.height));
  const x = Math.min(Math.max(b.x, area.x), area.x + area.width - Math.min(width, area.width));
  const y = Math.min(Math.max(b.y, area.y), area.y + area.height - Math.min(height, area.height));
  return { bounds: { x, y, width, height }, maximized: saved.maximized };
}

export async function loadWindowState(dir: string): Promise<WindowState | null> {
  try {
    return parseWindowState(await fs.readFile(path.join(dir, WINDOW_STATE_FILE), 'utf8'));
  } catch (err) {
    log.debug('no saved window state', { dir, err });
    return null;
  }
}

/** Write atomically: a crash mid-write leaves the previous file, never a truncated one. */
export async function saveWindowState(dir: string, state: WindowState): Promise<void> {
  await fs.mkdir(dir, { recursive: true });
  const file = path.join(dir, WINDOW_STATE_FILE);
  const tmp = `${file}.${process.pid}.${Date.now()}.tmp`;
  try {
    await fs.writeFile(tmp, `${JSON.stringify(state)}\n`, { mode: 0o600 });
    await fs.rename(tmp, file);
  } catch (e) {
    await fs.rm(tmp, { force: true }).catch((err: unknown) => log.debug('temp window state not removed', { tmp, err }));
    throw e;
  }
}

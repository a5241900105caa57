import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_SIZE, loadWindowState, parseWindowState, restoreBounds, saveWindowState, WINDOW_STATE_FILE } from '../../../src/main/windowState';

const laptop = { x: 0, y: 0, width: 1920, height: 1050 };
const external = { x: 1920, y: 0, width: 2560, height: 1400 };

describe('window state', () => {
  let dir: string | undefined;
  afterEach(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('saves atomically into the user data dir and reads it back', async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'hf-ws-'));
    const state = { bounds: { x: 100, y: 80, width: 1400, height: 900 }, maximized: true };
    await saveWindowState(dir, state);
    expect(await loadWindowState(dir)).toEqual(state);
    expect(await readdir(dir)).toEqual([WINDOW_STATE_FILE]); // no temp file left behind
    expect(JSON.parse(await readFile(path.join(dir, WINDOW_STATE_FILE), 'utf8'))).toEqual(state);
  });

  it('ignores a missing, corrupt or absurd file', async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'hf-ws-'));
    expect(await loadWindowState(dir)).toBeNull();
    expect(parseWindowState('{"bounds":')).toBeNull();
    expect(parseWindowState('{"bounds":{"x":0,"y":0,"width":10,"height":10}}')).toBeNull();
    expect(parseWindowState('{"bounds":{"x":"0","y":0,"width":1000,"height":800}}')).toBeNull();
  });

  it('restores bounds that are on a visible display', () => {
    const saved = { bounds: { x: 2000, y: 100, width: 1600, height: 1000 }, maximized: false };
    expect(restoreBounds(saved, [laptop, external])).toEqual({ bounds: saved.bounds, maximized: false });
  });

  it('falls back to the default size when the display it was on is gone', () => {
    const saved = { bounds: { x: 2000, y: 100, width: 1600, height: 1000 }, maximized: true };
    expect(restoreBounds(saved, [laptop])).toEqual({ bounds: DEFAULT_SIZE, maximized: true });
    expect(restoreBounds(null, [laptop])).toEqual({ bounds: DEFAULT_SIZE, maximized: false });
  });

  it('shrinks and moves a window larger than its display back onto it', () => {
    const saved = { bounds: { x: 1500, y: -20, width: 2400, height: 1600 }, maximized: false };
    const r = restoreBounds(saved, [laptop]);
    expect(r.bounds).toEqual({ x: 0, y: 0, width: 1920, height: 1050 });
  });
});

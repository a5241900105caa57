// The app's log file through electron-log's real file transport (its Node flavour runs without
// Electron): redacted lines, rotation to main.old.log, owner-only permissions, crash capture.
import { EventEmitter } from 'node:events';
import { existsSync, mkdtempSync, readFileSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { logger, setLogSink } from '../../../src/core/log';
import { catchProcessErrors, startFileLog } from '../../../src/main/logging';

afterEach(() => setLogSink(null));
const tmp = () => mkdtempSync(path.join(os.tmpdir(), 'hf-applog-'));

describe('the app log file', () => {
  it('gets one redacted line per record at the chosen level, readable by its owner only', () => {
    const dir = path.join(tmp(), 'logs');
    const file = startFileLog({ dir, level: 'debug' });
    expect(file).toBe(path.join(dir, 'main.log'));
    const log = logger('ssh');
    log.debug('connecting', { where: '10.0.0.5:22', passphrase: 'kp-never-logged' });
    log.info('connected to http://127.0.0.1:9/?token=tok-never-logged');
    const lines = readFileSync(file, 'utf8').trim().split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/^\d{4}-\d\d-\d\dT[\d:.]+Z debug \[ssh\] connecting \{"where":"10\.0\.0\.5:22","passphrase":"\[redacted\]"\}$/);
    expect(lines[1]).toContain('info [ssh] connected to http://127.0.0.1:9/?token=[redacted]');
    expect(readFileSync(file, 'utf8')).not.toMatch(/never-logged/);
    expect(statSync(file).mode & 0o777).toBe(0o600);
  });

  it('drops records below its level and rotates to main.old.log past its size', () => {
    const dir = tmp();
    const file = startFileLog({ dir, level: 'info', maxBytes: 2048 });
    const log = logger('t');
    log.debug('dropped at info');
    for (let i = 0; i < 60; i++) log.info(`line ${i} ${'x'.repeat(60)}`);
    const old = path.join(dir, 'main.old.log');
    expect(existsSync(old)).toBe(true);
    expect(statSync(file).size).toBeLessThanOrEqual(2048 + 200);
    const both = readFileSync(old, 'utf8') + readFileSync(file, 'utf8');
    expect(both).toContain('line 59 ');
    expect(both).not.toContain('dropped at info');
  });

  it('HOLDFAST_LOG=silent writes nothing', () => {
    const saved = process.env.HOLDFAST_LOG;
    process.env.HOLDFAST_LOG = 'silent';
    try {
      const file = startFileLog({ dir: tmp() });
      logger('t').error('not written');
      expect(existsSync(file)).toBe(false);
    } finally {
      if (saved === undefined) delete process.env.HOLDFAST_LOG;
      else process.env.HOLDFAST_LOG = saved;
    }
  });

  it('logs uncaught exceptions (with the stack, redacted) and unhandled rejections', () => {
    const file = startFileLog({ dir: tmp(), level: 'debug' });
    const proc = new EventEmitter();
    const reported: unknown[] = [];
    catchProcessErrors((e) => reported.push(e), proc);
    const boom = new TypeError('cannot read x of undefined; password: pw-never-logged');
    proc.emit('uncaughtException', boom);
    proc.emit('unhandledRejection', new Error('socket gone'));
    expect(reported).toEqual([boom]);
    const text = readFileSync(file, 'utf8');
    expect(text).toContain('error [main] uncaught exception');
    expect(text).toContain('"name":"TypeError"');
    expect(text).toMatch(/"stack":"TypeError: cannot read x of undefined; password: \[redacted\]\\n\s+at /);
    expect(text).toContain('error [main] unhandled promise rejection {"reason":{"name":"Error","message":"socket gone"');
    expect(text).not.toContain('pw-never-logged');
  });
});

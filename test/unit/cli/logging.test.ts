import { EventEmitter } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import { logger, setLogSink } from '../../../src/core/log';
import { catchCliCrashes, cliLogLevel, startCliLog } from '../../../src/cli/logging';

afterEach(() => setLogSink(null));

describe('CLI log', () => {
  it('is silent by default; --verbose is debug; HOLDFAST_LOG picks a level', () => {
    expect(cliLogLevel(false, undefined)).toBe('silent');
    expect(cliLogLevel(true, undefined)).toBe('debug');
    expect(cliLogLevel(true, 'error')).toBe('debug');
    expect(cliLogLevel(false, 'warn')).toBe('warn');
    expect(cliLogLevel(false, 'nonsense')).toBe('silent');
  });

  it('writes one redacted line per record to the error stream, at the chosen level', () => {
    const lines: string[] = [];
    startCliLog({ verbose: false, env: 'info', err: (l) => lines.push(l) });
    logger('ssh').debug('not at info');
    logger('ssh').info('connected', { where: 'h:22', password: 'pw-nope' });
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/ info \[ssh\] connected \{"where":"h:22","password":"\[redacted\]"\}$/);

    lines.length = 0;
    startCliLog({ verbose: false, env: undefined, err: (l) => lines.push(l) });
    logger('ssh').error('silent again');
    expect(lines).toEqual([]);
  });

  it('turns an escaped exception or rejection into a log record, one clear line and exit 1', () => {
    const lines: string[] = [];
    const logged: string[] = [];
    setLogSink((r) => logged.push(`${r.level} ${r.message} ${JSON.stringify(r.context)}`), 'debug');
    const proc = new EventEmitter();
    const exits: number[] = [];
    catchCliCrashes((l) => lines.push(l), (c) => exits.push(c), proc);
    proc.emit('unhandledRejection', new Error('stream ended; token=abc123'));
    proc.emit('uncaughtException', new RangeError('bad length'));
    expect(exits).toEqual([1, 1]);
    expect(lines).toEqual([
      'holdfast: internal error: stream ended; token=[redacted] (run again with --verbose for details)',
      'holdfast: internal error: bad length (run again with --verbose for details)',
    ]);
    expect(logged[0]).toMatch(/^error unhandled promise rejection .*"stack":"Error: stream ended; token=\[redacted\]/);
    expect(logged[1]).toMatch(/^error uncaught exception .*"name":"RangeError"/);
  });
});

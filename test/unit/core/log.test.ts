import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { HoldfastError } from '../../../src/core/errors';
import { formatRecord, isLogEnabled, logger, logLevelFromEnv, redact, redactText, registerSecret, setLogSink, type LogRecord } from '../../../src/core/log';

const captured: LogRecord[] = [];
const capture = (level: Parameters<typeof setLogSink>[1] = 'debug') => setLogSink((r) => captured.push(r), level);
afterEach(() => {
  setLogSink(null);
  captured.length = 0;
});

describe('core logger', () => {
  it('is silent until a sink is installed, and drops records below the level', () => {
    const log = logger('t');
    log.error('nobody hears this');
    expect(isLogEnabled('error')).toBe(false);
    capture('warn');
    log.debug('too low');
    log.info('too low');
    log.warn('heard', { n: 1 });
    log.error('heard too');
    expect(captured.map((r) => [r.level, r.scope, r.message, r.context])).toEqual([
      ['warn', 't', 'heard', { n: 1 }],
      ['error', 't', 'heard too', {}],
    ]);
  });

  it('survives a sink that throws and a context whose getter throws', () => {
    setLogSink(() => {
      throw new Error('disk full');
    }, 'debug');
    expect(() => logger('t').info('x')).not.toThrow();
    capture();
    const evil = Object.defineProperty({}, 'boom', { enumerable: true, get: () => { throw new Error('getter'); } });
    logger('t').info('still logged', evil);
    expect(captured[0]?.message).toBe('still logged');
  });

  it('reads HOLDFAST_LOG, and an unknown value leaves the default in place', () => {
    expect(logLevelFromEnv('debug')).toBe('debug');
    expect(logLevelFromEnv(' WARN ')).toBe('warn');
    expect(logLevelFromEnv('off')).toBe('silent');
    expect(logLevelFromEnv('loud')).toBeNull();
    expect(logLevelFromEnv(undefined)).toBeNull();
  });

  it('formats one line per record, newlines folded', () => {
    const line = formatRecord({ time: new Date('2026-01-02T03:04:05.000Z'), level: 'debug', scope: 'ssh', message: 'a\nb', context: { where: 'h:22' } });
    expect(line).toBe('2026-01-02T03:04:05.000Z debug [ssh] a ⏎ b {"where":"h:22"}');
  });
});

describe('redaction', () => {
  it('replaces values under secret-looking keys at any depth, keeps the rest', () => {
    const out = redact({
      password: 'hunter2-pw',
      node: { user: 'root', identity: '/home/me/.ssh/id_ed25519', passphrase: 'kp', sshPassword: 'x' },
      headers: { 'x-holdfast-token': 'abc', Authorization: 'Bearer z', cookie: 'c' },
      privateKey: 'k',
      private_key: 'k',
      clientSecret: 's',
      answers: ['a1'],
      credentials: { password: () => 'x' },
      list: [{ token: 't' }],
    });
    expect(out).toEqual({
      password: '[redacted]',
      node: { user: 'root', identity: '/home/me/.ssh/id_ed25519', passphrase: '[redacted]', sshPassword: '[redacted]' },
      headers: { 'x-holdfast-token': '[redacted]', Authorization: '[redacted]', cookie: '[redacted]' },
      privateKey: '[redacted]',
      private_key: '[redacted]',
      clientSecret: '[redacted]',
      answers: '[redacted]',
      credentials: '[redacted]',
      list: [{ token: '[redacted]' }],
    });
  });

  it('removes private key blocks from text (a real OpenSSH key, PEM RSA, a truncated one)', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'hf-log-'));
    const key = path.join(dir, 'k');
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', key]);
    const pem = readFileSync(key, 'utf8');
    const body = pem.split('\n')[1]!;
    const text = redactText(`read ${key}: ${pem} and more`);
    expect(text).not.toContain(body);
    expect(text).toContain('[redacted private key]');
    expect(text).toContain('and more');
    expect(redactText('x -----BEGIN RSA PRIVATE KEY-----\nMIIEow\nAAAA')).toBe('x [redacted private key]');
    // Public keys and certificates are not secrets.
    expect(redactText('-----BEGIN PUBLIC KEY-----\nMFkw\n-----END PUBLIC KEY-----')).toContain('MFkw');
    expect(redact({ note: pem })).toEqual({ note: '[redacted private key]\n' });
  });

  it('removes ?token= from URLs, inline password: x, and registered secret values', () => {
    expect(redactText('GET http://127.0.0.1:5/?token=AbC-12_x&x=1')).toBe('GET http://127.0.0.1:5/?token=[redacted]&x=1');
    expect(redactText('sudo said password: hunter2 and passphrase=kp1')).toBe('sudo said password: [redacted] and passphrase=[redacted]');
    expect(redactText('The password for u@h is wrong.')).toBe('The password for u@h is wrong.');
    const token = 'tok-0123456789abcdefXYZ';
    const unregister = registerSecret(token);
    expect(redactText(`header was ${token}!`)).toBe('header was [redacted]!');
    unregister();
    expect(redactText(`header was ${token}!`)).toContain(token);
    registerSecret('short'); // too short to be worth replacing everywhere
    expect(redactText('a short word')).toBe('a short word');
  });

  it('flattens errors (message, code, hint, cause) redacted, summarises buffers, cuts cycles', () => {
    const cause = Object.assign(new Error('bad passphrase=kp-9'), { code: 'EAUTH', level: 'client-authentication' });
    const err = new HoldfastError('AUTH_FAILED', 'Authentication failed.', { hint: 'try password: pw1', cause });
    const cyc: Record<string, unknown> = { buf: Buffer.from('-----BEGIN OPENSSH PRIVATE KEY-----') };
    cyc.self = cyc;
    const out = redact({ err, cyc }) as { err: Record<string, unknown>; cyc: Record<string, unknown> };
    expect(out.err).toEqual({
      name: 'HoldfastError',
      message: 'Authentication failed.',
      code: 'AUTH_FAILED',
      hint: 'try password: [redacted]',
      cause: expect.objectContaining({ name: 'Error', message: 'bad passphrase=[redacted]', code: 'EAUTH', level: 'client-authentication' }),
    });
    expect((out.err.cause as { stack: string }).stack).not.toContain('kp-9');
    expect(out.cyc).toEqual({ buf: '[35 bytes]', self: '[circular]' });
  });

  it('applies before the sink: messages and contexts reach it redacted', () => {
    capture();
    logger('serve').debug('request GET /?token=SECRETTOKENVALUE', { password: 'p', url: 'http://h/?token=SECRETTOKENVALUE' });
    const line = formatRecord(captured[0]!);
    expect(line).not.toContain('SECRETTOKENVALUE');
    expect(line).toContain('"password":"[redacted]"');
  });
});

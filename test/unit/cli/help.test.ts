// The CLI's help, for every command the program registers (walked, so a command added without
// examples or argument descriptions fails here): an Examples block that runs the command itself,
// a description for every argument, nothing past 80 columns when piped, no `(preset: "")`.
// And `holdfast serve --port 0`: any free port, the URL it prints is the one that answers.
import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Command } from 'commander';
import { afterEach, describe, expect, it } from 'vitest';
import { parsePort } from '../../../src/cli/context';
import { buildProgram, COMMANDS } from '../../../src/cli/main';
import { parseListenPort } from '../../../src/cli/commands/serve';
import { HELP_WIDTH } from '../../../src/cli/help';

const root = path.resolve(import.meta.dirname, '..', '..', '..');
const quiet = { out: () => undefined, err: () => undefined };

/** Every command of the program (the program itself too), with the words that run it. */
function commandsOf(cmd: Command, words: string[] = []): { words: string[]; cmd: Command }[] {
  return [{ words, cmd }, ...cmd.commands.flatMap((sub) => commandsOf(sub, [...words, sub.name()]))];
}

/** The help `cmd` prints, the text after it included, as commander writes it at `width` columns. */
function helpOf(cmd: Command, width: number): string {
  let text = '';
  cmd.configureOutput({ writeOut: (s) => (text += s), writeErr: (s) => (text += s), getOutHelpWidth: () => width, getErrHelpWidth: () => width, getOutHasColors: () => false });
  cmd.outputHelp();
  return text;
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const tooWide = (text: string, width = HELP_WIDTH) => text.split('\n').filter((l) => l.length > width);

describe('help of every command', async () => {
  // Help (or a bare `holdfast`) loads every group: the tree a user can ask help for.
  const all = commandsOf(await buildProgram(quiet, ['--help']));

  it('walks every command the groups register, subcommands included', () => {
    const names = all.map((c) => c.words.join(' '));
    for (const top of COMMANDS.map((c) => c.name)) expect(names).toContain(top);
    for (const sub of ['node add', 'node ls', 'node edit', 'node rm', 'node import-ssh-config', 'node add-bulk']) expect(names).toContain(sub);
  });

  it.each(all.map((c) => [c.words.join(' ') || '(holdfast)', c] as const))('%s: examples that run it, every argument described, 80 columns', (_name, { words, cmd }) => {
    const help = helpOf(cmd, HELP_WIDTH);
    const examples = /\nExamples:\n((?: {2}.*\n?)+)/.exec(help);
    expect(examples, help).not.toBeNull();
    // At least one example line is this very command (not only a comment, not another command).
    const lines = examples![1]!.split('\n').map((l) => l.trim());
    const self = ['holdfast', ...words].join(' ');
    expect(lines.some((l) => l === self || l.startsWith(`${self} `)), `${self}:\n${examples![0]}`).toBe(true);

    for (const arg of cmd.registeredArguments) {
      expect(arg.description, `${self} <${arg.name()}>`).toMatch(/\S/);
      // Listed under Arguments with it (commander shows an argument only once it has one).
      expect(help).toMatch(new RegExp(`\\n {2}${escape(arg.name())} +${escape(arg.description.split(' ')[0]!)}`));
    }

    expect(help).not.toContain('preset:');
    expect(tooWide(help), help).toEqual([]);
  });

  it('node add: --accept-new-host-key reads as a person would use it', () => {
    const add = all.find((c) => c.words.join(' ') === 'node add')!.cmd;
    const help = helpOf(add, HELP_WIDTH);
    expect(help).toMatch(/--accept-new-host-key \[fingerprint\] +trust a new host key with this SHA256/);
    expect(help).not.toMatch(/\(preset: ""\)/);
  });
});

describe('help as the real `holdfast` prints it', () => {
  // One process, its stdout a pipe (as in `holdfast node --help | less`): commander wraps to 80
  // columns there, and the examples and notes are ours to keep inside them.
  it('piped: every command, no line over 80 columns', async () => {
    const words = commandsOf(await buildProgram(quiet, ['--help'])).map((c) => c.words);
    const run = `const { main } = await import(${JSON.stringify(pathToFileURL(path.join(root, 'src/cli/main.ts')).href)});
for (const words of ${JSON.stringify(words)}) {
  process.stdout.write('=== ' + words.join(' ') + '\\n');
  const code = await main(['node', 'holdfast', ...words, '--help']);
  if (code !== 0) process.stdout.write('EXIT ' + code + '\\n');
}`;
    const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', run], {
      cwd: root,
      encoding: 'utf8',
      env: { ...process.env, HOLDFAST_HOME: mkdtempSync(path.join(os.tmpdir(), 'hf-help-')), HOLDFAST_LOG: 'error' },
    });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(r.stdout).not.toContain('EXIT ');
    expect(r.stdout.match(/^Examples:$/gm)?.length).toBe(words.length);
    expect(tooWide(r.stdout)).toEqual([]);
    expect(r.stdout).toContain('Usage: holdfast node import-ssh-config [options] [host-patterns...]');
  }, 60_000);
});

describe('serve --port', () => {
  it('takes 0 (any free port) to 65535; refuses what is no port', () => {
    expect(parseListenPort('0')).toBe(0);
    expect(parseListenPort('8080')).toBe(8080);
    expect(parseListenPort('65535')).toBe(65535);
    for (const bad of ['-1', '65536', '', ' ', '80.5', 'http', '0x50']) expect(() => parseListenPort(bad), bad).toThrow(/invalid port/);
    // An SSH port is still 1 to 65535.
    expect(() => parsePort('0')).toThrow(/invalid port "0"/);
  });

  let child: ChildProcessWithoutNullStreams | undefined;
  afterEach(() => {
    if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    child = undefined;
  });

  /** `holdfast serve ARGS` from the sources, with a stand-in UI; its stdout and how it ended. */
  function serve(args: string[]) {
    const ui = mkdtempSync(path.join(os.tmpdir(), 'hf-ui-'));
    writeFileSync(path.join(ui, 'index.html'), '<!doctype html><title>Holdfast</title><div id="root"></div>');
    const run = `const { main } = await import(${JSON.stringify(pathToFileURL(path.join(root, 'src/cli/main.ts')).href)});
process.exitCode = await main(['node', 'holdfast', 'serve', ...${JSON.stringify(args)}]);`;
    const c = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', run], {
      cwd: root,
      env: { ...process.env, HOLDFAST_HOME: mkdtempSync(path.join(os.tmpdir(), 'hf-serve-')), HOLDFAST_RENDERER_DIR: ui, HOLDFAST_LOG: 'error' },
    });
    child = c;
    const out = { stdout: '', stderr: '' };
    c.stdout.on('data', (d: Buffer) => (out.stdout += d.toString()));
    c.stderr.on('data', (d: Buffer) => (out.stderr += d.toString()));
    const exited = new Promise<number | null>((resolve) => c.once('close', (code) => resolve(code)));
    const printed = (pattern: RegExp) =>
      new Promise<RegExpExecArray>((resolve, reject) => {
        const look = () => {
          const m = pattern.exec(out.stdout);
          if (m) resolve(m);
        };
        c.stdout.on('data', look);
        look();
        void exited.then((code) => reject(new Error(`serve exited ${code} before printing ${pattern}\n${out.stdout}${out.stderr}`)));
      });
    return { child: c, out, exited, printed };
  }

  it('--port 0: listens on a port the OS picks, and the URL it prints (token in it) is what answers', async () => {
    const s = serve(['--port', '0']);
    const [, printedUrl, said] = await s.printed(/serving on (http:\/\/\S+)\n.*\(port (\d+)\)/);
    const url = new URL(printedUrl!);
    expect(url.hostname).toBe('127.0.0.1');
    const port = Number(url.port);
    expect(port).toBeGreaterThan(0);
    expect(String(port)).toBe(said);
    const token = url.searchParams.get('token')!;
    expect(token.length).toBeGreaterThanOrEqual(32);

    // The page, opened as the user opens the printed URL.
    const page = await fetch(url);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('<title>Holdfast</title>');
    // The API behind the token the URL carries, on that port.
    const api = (tok?: string) =>
      fetch(`http://127.0.0.1:${port}/api/nodes.list`, { method: 'POST', headers: { 'content-type': 'application/json', ...(tok ? { 'x-holdfast-token': tok } : {}) }, body: '{}' });
    expect((await api()).status).toBe(401);
    const listed = await api(token);
    expect(listed.status).toBe(200);
    expect(((await listed.json()) as { ok: boolean }).ok).toBe(true);

    s.child.kill('SIGTERM');
    expect(await s.exited).toBe(0);
  }, 60_000);

  it('a port in use: one line saying so and what to do, exit 1', async () => {
    const taken = net.createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const port = (taken.address() as net.AddressInfo).port;
    try {
      const s = serve(['--port', String(port)]);
      expect(await s.exited).toBe(1);
      expect(s.out.stdout).toBe('');
      expect(s.out.stderr).toBe(`holdfast: port ${port} on 127.0.0.1 is already in use — Choose another --port, or --port 0 for any free port.\n`);
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }
  }, 60_000);
});

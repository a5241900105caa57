// Asking the person at the terminal for a secret: on the controlling TTY, without echo, one
// question at a time (commands that reach many nodes connect in parallel). What is typed is
// handed to core and nowhere else: never printed, logged, or written to a file.
import type { CredentialsProvider, KeyboardInteractivePrompt } from '../core/ssh/credentials';
import { terminalSafe } from './format';
import { withoutProgress } from './progress';
import { logger } from '../core/log';

const log = logger('cli');

export interface PromptStreams {
  input: NodeJS.ReadableStream & { isTTY?: boolean; setRawMode?: (on: boolean) => unknown };
  output: NodeJS.WritableStream;
}

export class PromptCancelled extends Error {
  constructor(why: string) {
    super(why);
    this.name = 'PromptCancelled';
  }
}

let queue: Promise<unknown> = Promise.resolve();
function oneAtATime<T>(fn: () => Promise<T>): Promise<T> {
  // A progress display on the same terminal stands aside while the question is open.
  const ask = () => withoutProgress(fn);
  const run = queue.then(ask, ask);
  queue = run.catch((err: unknown) => log.debug('prompt ended without an answer (the caller gets why)', { err }));
  return run;
}

/**
 * Reads one line from a TTY in raw mode; `echo: false` shows nothing of what is typed.
 * Enter ends it; Ctrl-C or Ctrl-D (on an empty line) cancel; Backspace and Ctrl-U edit.
 */
export function readLine(question: string, opts: { echo: boolean }, io: PromptStreams): Promise<string> {
  return oneAtATime(
    () =>
      new Promise<string>((resolve, reject) => {
        const { input, output } = io;
        if (!input.isTTY || typeof input.setRawMode !== 'function') {
          reject(new PromptCancelled('no terminal to ask on'));
          return;
        }
        let value = '';
        const finish = (err?: Error) => {
          input.removeListener('data', onData);
          input.setRawMode!(false);
          input.pause();
          output.write('\n');
          if (err) reject(err);
          else resolve(value);
          value = '';
        };
        const onData = (chunk: Buffer | string) => {
          for (const ch of chunk.toString('utf8')) {
            if (ch === '\r' || ch === '\n') return finish();
            if (ch === '\u0003') return finish(new PromptCancelled('cancelled at the prompt'));
            if (ch === '\u0004') {
              if (value === '') return finish(new PromptCancelled('cancelled at the prompt'));
              continue;
            }
            if (ch === '\u007f' || ch === '\b') {
              if (value) {
                value = [...value].slice(0, -1).join('');
                if (opts.echo) output.write('\b \b');
              }
              continue;
            }
            if (ch === '\u0015') {
              if (opts.echo) output.write('\b \b'.repeat([...value].length));
              value = '';
              continue;
            }
            if (ch < ' ') continue; // other control characters
            value += ch;
            if (opts.echo) output.write(ch);
          }
        };
        output.write(question);
        input.setRawMode(true);
        input.on('data', onData);
        input.resume();
      }),
  );
}

/** The CLI's CredentialsProvider: asks on the terminal (stdin/stderr), without echo. */
export function ttyCredentials(io: PromptStreams = { input: process.stdin, output: process.stderr }): CredentialsProvider {
  return {
    passphrase: (keyPath) => readLine(`Passphrase for ${keyPath}: `, { echo: false }, io),
    password: (user, host) => readLine(`Password for ${user}@${host}: `, { echo: false }, io),
    async keyboardInteractive(prompts: KeyboardInteractivePrompt[], ctx) {
      const answers: string[] = [];
      const header = [ctx.name, ctx.instructions].filter((s) => s && s.trim()).join('\n');
      if (header) io.output.write(`${terminalSafe(header, { keepLines: true })}\n`);
      for (const p of prompts) {
        answers.push(await readLine(`(${ctx.user}@${ctx.host}) ${terminalSafe(p.prompt)}`, { echo: p.echo }, io));
      }
      return answers;
    },
  };
}

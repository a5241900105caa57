// holdfast serve — the Holdfast UI and its API on 127.0.0.1 (src/cli/serve.ts runs the server).
import { Option, type Command } from 'commander';
import { HoldfastError } from '../../core/errors';
import type { Cli } from '../context';
import { helpAfter } from '../help';

/** A port to listen on: 0 is any free one (the OS picks it; serve prints the one it got). */
export function parseListenPort(v: string): number {
  const n = Number(v);
  if (!/^\d{1,5}$/.test(v) || n > 65535) {
    throw new HoldfastError('INVALID_INPUT', `invalid port "${v}"`, { hint: 'Give a port from 1 to 65535, or 0 for any free port.' });
  }
  return n;
}

export function registerServeCommand(program: Command, cli: Cli): void {
  program
    .command('serve')
    .summary('serve the Holdfast UI and its API on 127.0.0.1')
    .description('Serve the Holdfast UI and its API on 127.0.0.1, guarded by a token in the URL it prints. Runs until Ctrl-C.')
    .addOption(new Option('--port <port>', 'port to listen on; 0: any free port (the default)').argParser(parseListenPort))
    .addHelpText(
      'after',
      helpAfter(
        [
          'holdfast serve',
          'holdfast serve --port 0',
          '# A fixed port, for a tunnel from a laptop:',
          '#   ssh -L 8080:127.0.0.1:8080 ops@10.20.0.5   (then open the URL there)',
          'holdfast serve --port 8080',
        ],
        [
          'Open the URL it prints (http://127.0.0.1:PORT/?token=TOKEN): the token in it is the key to the API, new at every start. With --port 0 or no --port, PORT is the one the OS gave.',
          'Only 127.0.0.1 listens, and only requests for 127.0.0.1:PORT or localhost:PORT are answered: through an SSH tunnel, use the same port on both ends.',
        ],
      ),
    )
    .action(async (o) => (await import('../serve')).serveCommand({ port: o.port, out: cli.io.out }));
}

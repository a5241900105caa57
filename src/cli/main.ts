// `holdfast` — the command line on the same core as the app. Each group of commands lives
// in src/cli/commands; this file wires them and maps errors to exit codes.
import { Command, CommanderError, Option } from 'commander';
import { HoldfastError, toErrorInfo } from '../core/errors';
import { registerFleetCommands } from './commands/fleet';
import { registerInspectCommands } from './commands/inspect';
import { registerLogCommand } from './commands/log';
import { registerNodeCommands } from './commands/node';
import { registerPinCommands } from './commands/pins';
import { registerTransferCommands } from './commands/transfer';
import { createCli, defaultIo, parsePort, type Io } from './context';
import { EXIT, exitCodeFor } from './exit';
import { catchCliCrashes, startCliLog } from './logging';
import { terminalSafe } from './format';
import { serveCommand } from './serve';

export function buildProgram(io: Io = defaultIo): Command {
  const program = new Command('holdfast')
    .description('Durable image pins and safe air-gap imports for k3s nodes, over SSH.')
    .version('0.1.0')
    .showHelpAfterError('(run with --help for usage)')
    .configureOutput({ writeOut: (s) => io.out(s.trimEnd()), writeErr: (s) => io.err(s.trimEnd()) })
    .exitOverride()
    .option('--verbose', 'log what Holdfast does to stderr (as HOLDFAST_LOG=debug; secrets never logged)')
    // Before any command runs: its connections, retries and skipped errors are what --verbose shows.
    .hook('preAction', (self) => startCliLog({ verbose: self.opts().verbose === true, err: io.err }));
  const cli = createCli(io);
  registerNodeCommands(program, cli);
  registerInspectCommands(program, cli);
  registerFleetCommands(program, cli);
  registerPinCommands(program, cli);
  registerTransferCommands(program, cli);
  registerLogCommand(program, cli);

  program
    .command('serve')
    .description('serve the Holdfast UI and its API on 127.0.0.1 (token-guarded)')
    .addOption(new Option('--port <port>', 'port (default: any free port)').argParser(parsePort))
    .action(async (o) => serveCommand({ port: o.port, out: io.out }));

  return program;
}

export async function main(argv: string[], io: Io = defaultIo): Promise<number> {
  // The real process (bin/holdfast.mjs) only: a test that passes its own io keeps its runner's handlers.
  if (io === defaultIo) catchCliCrashes(io.err);
  const program = buildProgram(io);
  try {
    await program.parseAsync(argv);
    return EXIT.OK;
  } catch (e) {
    if (e instanceof CommanderError) {
      if (e.code === 'commander.helpDisplayed' || e.code === 'commander.version' || e.code === 'commander.help') return EXIT.OK;
      return EXIT.USAGE;
    }
    const info = toErrorInfo(e);
    let line = `holdfast: ${info.message}`;
    if (info.hint) line += ` — ${info.hint}`;
    // One line, whatever the message quotes (a node's file name, its stderr): nothing a terminal acts on.
    io.err(terminalSafe(line));
    return info.code === 'INTERNAL' && !(e instanceof HoldfastError) ? EXIT.FAILURE : exitCodeFor(info.code);
  }
}

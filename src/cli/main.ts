// `holdfast` — the command line on the same service as the app: commands call its operations
// in process (src/cli/service.ts, the handlers Electron main and `holdfast serve` run) and keep
// the presentation. Each group of commands lives in src/cli/commands; this file wires them and
// maps errors to exit codes.
//
// Start-up time matters (technicians run one command at a time, often in loops), so only the
// group of the command being run is imported, and the groups import the core that reaches a
// node (ssh2, grpc-js, protobufjs, archive readers) only inside their actions: `--help`, a typo
// or `node ls` never load it.
import { Command, CommanderError, Option } from 'commander';
import { HoldfastError, toErrorInfo } from '../core/errors';
import { createCli, defaultIo, parsePort, type Cli, type Io } from './context';
import { EXIT, exitCodeFor } from './exit';
import { endQuietlyOnClosedPipe } from './closedPipe';
import { catchCliCrashes, startCliLog } from './logging';
import { terminalSafe } from './format';

type Register = (program: Command, cli: Cli) => void;

function registerServe(program: Command, cli: Cli): void {
  program
    .command('serve')
    .description('serve the Holdfast UI and its API on 127.0.0.1 (token-guarded)')
    .addOption(new Option('--port <port>', 'port (default: any free port)').argParser(parsePort))
    .action(async (o) => (await import('./serve')).serveCommand({ port: o.port, out: cli.io.out }));
}

/**
 * Every group with the top-level commands it registers, in the order help lists them. The
 * names only pick what to import: a name missing here still works (every group is loaded then),
 * and test/unit/cli/groups.test.ts checks the names against what each group registers.
 */
export const COMMAND_GROUPS: readonly { commands: readonly string[]; load: () => Promise<Register> }[] = [
  { commands: ['node'], load: async () => (await import('./commands/node')).registerNodeCommands },
  { commands: ['images', 'archives'], load: async () => (await import('./commands/inspect')).registerInspectCommands },
  { commands: ['inspect'], load: async () => (await import('./commands/fleet')).registerFleetCommands },
  { commands: ['pin', 'unpin', 'rm-archive'], load: async () => (await import('./commands/pins')).registerPinCommands },
  { commands: ['disk', 'prune'], load: async () => (await import('./commands/disk')).registerDiskCommands },
  { commands: ['upload', 'import'], load: async () => (await import('./commands/transfer')).registerTransferCommands },
  { commands: ['log'], load: async () => (await import('./commands/log')).registerLogCommand },
  { commands: ['serve'], load: async () => registerServe },
];

/** The top-level command argv names (`holdfast help X` names X), or null for none. */
export function commandNamed(args: readonly string[]): string | null {
  // The program itself has no option taking a value, so the first non-option is the command.
  const i = args.findIndex((a) => !a.startsWith('-'));
  if (i < 0) return null;
  return args[i] === 'help' ? (args.slice(i + 1).find((a) => !a.startsWith('-')) ?? null) : args[i]!;
}

/**
 * The program with the groups `args` (the user's arguments, argv without node and script) need:
 * the named command's group, or every group (for help, or a name no group claims).
 */
export async function buildProgram(io: Io = defaultIo, args?: readonly string[], cli: Cli = createCli(io)): Promise<Command> {
  const program = new Command('holdfast')
    .description('Durable image pins and safe air-gap imports for k3s nodes, over SSH.')
    .version('0.1.0')
    .showHelpAfterError('(run with --help for usage)')
    .configureOutput({ writeOut: (s) => io.out(s.trimEnd()), writeErr: (s) => io.err(s.trimEnd()) })
    .exitOverride()
    .option('--verbose', 'log what Holdfast does to stderr (as HOLDFAST_LOG=debug; secrets never logged)')
    // Before any command runs: its connections, retries and skipped errors are what --verbose shows.
    .hook('preAction', (self) => startCliLog({ verbose: self.opts().verbose === true, err: io.err }));
  const named = args ? commandNamed(args) : null;
  const one = named ? COMMAND_GROUPS.find((g) => g.commands.includes(named)) : undefined;
  for (const register of await Promise.all((one ? [one] : COMMAND_GROUPS).map((g) => g.load()))) register(program, cli);
  return program;
}

export async function main(argv: string[], io: Io = defaultIo): Promise<number> {
  // The real process (bin/holdfast.mjs) only: a test that passes its own io keeps its runner's handlers.
  if (io === defaultIo) {
    catchCliCrashes(io.err);
    endQuietlyOnClosedPipe();
  }
  const cli = createCli(io);
  try {
    const program = await buildProgram(io, argv.slice(2), cli);
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
  } finally {
    // The sessions the service opened for this command (none if it called no operation).
    await cli.close();
  }
}

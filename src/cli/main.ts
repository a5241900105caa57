// `holdfast` — the command line on the same service as the app: commands call its operations
// in process (src/cli/service.ts) and keep the presentation. Each top-level command lives in
// src/cli/commands/NAME.ts; this file wires them and maps errors to exit codes. Start-up time
// matters (technicians run one command at a time, often in loops), so only the file of the
// command being run is imported, and the commands import the core that reaches a node (ssh2,
// grpc-js, protobufjs, archive readers) only inside their actions: `--help`, a typo or `node ls`
// never load it.
import { Command, CommanderError, Option } from 'commander';
import { HoldfastError, toErrorInfo } from '../core/errors';
import { createCli, defaultIo, type Cli, type Io } from './context';
import { EXIT, exitCodeFor, failWhenUnsettled } from './exit';
import { endQuietlyOnClosedPipe } from './closedPipe';
import { catchCliCrashes, startCliLog } from './logging';
import { terminalSafe } from './format';
import { wrapLine } from './fit';
import { HELP_CONFIG, helpAfter } from './help';
import { savedNodeHint } from './accessText';
import { OUTPUT_FORMATS, outputFormat, type OutputFormat } from './output';

type Register = (program: Command, cli: Cli) => void;

/**
 * Every top-level command with the file that registers it (src/cli/commands/NAME.ts), in the
 * order help lists them. The names only pick what to import: a name missing here still works
 * (every file is loaded then), and test/unit/cli/groups.test.ts checks each name against what its
 * file registers.
 */
export const COMMANDS: readonly { name: string; load: () => Promise<Register> }[] = [
  { name: 'node', load: async () => (await import('./commands/node')).registerNodeCommands },
  { name: 'images', load: async () => (await import('./commands/images')).registerImagesCommand },
  { name: 'archives', load: async () => (await import('./commands/archives')).registerArchivesCommand },
  { name: 'explain', load: async () => (await import('./commands/explain')).registerExplainCommand },
  { name: 'inspect', load: async () => (await import('./commands/inspect')).registerInspectCommand },
  { name: 'metrics', load: async () => (await import('./commands/metrics')).registerMetricsCommand },
  { name: 'guard', load: async () => (await import('./commands/guard')).registerGuardCommand },
  { name: 'pinset', load: async () => (await import('./commands/pinset')).registerPinsetCommand },
  { name: 'policy', load: async () => (await import('./commands/policy')).registerPolicyCommand },
  { name: 'pin', load: async () => (await import('./commands/pin')).registerPinCommand },
  { name: 'unpin', load: async () => (await import('./commands/unpin')).registerUnpinCommand },
  { name: 'rm-archive', load: async () => (await import('./commands/rm-archive')).registerRmArchiveCommand },
  { name: 'disk', load: async () => (await import('./commands/disk')).registerDiskCommand },
  { name: 'prune', load: async () => (await import('./commands/prune')).registerPruneCommand },
  { name: 'upload', load: async () => (await import('./commands/upload')).registerUploadCommand },
  { name: 'import', load: async () => (await import('./commands/import')).registerImportCommand },
  { name: 'verify', load: async () => (await import('./commands/verify')).registerVerifyCommand },
  { name: 'log', load: async () => (await import('./commands/log')).registerLogCommand },
  { name: 'serve', load: async () => (await import('./commands/serve')).registerServeCommand },
];

/** The top-level command argv names (`holdfast help X` names X), or null for none. */
export function commandNamed(args: readonly string[]): string | null {
  // The program's one option taking a value is -o/--output: the first other non-option is the command.
  const i = args.findIndex((a, k) => !a.startsWith('-') && (k === 0 || (args[k - 1] !== '-o' && args[k - 1] !== '--output')));
  if (i < 0) return null;
  return args[i] === 'help' ? (args.slice(i + 1).find((a) => !a.startsWith('-')) ?? null) : args[i]!;
}

/**
 * The program with the commands `args` (the user's arguments, argv without node and script) need:
 * the named one, or every one (for help, or a name no command has).
 */
export async function buildProgram(io: Io = defaultIo, args?: readonly string[], cli: Cli = createCli(io)): Promise<Command> {
  const program = new Command('holdfast')
    .description('Durable image pins and safe air-gap imports for k3s and RKE2 nodes, over SSH.')
    .version('0.1.0')
    .showHelpAfterError('(run with --help for usage)')
    .configureOutput({ writeOut: (s) => io.out(s.trimEnd()), writeErr: (s) => io.err(s.trimEnd()) })
    .exitOverride()
    .configureHelp(HELP_CONFIG)
    .option('--verbose', 'log what Holdfast does to stderr (no secrets)')
    // Notes below: on a terminal only (a pipe or file always gets them whole).
    .addOption(new Option('-o, --output <format>', 'how results print: wide is --wide, json is --json').choices(OUTPUT_FORMATS))
    .option('--wide', 'print tables whole, not fitted to the terminal (-o wide)')
    .addHelpText(
      'after',
      helpAfter(
        [
          '# Add a node, see what is at risk everywhere, make the needed images durable',
          'holdfast node add lab1-n1 --host 127.0.0.1 --port 2201 \\',
          '  --identity /tmp/hf-lab/id_ed25519 --known-hosts /tmp/hf-lab/known_hosts',
          'holdfast inspect',
          'holdfast pin lab1-n1 --needed',
          '# Bring an air-gap archive to two nodes, pin what it brings, remove it',
          'holdfast import lab1-n1 lab1-n2 ./nginx-1.27.tar.zst --pin --remove-archive',
          'holdfast help pin',
        ],
        [
          '--verbose and -o work with every command (holdfast images lab1-n1 -o wide). --verbose logs as HOLDFAST_LOG=debug does; secrets are never logged. -o wide (--wide) matters on a terminal only: a pipe or a file always gets tables and lines whole. -o json (--json) works on the commands whose help lists --json.',
          'Exit codes: 0 done, 1 failed, 2 usage error, 3 refused by a safety check (unknown or changed host key, an archive not safe to remove).',
        ],
      ),
    )
    // Before any command runs: its connections, retries and skipped errors are what --verbose shows.
    .hook('preAction', (self, command) => {
      startCliLog({ verbose: self.opts().verbose === true, err: io.err });
      // The output, decided once (src/cli/output.ts); tables and lines fit the terminal unless wide (src/cli/screen.ts).
      cli.output = outputOf(self, command);
    });
  const named = args ? commandNamed(args) : null;
  const one = named ? COMMANDS.find((c) => c.name === named) : undefined;
  for (const register of await Promise.all((one ? [one] : COMMANDS).map((c) => c.load()))) register(program, cli);
  return program;
}

/** The output the flags ask for; a usage error (exit 2) for flags that disagree or JSON a command lacks. */
function outputOf(program: Command, command: Command): OutputFormat {
  const { output, wide } = program.opts<{ output?: OutputFormat; wide?: boolean }>();
  const hasJson = command.options.some((o) => o.long === '--json');
  const asked = outputFormat({ output, wide, json: hasJson && command.opts<{ json?: boolean }>().json === true });
  if ('error' in asked) command.error(`error: ${asked.error}`, { exitCode: EXIT.USAGE, code: 'holdfast.output' });
  if (asked.format === 'json' && !hasJson) command.error(`error: ${command.name()} has no JSON output (-o json): its output is for people`, { exitCode: EXIT.USAGE, code: 'holdfast.output' });
  return asked.format;
}

let guarded = false;
let running = 0;

export async function main(argv: string[], io: Io = defaultIo): Promise<number> {
  // The real process (bin/holdfast.mjs) only: a test that passes its own io keeps its runner's handlers.
  if (io === defaultIo) {
    catchCliCrashes(io.err);
    endQuietlyOnClosedPipe();
    // Never exit 0 with a command still under way (its work waiting on nothing).
    if (!guarded) failWhenUnsettled(() => running > 0, io.err);
    guarded = true;
  }
  running++;
  try {
    return await runCommand(argv, io);
  } finally {
    running--;
  }
}

async function runCommand(argv: string[], io: Io): Promise<number> {
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
    // A remedy the node's refusal carries as data, worded as the command that works from here.
    const hint = savedNodeHint(info);
    if (hint) line += ` — ${hint}`;
    // One line, whatever the message quotes (a node's file name, its stderr): nothing a terminal
    // acts on. On a terminal (not --wide) it wraps to its width; a log keeps it on one line.
    const width = cli.wide ? null : (io.errColumns?.() ?? null);
    io.err(width === null ? terminalSafe(line) : wrapLine(terminalSafe(line), width));
    // Item by item (a refused archive's images): a line each, as safe as the message.
    for (const d of info.details ?? []) io.err(terminalSafe(`  ${d}`));
    return info.code === 'INTERNAL' && !(e instanceof HoldfastError) ? EXIT.FAILURE : exitCodeFor(info.code);
  } finally {
    // The sessions the service opened for this command (none if it called no operation).
    await cli.close();
  }
}

// One output path (#47, kubectl's `-o`): the format is decided once, before a command runs, from
// `-o table|wide|json` or its aliases `--wide` and `--json`; flags that disagree are a usage error.
// A command hands its result here: JSON is printed the same way for every command (2-space,
// stdout only; the sink ends the line), a table by the command's own printer.

/** Where JSON goes: stdout (context.ts's Io; declared here so that context can import this module). */
interface Stdout {
  out: (s: string) => void;
}

export const OUTPUT_FORMATS = ['table', 'wide', 'json'] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

/** What every command's --json says in its help. */
export const JSON_HELP = 'the result as JSON on stdout (same as -o json)';

/** The output flags as commander parsed them: the program's -o and --wide, the command's --json. */
export interface OutputFlags {
  output?: OutputFormat | undefined;
  wide?: boolean | undefined;
  json?: boolean | undefined;
}

/** The format the flags ask for (table when none), or the usage error for flags that disagree. */
export function outputFormat(f: OutputFlags): { format: OutputFormat } | { error: string } {
  const asked: [flag: string, format: OutputFormat][] = [];
  if (f.output !== undefined) asked.push([`-o ${f.output}`, f.output]);
  if (f.wide === true) asked.push(['--wide', 'wide']);
  if (f.json === true) asked.push(['--json', 'json']);
  const formats = new Set(asked.map(([, format]) => format));
  if (formats.size > 1) return { error: `${asked.map(([flag]) => flag).join(' and ')} ask for different output: give one of -o ${OUTPUT_FORMATS.join('|')}` };
  return { format: [...formats][0] ?? 'table' };
}

/** The JSON every command prints: stable, 2-space indented, on stdout. */
export function printJson(io: Stdout, result: unknown): void {
  io.out(JSON.stringify(result, null, 2));
}

/**
 * Prints `result` as JSON if that is the output asked for, and says whether it did (a command
 * then prints nothing else on stdout; its table printer runs otherwise).
 */
export function printedAsJson(cli: { io: Stdout; output: OutputFormat }, result: unknown): boolean {
  if (cli.output !== 'json') return false;
  printJson(cli.io, result);
  return true;
}

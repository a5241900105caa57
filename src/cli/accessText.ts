// How to get into a node that refused Holdfast (shared/remedy AccessRemedy), worded as the
// command that works where the error is read. Core hands the data, never the command: a node not
// saved yet (node add) has nothing for node edit to change, and `images` takes no host key flag.
import type { Command } from 'commander';
import type { ErrorInfo } from '../shared/domain/errors';
import type { NodeDef } from '../shared/domain/nodes';
import type { AccessRemedy } from '../shared/remedy';
import { commandLine } from './commandLine';
import { errorHint, remedyCommand } from './remedyText';

const ACCEPT_FLAG = '--accept-new-host-key';

/** The hint of an error read after any command on saved nodes: its access remedy as a node edit, else its remedy (./remedyText). */
export function savedNodeHint(info: Pick<ErrorInfo, 'hint' | 'access' | 'remedy'>): string | undefined {
  const a = info.access;
  if (a?.action === 'trust-host-key') return `${info.hint ?? ''} To trust it: ${remedyCommand(a)}`.trim();
  if (a?.action === 'sudo') return `${info.hint ?? ''} To use sudo: ${remedyCommand(a)}`.trim();
  return errorHint(info);
}

/**
 * The arguments a subcommand (`node add`) was given, in order: its path, its operands, then each
 * option set on the command line (not a default) as its flag and value. --accept-new-host-key
 * (a list of fingerprints, or bare: ask) is written as it is taken.
 */
export function givenArgs(cmd: Command): string[] {
  const out = [...(cmd.parent?.parent ? [cmd.parent.name()] : []), cmd.name(), ...cmd.args];
  const done = new Set<string>();
  for (const o of cmd.options) {
    const key = o.attributeName();
    if (done.has(key) || cmd.getOptionValueSource(key) !== 'cli') continue;
    const v: unknown = cmd.getOptionValue(key);
    if (key === 'acceptNewHostKey' && typeof v === 'object' && v !== null && 'fingerprints' in v) {
      const acc = v as { ask: boolean; fingerprints: string[] }; // hostKeys.ts HostKeyAcceptance
      out.push(...acc.fingerprints.map((fp) => `${ACCEPT_FLAG}=${fp}`), ...(acc.ask ? [ACCEPT_FLAG] : []));
    } else if (typeof v === 'boolean') {
      // --sudo and --no-sudo set the same value: the flag that says this one.
      const flag = cmd.options.find((x) => x.attributeName() === key && x.negate === !v && !x.required && !x.optional);
      if (flag) out.push(flag.long!);
    } else if (typeof v === 'string' || typeof v === 'number') {
      out.push(o.negate ? cmd.options.find((x) => x.attributeName() === key && !x.negate)!.long! : o.long!, String(v));
    } else continue;
    done.add(key);
  }
  return out;
}

/**
 * The hint of an error met by node add or node edit while they check `def` (not saved yet, or
 * saved otherwise): the same command again with the flag it lacks. `argv`: the arguments the
 * command was given (givenArgs).
 */
export function checkHint(info: Pick<ErrorInfo, 'hint' | 'access' | 'remedy'>, def: Pick<NodeDef, 'name'>, argv: readonly string[]): string | undefined {
  const a: AccessRemedy | undefined = info.access;
  if (a?.action === 'trust-host-key') {
    // A jump host of the chain: one flag per new host, the node's own and each hop's.
    const hop = a.node === def.name ? '' : ` for ${a.node} (one such flag per new host of the chain; repeat the flag)`;
    return `${info.hint ?? ''} To trust it, re-run with ${ACCEPT_FLAG}=${a.fingerprint}${hop}.`.trim();
  }
  if (a?.action === 'sudo' && a.node === def.name) {
    return `${info.hint ?? ''} To use sudo: ${commandLine([...argv.filter((a) => a !== '--no-sudo' && a !== '--sudo'), '--sudo'])}`.trim();
  }
  return errorHint(info);
}

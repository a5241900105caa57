// Help for people at a terminal: every command's help ends with examples to copy (and notes
// where an option needs more than a short clause), and fits HELP_WIDTH columns, the width
// commander wraps to when help is piped. Commander wraps its own columns; the examples and notes
// block is ours, so it is wrapped here (notes) or written short (examples: test/unit/cli/help.test.ts).
import { Help, Option, type Command } from 'commander';

export const HELP_WIDTH = 80;

const INDENT = '  ';

/**
 * How holdfast's help differs from commander's; configured on the program, so every command
 * registered under it inherits it.
 */
export const HELP_CONFIG = {
  // --verbose and --wide are the program's, taken after any command too: each command's help says
  // so (not --version, which is the program's alone).
  showGlobalOptions: true,
  visibleGlobalOptions(this: Help, cmd: Command): Option[] {
    return Help.prototype.visibleGlobalOptions.call(this, cmd).filter((o) => o.long !== '--version');
  },
  // "[options]" in a list of commands only widens the column (most commands have some); each
  // command's own usage line still shows it.
  subcommandTerm(this: Help, cmd: Command): string {
    return Help.prototype.subcommandTerm.call(this, cmd).replace(' [options]', '');
  },
  // A preset is how a bare optional-value flag parses (--accept-new-host-key passes '' to its
  // parser, src/cli/hostKeys.ts), not a value anyone types: `(preset: "")` would only puzzle.
  optionDescription(this: Help, option: Option): string {
    if (option.presetArg === undefined) return Help.prototype.optionDescription.call(this, option);
    const shown: Option = Object.assign(Object.create(Option.prototype), option, { presetArg: undefined });
    return Help.prototype.optionDescription.call(this, shown);
  },
} satisfies Partial<Help>;

/** The note of every command whose output a terminal gets fitted (src/cli/screen.ts). */
export const FITTED_NOTE =
  'On a terminal, tables fit its width and each reason is one short clause: --why gives every reason in full, --wide (any command) the tables whole, `holdfast explain NODE REF` all about one reference. A pipe or a file gets everything whole.';

/**
 * The text after a command's help: `Examples:` (a line starting with `#` says what the next
 * ones do; the others are commands, continued with ` \` rather than running past the width),
 * then `Notes:`, one bullet per paragraph, wrapped to the width.
 */
export function helpAfter(examples: readonly string[], notes: readonly string[] = []): string {
  const out = ['', 'Examples:', ...examples.map((e) => INDENT + e)];
  if (notes.length) {
    const wrap = new Help();
    out.push('', 'Notes:');
    // "  - " then the paragraph, its next lines under its first word.
    for (const n of notes) out.push(wrap.boxWrap(n, HELP_WIDTH - 2 * INDENT.length).replace(/\n/g, `\n${INDENT}${INDENT}`).replace(/^/, `${INDENT}- `));
  }
  return out.join('\n');
}

// Core's sentences are written for both the terminal and the app, and name CLI commands
// ("make its pins durable first (holdfast pin edge-01 --archive apps.tar.gz)"). In the app a
// command line is no help: this says what to click instead, or leaves the command out.
import type { ArchiveRemedy } from '../shared/archiveRemedy';

// A parenthesised CLI command, "(holdfast …)". Its words are quoted by shared/shellQuote
// ('…', and ' written as '\''), so a quoted word may hold parentheses of its own.
const CLI_COMMAND = /\s*\((?:run\s+)?holdfast (?:'[^']*'|\\'|[^()'\\])*\)/g;

/**
 * `text` for the app: the remedy's command becomes `click` (what to press, e.g. "use Make durable
 * on this row"); any other quoted holdfast command is left out.
 */
export function appText(text: string, remedy?: ArchiveRemedy, click?: string): string {
  let out = text;
  if (remedy) out = out.split(` (${remedy.command})`).join(click ? ` — ${click}` : '');
  return out.replace(CLI_COMMAND, '');
}

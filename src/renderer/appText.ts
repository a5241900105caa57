// A remedy as the app says it (shared/remedy): what to click, never a command line. Core's
// archive reasons quote their remedy's command for the terminal ("make its pins durable first
// (holdfast pin edge-01 --archive apps.tar.gz)"); the app says what to press instead, found by
// the remedy's data, not by reading the sentence for commands.
import { pinArchiveCommand } from '../shared/archiveRemedy';
import type { ArchiveRemedy } from '../shared/remedy';

/** `text` for the app: the remedy's quoted command becomes `click` (e.g. "use Make durable on this row"). */
export function appText(text: string, remedy: ArchiveRemedy | undefined, click: string): string {
  if (!remedy) return text;
  return text.split(` (${pinArchiveCommand(remedy.node, remedy.archive)})`).join(` — ${click}`);
}

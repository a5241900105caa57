// What the import wizard says of the signature check (#48): each image's verdict in the one
// plain-words sentence (shared/signatures), and why Next waits. The rule that decides whether an
// import may go on is shared's checkAllowsImport; this only reads it for the wizard.
import { checkAllowsImport, isRefused, outcomeRecord, signatureSentence, type CheckedImage } from '../../shared/signatures';
import { plural } from '../../shared/wording';
import type { DraftArchive, WizardSignatures } from '../store/types';
import { basename } from './paths';

/** An image's verdict as every view words it ("signed by key 3f1c2a4b…, verified …", "not verified: …"). */
export const verdictSentence = (i: CheckedImage): string => signatureSentence(outcomeRecord(i.verdict));

/** The label the wizard's checkbox and messages use (one wording, asserted by the tests). */
export const ALLOW_UNSIGNED_LABEL = 'Import unsigned images too, marked not verified';

/** Why Next waits for the signatures, or null when it may go on (no key: nothing is verified). */
export function signaturesBlocked(archives: readonly DraftArchive[], s: WizardSignatures): string | null {
  if (s.keys.length === 0) return null;
  if (s.checking) return 'Checking signatures…';
  const ready = archives.filter((a) => a.state === 'ok');
  let refused = 0;
  for (const a of ready) {
    const c = s.checks[a.path];
    if (!c) return 'Check the signatures to go on.';
    if (!c.ok) return `The signatures of ${basename(a.path)} could not be checked.`;
    if (!checkAllowsImport(c.check, s.allowUnsigned)) refused += c.check.images.filter(isRefused).length;
  }
  if (refused === 0) return null;
  return `${plural(refused, 'image')} ${refused === 1 ? 'is' : 'are'} refused: the import would be refused too. Remove the archive, add the right key, or tick “${ALLOW_UNSIGNED_LABEL}”.`;
}

// `holdfast explain NODE REF` says what Holdfast verified of the reference's signature (#48): one
// line in shared/signatures' words (signatureSentence), and the record in its JSON.
import { describe, expect, it } from 'vitest';
import { explainInWords, explainText } from '../../../../src/cli/commands/explain';
import { Screen } from '../../../../src/cli/screen';
import type { ImageRef } from '../../../../src/shared/domain/images';
import { explainReference } from '../../../../src/shared/explain';
import type { NeedsReport } from '../../../../src/shared/needs';
import type { SignatureRecord } from '../../../../src/shared/signatures';
import { imageRef } from '../../../support/imageRef';

const NEEDS: NeedsReport = { basis: 'provenance', sources: [], noSource: 'no kubectl', notes: [], missing: [], atRisk: 0 };
const FP = '3f1c2a4b'.padEnd(64, '0');
const SIGNED: SignatureRecord = { verified: true, by: FP, format: 'bundle', at: '2026-12-08T10:00:00Z' };
const REFUSED: SignatureRecord = { verified: false, reason: 'no signature', at: '2026-12-09T00:00:00Z' };

const explained = (signature: ImageRef['signature']) => {
  const refs = [imageRef('registry.local/app:1', { labels: { 'io.cri-containerd.pinned': 'pinned' }, pin: 'durable', afterRestart: 'pinned', signature })];
  return explainReference({ node: 'n1', ref: 'registry.local/app:1', images: refs, needs: NEEDS, lost: [], archives: [], mode: 'any' })!;
};

/** The lines of the text that start with `label`. */
const line = (text: string, label: string) => text.split('\n').filter((l) => l.startsWith(label));

describe('explain: the signature verdict', () => {
  it.each([
    [SIGNED, 'signed by key 3f1c2a4b…, verified 2026-12-08'],
    [REFUSED, 'not verified: no signature (2026-12-09)'],
    [null, 'never verified'],
    [undefined, 'never verified'],
  ])('%j: one line, in the shared words', (signature, sentence) => {
    expect(line(explainText(explained(signature), Screen.plain), 'Signature')).toEqual([`Signature      ${sentence}`]);
  });

  it('the JSON carries the record (null when never verified)', () => {
    expect(JSON.parse(JSON.stringify(explainInWords(explained(SIGNED)))).image.signature).toEqual(SIGNED);
    expect(JSON.parse(JSON.stringify(explainInWords(explained(undefined)))).image.signature).toBeNull();
  });
});

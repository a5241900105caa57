// withRemedyHint (src/cli/transferJob.ts): a failed import node's remedy worded as its error's hint.
import { describe, expect, it } from 'vitest';
import { remedyText } from '../../../src/cli/remedyText';
import { withRemedyHint } from '../../../src/cli/transferJob';
import { HoldfastError } from '../../../src/core/errors';
import type { RemedyOf } from '../../../src/shared/remedy';

const remedy: RemedyOf<'k3s-start-or-direct'> = { action: 'k3s-start-or-direct', node: 'n1', archive: "site's app.tar", distro: 'rke2' };

describe('withRemedyHint', () => {
  it('becomes the hint of an error that carries it; an error without one stays as it is', () => {
    const e = new HoldfastError('TIMEOUT', 'RKE2 will not import it', { hint: 'core words', remedy });
    const worded = withRemedyHint(e, '/tmp/app.tar');
    expect(worded.hint).toBe(remedyText(remedy, '/tmp/app.tar'));
    expect(worded.toInfo()).toMatchObject({ code: 'TIMEOUT', message: 'RKE2 will not import it', remedy });
    const plain = new HoldfastError('TIMEOUT', 'k3s did not import it', { hint: 'run the import again' });
    expect(withRemedyHint(plain, '/tmp/app.tar')).toBe(plain);
  });
});

// cli/remedyText: core's remedy data worded as the commands that help (issue #49, item 3).
import { describe, expect, it } from 'vitest';
import { remedyText, withRemedyHint } from '../../../src/cli/remedyText';
import { HoldfastError } from '../../../src/core/errors';
import type { ErrorRemedy } from '../../../src/shared/domain/errors';

const remedy: ErrorRemedy = { kind: 'k3s-start-or-direct', node: 'n1', archive: "site's app.tar", distro: 'rke2' };

describe('remedyText', () => {
  it('names the distro start and the direct delivery, every path quoted', () => {
    expect(remedyText(remedy, "/tmp/it's here/app.tar")).toBe(
      "restart RKE2 on n1, whose start imports site's app.tar, then run this import again; or, without RKE2: holdfast import n1 '/tmp/it'\\''s here/app.tar' --direct, then holdfast rm-archive n1 'site'\\''s app.tar'",
    );
  });

  it('becomes the hint of an error that carries it; an error without one stays as it is', () => {
    const e = new HoldfastError('TIMEOUT', 'RKE2 will not import it', { hint: 'core words', remedy });
    const worded = withRemedyHint(e, '/tmp/app.tar');
    expect(worded.hint).toBe(remedyText(remedy, '/tmp/app.tar'));
    expect(worded.toInfo()).toMatchObject({ code: 'TIMEOUT', message: 'RKE2 will not import it', remedy });
    const plain = new HoldfastError('TIMEOUT', 'k3s did not import it', { hint: 'run the import again' });
    expect(withRemedyHint(plain, '/tmp/app.tar')).toBe(plain);
  });
});
